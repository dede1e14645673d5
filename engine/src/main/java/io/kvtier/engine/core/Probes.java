package io.kvtier.engine.core;

/**
 * What the parts ask of the probes of L3 ({@link Lookups}, their owner). Engine thread only.
 */
interface Probes
{
    /**
     * Probes L3 for the keys in {@code [start, end)} the index knows nothing of.
     *
     * @param r     the request
     * @param start first key
     * @param end   past the last key
     * @return whether it waits for probes (it goes on when they end)
     */
    boolean probeRound(ClientRecord r, int start, int end);

    /**
     * A key is now in L3 under this name: an answer "not found" remembered for it is stale.
     *
     * @param nameHigh the name's high half
     * @param nameLow  its low half
     */
    void copiedToL3(long nameHigh, long nameLow);

    /**
     * A tier may now hold an object the index does not know of (a write whose outcome is unknown, or one the index
     * could not record): lookups probe it again from now on.
     *
     * @param tier the tier's index
     * @param why  what happened, for the log
     */
    void indexMayMiss(int tier, String why);

    /**
     * @param status how a write to a tier ended, not OK
     * @return whether the object may be in the tier all the same: anything but a refusal before the tier took it
     *         (REJECTED, CLOSED) or a tier out of space (NO_SPACE)
     */
    static boolean mayHaveLanded(final io.kvtier.spi.TierStatus status)
    {
        return status != io.kvtier.spi.TierStatus.NO_SPACE && status != io.kvtier.spi.TierStatus.REJECTED
            && status != io.kvtier.spi.TierStatus.CLOSED;
    }
}
