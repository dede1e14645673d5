package io.kvtier.bench.replay;

import io.kvtier.collections.IntLruList;

/**
 * Least-recently-used eviction on the engine's structures: a {@link BlockIndex} (a {@code KeyTable})
 * for residency and an {@link IntLruList} over its entry ids for recency.
 */
final class LruCache implements BlockCache
{
    private final long capacityBlocks;
    private final BlockIndex index;
    private IntLruList recency;
    private long evictions;
    private long peak;

    /**
     * @param capacityBlocks the most resident blocks, at least 1
     */
    LruCache(final long capacityBlocks)
    {
        this.capacityBlocks = capacityBlocks;
        this.index = new BlockIndex(capacityBlocks);
        this.recency = new IntLruList(index.entryCapacity());
    }

    @Override
    public boolean contains(final long hashId)
    {
        return index.find(hashId) != BlockIndex.NONE;
    }

    @Override
    public void access(final long hashId, final long nextUse)
    {
        final int id = index.find(hashId);
        if (id != BlockIndex.NONE)
        {
            recency.touch(id);
        }
        else if (index.size() < capacityBlocks)
        {
            final int added = index.add(hashId);
            if (index.entryCapacity() > recency.capacity())
            {
                growRecency();
            }
            recency.touch(added);
            peak = Math.max(peak, index.size());
        }
        else
        {
            final int victim = recency.first();
            index.replace(victim, hashId);
            recency.touch(victim);
            evictions++;
        }
    }

    private void growRecency()
    {
        // Copy in recency order: the list has no bulk resize, and order is all it holds.
        final IntLruList larger = new IntLruList(index.entryCapacity());
        for (int id = recency.first(); id != IntLruList.NONE; id = recency.next(id))
        {
            larger.touch(id);
        }
        recency = larger;
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
