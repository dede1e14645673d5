package io.kvtier.engine.core;

/**
 * What the parts ask of the tiers' I/O ({@link TierIo}, its owner): queue a page or a key for a tier,
 * name objects in L3, and which tiers are in service. Their answers come back through the conductor
 * ({@link TierIo.Completions}), never to the part that asked. Engine thread only.
 */
interface TierQueue
{
    /** @return one bit per tier in service, bit {@code t} for tier {@code t} (as the index's tier bits) */
    int inServiceMask();

    /**
     * @param tier a tier
     * @return whether it takes batches
     */
    boolean inService(int tier);

    /**
     * Queues a page's read or write.
     *
     * @param tier the tier
     * @param op   {@link TierIoBatch#READ} or {@link TierIoBatch#WRITE}
     * @param page the page
     */
    void queuePageIo(int tier, int op, int page);

    /**
     * Queues an exists or remove; skipped, not queued, when no batch is free.
     *
     * @param tier   the tier
     * @param op     {@link TierIoBatch#EXISTS} or {@link TierIoBatch#REMOVE}
     * @param high   the key's high half
     * @param low    its low half
     * @param tag    the namespace tag the object is stored under
     * @param client the asking client's id, or none
     * @param key    the key's index in the client's chain
     * @param seq    the request's sequence, to recognise a stale answer
     * @return whether it was queued
     */
    boolean queueKeyIo(int tier, int op, long high, long low, long tag, int client, int key, int seq);

    /**
     * Names a key's object in L3; read the name with {@link #nameHigh} and {@link #nameLow}.
     *
     * @param tag  the namespace tag
     * @param high the key's high half
     * @param low  its low half
     */
    void name(long tag, long high, long low);

    /** @return the high half of the name {@link #name} made */
    long nameHigh();

    /** @return the low half of the name {@link #name} made */
    long nameLow();

    /**
     * Remembers a key stored in L3 under its name, for tiers that report objects they dropped.
     *
     * @param tag  the namespace tag
     * @param high the key's high half
     * @param low  its low half
     */
    void stored(long tag, long high, long low);

    /**
     * Takes a tier out of service until the engine restarts.
     *
     * @param tier the tier
     * @param why  what it did, for the log
     */
    void takeOutOfService(int tier, String why);
}
