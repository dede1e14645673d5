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

    /**
     * Replays one request: counts the leading run of resident blocks, then accesses every block in order.
     *
     * @param ids      the request's hash ids, first to last
     * @param nextUses each reference's next use (see {@link #access}), or {@code null} for an online policy
     * @param offset   the position of the request's first reference in {@code nextUses}
     * @return the request's hit blocks
     */
    default int replay(final long[] ids, final long[] nextUses, final int offset)
    {
        int hits = 0;
        while (hits < ids.length && contains(ids[hits]))
        {
            hits++;
        }
        for (int i = 0; i < ids.length; i++)
        {
            access(ids[i], nextUses == null ? NEVER : nextUses[offset + i]);
        }
        return hits;
    }

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
