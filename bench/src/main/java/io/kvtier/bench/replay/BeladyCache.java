package io.kvtier.bench.replay;

import java.util.Arrays;

/**
 * Belady's offline eviction: evict the resident block whose next use is furthest away. Residency is a
 * {@link BlockIndex} as for LRU; the choice is an indexed binary max-heap over entry ids, ordered by next
 * use and then by staleness, so that blocks tied on next use (never used again, or used by the same
 * later request under {@link NextUse#REQUEST}) go least recently used first.
 */
final class BeladyCache implements BlockCache
{
    private final long capacityBlocks;
    private final Admission admission;
    private final BlockIndex index;
    private long[] nextUse;
    private long[] lastTouch;
    private int[] heap;
    private int[] heapPosition;
    private long clock;
    private long evictions;
    private long peak;

    /**
     * @param capacityBlocks the most resident blocks, at least 1
     * @param admission      whether a block may bypass a full cache
     * @param residentBound  the most distinct blocks the replay can bring, or {@link TraceReplay#UNBOUNDED}
     */
    BeladyCache(final long capacityBlocks, final Admission admission, final long residentBound)
    {
        this.capacityBlocks = capacityBlocks;
        this.admission = admission;
        this.index = new BlockIndex(capacityBlocks, residentBound);
        final int entries = index.entryCapacity();
        this.nextUse = new long[entries];
        this.lastTouch = new long[entries];
        this.heap = new int[entries];
        this.heapPosition = new int[entries];
    }

    @Override
    public boolean contains(final long hashId)
    {
        return index.find(hashId) != BlockIndex.NONE;
    }

    @Override
    public void access(final long hashId, final long next)
    {
        clock++;
        final int id = index.find(hashId);
        if (id != BlockIndex.NONE)
        {
            // With next uses from a first pass a touch only moves an entry towards the root, but a
            // repeated id within one request keeps its next use and only freshens, so sift both ways.
            nextUse[id] = next;
            lastTouch[id] = clock;
            siftUp(heapPosition[id]);
            siftDown(heapPosition[id]);
        }
        else if (index.size() < capacityBlocks)
        {
            final int added = index.add(hashId);
            if (index.entryCapacity() > heap.length)
            {
                grow(index.entryCapacity());
            }
            nextUse[added] = next;
            lastTouch[added] = clock;
            heap[added] = added;
            heapPosition[added] = added;
            siftUp(added);
            peak = Math.max(peak, index.size());
        }
        else
        {
            final int victim = heap[0];
            if (admission == Admission.BYPASS && next >= nextUse[victim])
            {
                // The incoming block is needed no sooner than anything resident: keeping what is there
                // is at least as good, so the block is served without being cached.
                return;
            }
            index.replace(victim, hashId);
            nextUse[victim] = next;
            lastTouch[victim] = clock;
            siftDown(0);
            evictions++;
        }
    }

    /** @return whether entry a should be evicted before entry b */
    private boolean before(final int a, final int b)
    {
        return nextUse[a] != nextUse[b] ? nextUse[a] > nextUse[b] : lastTouch[a] < lastTouch[b];
    }

    private void siftUp(final int from)
    {
        int at = from;
        final int id = heap[at];
        while (at > 0)
        {
            final int parent = (at - 1) >>> 1;
            if (!before(id, heap[parent]))
            {
                break;
            }
            place(heap[parent], at);
            at = parent;
        }
        place(id, at);
    }

    private void siftDown(final int from)
    {
        final int n = index.size();
        int at = from;
        final int id = heap[at];
        while (true)
        {
            final int left = 2 * at + 1;
            if (left >= n)
            {
                break;
            }
            final int right = left + 1;
            final int child = right < n && before(heap[right], heap[left]) ? right : left;
            if (!before(heap[child], id))
            {
                break;
            }
            place(heap[child], at);
            at = child;
        }
        place(id, at);
    }

    private void place(final int id, final int at)
    {
        heap[at] = id;
        heapPosition[id] = at;
    }

    private void grow(final int entries)
    {
        nextUse = Arrays.copyOf(nextUse, entries);
        lastTouch = Arrays.copyOf(lastTouch, entries);
        heap = Arrays.copyOf(heap, entries);
        heapPosition = Arrays.copyOf(heapPosition, entries);
    }

    @Override
    public long size()
    {
        return index.size();
    }

    @Override
    public long evictions()
    {
        return evictions;
    }

    @Override
    public long peakSize()
    {
        return peak;
    }

    @Override
    public void close()
    {
        index.close();
    }
}
