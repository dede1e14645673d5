package io.kvtier.device;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

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
 */
public final class CopyPlanner
{
    private static final int DEVICE = 0;
    private static final int HOST = 1;
    private static final int WIDTH = 2;

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
        final KvShape shape = layout.shape();
        checkArguments(layout, blocks, pageOffsets, lastValidTokens);
        final long[][] slices = new long[blocks.length * shape.slots()][];
        int n = 0;
        for (int i = 0; i < blocks.length; i++)
        {
            final long width = (i == blocks.length - 1 ? lastValidTokens : shape.blockTokens()) * shape.tokenBytes();
            for (int l = 0; l < shape.layers(); l++)
            {
                for (int t = 0; t < shape.tensorsPerLayer(); t++)
                {
                    slices[n++] = new long[] {layout.blockAddress(l, t, blocks[i]),
                        pageOffsets[i] + KvPageDescriptor.slotOffset(shape, l, t), width};
                }
            }
        }
        final List<CopyOp> byBlock = fold(coalesce(Arrays.asList(slices)));
        if (blocks.length == 1)
        {
            return new CopyPlan(direction, byBlock);
        }
        final List<long[]> slotMajor = new ArrayList<>(slices.length);
        for (int s = 0; s < shape.slots(); s++)
        {
            for (int i = 0; i < blocks.length; i++)
            {
                slotMajor.add(slices[i * shape.slots() + s]);
            }
        }
        final List<CopyOp> bySlot = fold(coalesce(slotMajor));
        return new CopyPlan(direction, bySlot.size() < byBlock.size() ? bySlot : byBlock);
    }

    private static void checkArguments(final LayerFirstLayout layout, final int[] blocks, final long[] pageOffsets, final int lastValidTokens)
    {
        final KvShape shape = layout.shape();
        if (blocks.length == 0 || blocks.length != pageOffsets.length)
        {
            throw new IllegalArgumentException("blocks.length=" + blocks.length + " and pageOffsets.length=" + pageOffsets.length
                + " must be equal and positive");
        }
        if (lastValidTokens <= 0 || lastValidTokens > shape.blockTokens())
        {
            throw new IllegalArgumentException("validTokens=" + lastValidTokens + " must be within 1..blockTokens=" + shape.blockTokens());
        }
        for (final int block : blocks)
        {
            layout.checkBlock(block);
        }
        for (final long pageOffset : pageOffsets)
        {
            if (pageOffset < 0)
            {
                throw new IllegalArgumentException("pageOffset=" + pageOffset + " is negative");
            }
        }
        // Two copies into one block, or two blocks into overlapping pages, would race.
        final int[] sortedBlocks = blocks.clone();
        Arrays.sort(sortedBlocks);
        for (int i = 1; i < sortedBlocks.length; i++)
        {
            if (sortedBlocks[i] == sortedBlocks[i - 1])
            {
                throw new IllegalArgumentException("block=" + sortedBlocks[i] + " appears twice");
            }
        }
        final long[] sortedPages = pageOffsets.clone();
        Arrays.sort(sortedPages);
        for (int i = 1; i < sortedPages.length; i++)
        {
            if (sortedPages[i] - sortedPages[i - 1] < shape.pageBytes())
            {
                throw new IllegalArgumentException("pageOffset=" + sortedPages[i - 1] + " and pageOffset=" + sortedPages[i]
                    + " are closer than pageLength=" + shape.pageBytes());
            }
        }
    }

    /** Merges each slice into the previous run when both sides continue it. */
    private static List<long[]> coalesce(final List<long[]> slices)
    {
        final List<long[]> runs = new ArrayList<>(slices.size());
        for (final long[] slice : slices)
        {
            final long[] last = runs.isEmpty() ? null : runs.getLast();
            if (last != null && last[DEVICE] + last[WIDTH] == slice[DEVICE] && last[HOST] + last[WIDTH] == slice[HOST])
            {
                last[WIDTH] += slice[WIDTH];
            }
            else
            {
                runs.add(slice.clone());
            }
        }
        return runs;
    }

    /** Folds consecutive equal-width runs with constant pitches into 2D copies. */
    private static List<CopyOp> fold(final List<long[]> runs)
    {
        final List<CopyOp> ops = new ArrayList<>();
        int i = 0;
        while (i < runs.size())
        {
            final long[] first = runs.get(i);
            final long width = first[WIDTH];
            int end = i + 1;
            if (end < runs.size())
            {
                final long devicePitch = runs.get(end)[DEVICE] - first[DEVICE];
                final long hostPitch = runs.get(end)[HOST] - first[HOST];
                if (devicePitch >= width && hostPitch >= width)
                {
                    while (end < runs.size()
                        && runs.get(end)[WIDTH] == width
                        && runs.get(end)[DEVICE] - runs.get(end - 1)[DEVICE] == devicePitch
                        && runs.get(end)[HOST] - runs.get(end - 1)[HOST] == hostPitch)
                    {
                        end++;
                    }
                }
                if (end - i > 1)
                {
                    ops.add(new CopyOp(first[DEVICE], devicePitch, first[HOST], hostPitch, width, end - i));
                    i = end;
                    continue;
                }
            }
            ops.add(CopyOp.contiguous(first[DEVICE], first[HOST], width));
            i++;
        }
        return ops;
    }
}
