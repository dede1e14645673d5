package io.kvtier.bench.replay;

/**
 * How an offline policy measures when a block is next used.
 */
enum NextUse
{
    /**
     * The index of the next request that contains the block. Blocks wanted by the same later request tie,
     * and ties go least recently used first; as blocks of a prefix are touched first to last, that evicts
     * the earliest block of the prefix, which breaks the later request's leading run. This is how the
     * trace README's Belady column was computed: it reproduces all four figures.
     */
    REQUEST,

    /**
     * The position of the block's next reference in the trace flattened to one block stream. Blocks never
     * tie unless neither is used again, and among blocks wanted by the same request the one deepest in the
     * prefix goes first, which keeps leading runs whole: a higher hit rate than {@link #REQUEST}.
     */
    BLOCK
}
