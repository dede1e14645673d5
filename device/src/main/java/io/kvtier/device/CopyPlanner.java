package io.kvtier.device;

/**
 * Turns "copy block {@code b} of the layer-first buffers to the page at {@code pageOffset}" (or the
 * reverse, or many such pairs at once) into the fewest copies that the layout allows.
 *
 * <p>It starts from one slice per block, layer and tensor (the slot's first {@code validTokens}
 * tokens, at its page-first offset), and then:
 * <ol>
 *   <li><b>coalesces</b> neighbours that are contiguous on both sides into one longer run: K and V
 *       of an interleaved layer become one run, and a layout that is already page-first becomes one
 *       copy of the whole page;</li>
 *   <li><b>strides</b> consecutive runs of equal width whose device addresses and page offsets each
 *       advance by a constant pitch into one 2D copy: the slots of a contiguous allocation, or of
 *       per-layer allocations at a regular spacing, become a single {@code cudaMemcpy2DAsync}.</li>
 * </ol>
 * A run joins a 2D copy only when both pitches are at least its width (the CUDA 2D copy takes
 * unsigned pitches), so rows never overlap and destination ranges stay disjoint.
 *
 * <p>For several blocks it tries the slices in two orders, block by block and slot by slot, and keeps
 * the one with fewer copies: slot by slot, consecutive blocks going to evenly spaced pages fold into
 * one 2D copy per slot, which is what a layout of unrelated per-tensor allocations needs.
 *
 * <p>These static methods return immutable plans and allocate; {@link CopyPlanBuilder} does the same
 * planning into reusable {@link CopyOps}, which is how the engine plans without allocating.
 */
final class CopyPlanner
{
    private CopyPlanner()
    {
    }

    /**
     * Plans a whole block.
     *
     * @param layout     the device buffers
     * @param block      the block
     * @param pageOffset the page's offset in the host segment
     * @param direction  which way
     * @return the plan
     */
    public static CopyPlan plan(final LayerFirstLayout layout, final int block, final long pageOffset, final CopyDirection direction)
    {
        return plan(layout, block, layout.shape().blockTokens(), pageOffset, direction);
    }

    /**
     * Plans a block's first {@code validTokens} tokens: the last block of a sequence is often partial,
     * and copying only its filled tokens moves fewer bytes (each slot's tail on the other side is
     * left as it was).
     *
     * @param layout      the device buffers
     * @param block       the block
     * @param validTokens tokens to copy, from the first, 1 to blockTokens
     * @param pageOffset  the page's offset in the host segment
     * @param direction   which way
     * @return the plan
     */
    public static CopyPlan plan(final LayerFirstLayout layout, final int block, final int validTokens, final long pageOffset,
                                final CopyDirection direction)
    {
        return plan(layout, new int[] {block}, new long[] {pageOffset}, validTokens, direction);
    }

    /**
     * Plans a run of blocks, the i-th to or from the page at {@code pageOffsets[i]}, as one plan: a
     * sequence's blocks, of which only the last may be partial.
     *
     * @param layout          the device buffers
     * @param blocks          distinct blocks
     * @param pageOffsets     the pages' offsets in the host segment, one per block, at least a page apart
     * @param lastValidTokens tokens to copy of the last block, 1 to blockTokens; the others are whole
     * @param direction       which way
     * @return the plan
     */
    public static CopyPlan plan(final LayerFirstLayout layout, final int[] blocks, final long[] pageOffsets, final int lastValidTokens,
                                final CopyDirection direction)
    {
        if (blocks.length != pageOffsets.length)
        {
            throw new IllegalArgumentException("blocks.length=" + blocks.length + " and pageOffsets.length=" + pageOffsets.length
                + " must be equal and positive");
        }
        final CopyOps ops = new CopyOps(16).clear(direction);
        new CopyPlanBuilder().append(layout, blocks, pageOffsets, blocks.length, lastValidTokens, ops);
        return ops.toPlan();
    }
}
