package io.kvtier.device;

import java.util.ArrayList;
import java.util.List;

/**
 * Turns "copy block {@code b} of the layer-first buffers to the page at {@code pageOffset}" (or the
 * reverse) into the fewest copies that the layout allows.
 *
 * <p>It starts from one slice per layer and tensor (the slot's first {@code validTokens} tokens, at
 * its page-first offset), in page order, and then:
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
 */
public final class CopyPlanner
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
        final KvShape shape = layout.shape();
        layout.checkBlock(block);
        if (validTokens <= 0 || validTokens > shape.blockTokens())
        {
            throw new IllegalArgumentException("validTokens=" + validTokens + " must be within 1..blockTokens=" + shape.blockTokens());
        }
        if (pageOffset < 0)
        {
            throw new IllegalArgumentException("pageOffset=" + pageOffset + " is negative");
        }
        final long width = validTokens * shape.tokenBytes();

        // 1. One run per slot in page order, merging a run into the previous one when both sides continue it.
        final List<long[]> runs = new ArrayList<>(shape.slots());
        for (int l = 0; l < shape.layers(); l++)
        {
            for (int t = 0; t < shape.tensorsPerLayer(); t++)
            {
                final long device = layout.blockAddress(l, t, block);
                final long host = pageOffset + KvPageDescriptor.slotOffset(shape, l, t);
                final long[] last = runs.isEmpty() ? null : runs.getLast();
                if (last != null && last[0] + last[2] == device && last[1] + last[2] == host)
                {
                    last[2] += width;
                }
                else
                {
                    runs.add(new long[] {device, host, width});
                }
            }
        }

        // 2. Fold consecutive equal-width runs with constant pitches into 2D copies.
        final List<CopyOp> ops = new ArrayList<>();
        int i = 0;
        while (i < runs.size())
        {
            final long[] first = runs.get(i);
            int end = i + 1;
            if (end < runs.size())
            {
                final long runWidth = first[2];
                final long devicePitch = runs.get(end)[0] - first[0];
                final long hostPitch = runs.get(end)[1] - first[1];
                if (devicePitch >= runWidth && hostPitch >= runWidth)
                {
                    while (end < runs.size()
                        && runs.get(end)[2] == runWidth
                        && runs.get(end)[0] - runs.get(end - 1)[0] == devicePitch
                        && runs.get(end)[1] - runs.get(end - 1)[1] == hostPitch)
                    {
                        end++;
                    }
                }
                if (end - i > 1)
                {
                    ops.add(new CopyOp(first[0], devicePitch, first[1], hostPitch, runWidth, end - i));
                    i = end;
                    continue;
                }
            }
            ops.add(CopyOp.contiguous(first[0], first[1], first[2]));
            i++;
        }
        return new CopyPlan(direction, ops);
    }
}
