package io.kvtier.bench.replay;

/**
 * Whether an offline policy caches every missed block.
 */
enum Admission
{
    /** Every missed block is inserted, evicting one when the cache is full, as the trace README states. */
    ALWAYS,

    /**
     * When the cache is full and the missed block's next use is no sooner than that of every resident
     * block (in particular, when it is never used again and some resident block is not either), the block
     * is served without being cached and nothing is evicted.
     */
    BYPASS
}
