package io.kvtier.device;

/**
 * The copy planner ({@link CopyPlanner} describes what it does) with its working memory kept between
 * calls: slices, runs and the two candidate orders live in arrays that grow only when a request is
 * bigger than every one before, so planning a steady stream of requests allocates nothing. Plans are
 * appended to a {@link CopyOps}, so one request's blocks can go to the executor in one submission.
 * One thread at a time; {@link CopyPlanner}'s static methods use a fresh one per call.
 */
public final class CopyPlanBuilder
{
    private final CopyOps byBlock = new CopyOps(64);
    private final CopyOps bySlot = new CopyOps(64);
    private final int[] oneBlock = new int[1];
    private final long[] onePage = new long[1];
    private long[] sliceDevice = new long[64];
    private long[] sliceHost = new long[64];
    private long[] sliceWidth = new long[64];
    private long[] runDevice = new long[64];
    private long[] runHost = new long[64];
    private long[] runWidth = new long[64];
    private long[] seenBlocks = new long[1];
    private long[] sortedPages = new long[16];

    /**
     * Appends the copies of one block's first {@code validTokens} tokens.
     *
     * @param layout      the device buffers
     * @param block       the block
     * @param validTokens tokens to copy, 1 to blockTokens
     * @param pageOffset  the page's offset in the host segment
     * @param out         where the copies go, in {@code out}'s direction
     */
    public void append(final LayerFirstLayout layout, final int block, final int validTokens, final long pageOffset, final CopyOps out)
    {
        oneBlock[0] = block;
        onePage[0] = pageOffset;
        append(layout, oneBlock, onePage, 1, validTokens, out);
    }

    /**
     * Appends the copies of {@code count} blocks, the i-th to or from the page at {@code pageOffsets[i]}:
     * distinct blocks, pages at least a page apart, only the last block partial.
     *
     * @param layout          the device buffers
     * @param blocks          the blocks, the first {@code count} used
     * @param pageOffsets     their pages' offsets in the host segment
     * @param count           blocks
     * @param lastValidTokens tokens of the last block to copy, 1 to blockTokens
     * @param out             where the copies go, in {@code out}'s direction
     * @throws IllegalArgumentException naming what breaks those rules
     */
    public void append(final LayerFirstLayout layout, final int[] blocks, final long[] pageOffsets, final int count, final int lastValidTokens,
                       final CopyOps out)
    {
        final KvShape shape = layout.shape();
        check(layout, blocks, pageOffsets, count, lastValidTokens);
        final int slots = shape.slots();
        final int n = count * slots;
        ensureSlices(n);
        int k = 0;
        for (int i = 0; i < count; i++)
        {
            final long width = (i == count - 1 ? lastValidTokens : shape.blockTokens()) * shape.tokenBytes();
            for (int l = 0; l < shape.layers(); l++)
            {
                for (int t = 0; t < shape.tensorsPerLayer(); t++)
                {
                    sliceDevice[k] = layout.blockAddress(l, t, blocks[i]);
                    sliceHost[k] = pageOffsets[i] + KvPageDescriptor.slotOffset(shape, l, t);
                    sliceWidth[k] = width;
                    k++;
                }
            }
        }
        fold(coalesce(n, count, slots, false), byBlock.clear(out.direction()));
        if (count == 1)
        {
            out.addAll(byBlock);
            return;
        }
        fold(coalesce(n, count, slots, true), bySlot.clear(out.direction()));
        out.addAll(bySlot.size() < byBlock.size() ? bySlot : byBlock);
    }

    private void check(final LayerFirstLayout layout, final int[] blocks, final long[] pageOffsets, final int count, final int lastValidTokens)
    {
        final KvShape shape = layout.shape();
        if (count <= 0 || blocks.length < count || pageOffsets.length < count)
        {
            throw new IllegalArgumentException("count=" + count + " must be positive and within blocks.length=" + blocks.length
                + " and pageOffsets.length=" + pageOffsets.length);
        }
        if (lastValidTokens <= 0 || lastValidTokens > shape.blockTokens())
        {
            throw new IllegalArgumentException("validTokens=" + lastValidTokens + " must be within 1..blockTokens=" + shape.blockTokens());
        }
        for (int i = 0; i < count; i++)
        {
            layout.checkBlock(blocks[i]);
            if (pageOffsets[i] < 0)
            {
                throw new IllegalArgumentException("pageOffset=" + pageOffsets[i] + " is negative");
            }
        }
        // Two copies into one block, or two blocks into overlapping pages, would race.
        final int words = (layout.blocks() + 63) >>> 6;
        if (seenBlocks.length < words)
        {
            seenBlocks = new long[words];
        }
        int duplicate = -1;
        for (int i = 0; i < count && duplicate < 0; i++)
        {
            final long bit = 1L << blocks[i];
            final int word = blocks[i] >>> 6;
            if ((seenBlocks[word] & bit) != 0)
            {
                duplicate = blocks[i];
            }
            seenBlocks[word] |= bit;
        }
        for (int i = 0; i < count; i++)
        {
            seenBlocks[blocks[i] >>> 6] = 0;
        }
        if (duplicate >= 0)
        {
            throw new IllegalArgumentException("block=" + duplicate + " appears twice");
        }
        if (count > 1)
        {
            if (sortedPages.length < count)
            {
                sortedPages = new long[Math.max(count, 2 * sortedPages.length)];
            }
            System.arraycopy(pageOffsets, 0, sortedPages, 0, count);
            heapSort(sortedPages, count);
            for (int i = 1; i < count; i++)
            {
                if (sortedPages[i] - sortedPages[i - 1] < shape.pageBytes())
                {
                    throw new IllegalArgumentException("pageOffset=" + sortedPages[i - 1] + " and pageOffset=" + sortedPages[i]
                        + " are closer than pageLength=" + shape.pageBytes());
                }
            }
        }
    }

    /**
     * Merges each slice into the previous run when both sides continue it, taking the slices block by
     * block or slot by slot.
     *
     * @return runs made
     */
    private int coalesce(final int n, final int count, final int slots, final boolean slotMajor)
    {
        int runs = 0;
        for (int j = 0; j < n; j++)
        {
            final int slice = slotMajor ? (j % count) * slots + j / count : j;
            final long device = sliceDevice[slice];
            final long host = sliceHost[slice];
            final long width = sliceWidth[slice];
            if (runs > 0 && runDevice[runs - 1] + runWidth[runs - 1] == device && runHost[runs - 1] + runWidth[runs - 1] == host)
            {
                runWidth[runs - 1] += width;
            }
            else
            {
                runDevice[runs] = device;
                runHost[runs] = host;
                runWidth[runs] = width;
                runs++;
            }
        }
        return runs;
    }

    /** Folds consecutive equal-width runs with constant pitches into 2D copies. */
    private void fold(final int runs, final CopyOps ops)
    {
        int i = 0;
        while (i < runs)
        {
            final long width = runWidth[i];
            int end = i + 1;
            if (end < runs)
            {
                final long devicePitch = runDevice[end] - runDevice[i];
                final long hostPitch = runHost[end] - runHost[i];
                if (devicePitch >= width && hostPitch >= width)
                {
                    while (end < runs
                        && runWidth[end] == width
                        && runDevice[end] - runDevice[end - 1] == devicePitch
                        && runHost[end] - runHost[end - 1] == hostPitch)
                    {
                        end++;
                    }
                }
                if (end - i > 1)
                {
                    ops.add(runDevice[i], devicePitch, runHost[i], hostPitch, width, end - i);
                    i = end;
                    continue;
                }
            }
            ops.add(runDevice[i], width, runHost[i], width, width, 1);
            i++;
        }
    }

    private void ensureSlices(final int n)
    {
        if (sliceDevice.length < n)
        {
            final int grown = Math.max(n, 2 * sliceDevice.length);
            sliceDevice = new long[grown];
            sliceHost = new long[grown];
            sliceWidth = new long[grown];
            runDevice = new long[grown];
            runHost = new long[grown];
            runWidth = new long[grown];
        }
    }

    /** In place and allocation-free (Arrays.sort may allocate a merge buffer for runs of a long array). */
    private static void heapSort(final long[] a, final int n)
    {
        for (int i = n / 2 - 1; i >= 0; i--)
        {
            siftDown(a, i, n);
        }
        for (int end = n - 1; end > 0; end--)
        {
            final long top = a[0];
            a[0] = a[end];
            a[end] = top;
            siftDown(a, 0, end);
        }
    }

    private static void siftDown(final long[] a, final int start, final int n)
    {
        int root = start;
        while (2 * root + 1 < n)
        {
            int child = 2 * root + 1;
            if (child + 1 < n && a[child + 1] > a[child])
            {
                child++;
            }
            if (a[root] >= a[child])
            {
                return;
            }
            final long swap = a[root];
            a[root] = a[child];
            a[child] = swap;
            root = child;
        }
    }
}
