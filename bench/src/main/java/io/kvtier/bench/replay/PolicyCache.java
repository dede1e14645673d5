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
     * @param residentBound  the most distinct blocks the replay can bring, or {@link TraceReplay#UNBOUNDED}
     */
    LruCache(final long capacityBlocks, final long residentBound)
    {
        this.capacityBlocks = capacityBlocks;
        this.index = new BlockIndex(capacityBlocks, residentBound);
        this.recency = new IntLruList(index.entryCapacity());
    }

    @Override
    public boolean contains(final long hashId)
    {
        return index.find(hashId) != BlockIndex.NONE;
    }

    /**
     * Touches the leading run of resident blocks as it finds them, then accesses the rest: the same
     * counts and order as judging the run first and touching every block after, since nothing is
     * evicted before the first miss, with one probe per block instead of two.
     */
    @Override
    public int replay(final long[] ids, final long[] nextUses, final int offset)
    {
        int hits = 0;
        while (hits < ids.length)
        {
            final int id = index.find(ids[hits]);
            if (id == BlockIndex.NONE)
            {
                break;
            }
            recency.touch(id);
            hits++;
        }
        for (int i = hits; i < ids.length; i++)
        {
            final int id = index.findOrClaim(ids[i]);
            if (id != BlockIndex.NONE)
            {
                recency.touch(id);
            }
            else if (index.size() < capacityBlocks)
            {
                insertClaimed();
            }
            else
            {
                evictForClaimed();
            }
        }
        return hits;
    }

    @Override
    public void access(final long hashId, final long nextUse)
    {
        final int id = index.findOrClaim(hashId);
        if (id != BlockIndex.NONE)
        {
            recency.touch(id);
        }
        else if (index.size() < capacityBlocks)
        {
            insertClaimed();
        }
        else
        {
            evictForClaimed();
        }
    }

    private void insertClaimed()
    {
        final int added = index.bindNew();
        if (index.entryCapacity() > recency.capacity())
        {
            growRecency();
        }
        recency.touch(added);
        peak = Math.max(peak, index.size());
    }

    private void evictForClaimed()
    {
        final int victim = recency.first();
        index.bindEvicting(victim);
        recency.touch(victim);
        evictions++;
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
