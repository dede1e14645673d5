package io.kvtier.bench.replay;

/**
 * The resident set of a replay under one eviction policy. Capacity is in blocks.
 */
interface BlockCache extends AutoCloseable
{
    /** The next use of a block that is never referenced again. */
    long NEVER = Long.MAX_VALUE;

    /**
     * @param hashId a trace hash id
     * @return whether the block is resident; changes no recency
     */
    boolean contains(long hashId);

    /**
     * Touches a resident block or inserts an absent one, evicting one block first if the cache is full.
     *
     * @param hashId  a trace hash id
     * @param nextUse when the block is next referenced, in the policy's {@link NextUse} granularity, or
     *                {@link #NEVER}; online policies ignore it
     */
    void access(long hashId, long nextUse);

    /** @return the number of resident blocks */
    long size();

    /** @return the number of blocks evicted so far */
    long evictions();

    /** @return the most blocks resident at any time */
    long peakSize();

    /** Frees off-heap memory. */
    @Override
    void close();
}
