package io.kvtier.bench.replay;

import io.kvtier.engine.eviction.EvictionPolicies;
import io.kvtier.engine.eviction.EvictionPolicy;

/**
 * Online eviction on the engine's own structures: a {@link BlockIndex} (a {@code KeyTable}) for residency and
 * one of the engine's {@link EvictionPolicy} classes, built by {@link EvictionPolicies#forName}, over its entry
 * ids, which play the pool's page ids.
 *
 * <p>Each block is reported to the policy with its parent, the block touched or inserted just before it in the
 * same request ({@link EvictionPolicy#NONE} for a request's first block, or when that block was just evicted to
 * make room), and with its trace hash id as the key hash. A full cache evicts the policy's {@link
 * EvictionPolicy#first()}: the replay has nothing pinned, so the first candidate is always evictable.
 */
final class PolicyCache implements BlockCache
{
    private final long capacityBlocks;
    private final BlockIndex index;
    private final EvictionPolicy policy;
    private long evictions;
    private long peak;

    /**
     * @param policyName     one of {@link EvictionPolicies#names()}
     * @param capacityBlocks the most resident blocks, at least 1
     * @param residentBound  the most distinct blocks the replay can bring (its total blocks); the policy's
     *                       arrays are sized for {@code min(capacityBlocks, residentBound)} pages
     * @throws IllegalArgumentException if that is more pages than int ids address
     */
    PolicyCache(final String policyName, final long capacityBlocks, final long residentBound)
    {
        final long pages = Math.min(capacityBlocks, Math.max(1, residentBound));
        if (pages > BlockIndex.MAX_ENTRIES)
        {
            throw new IllegalArgumentException("a policy of " + pages + " pages: more than int page ids address (capacityBlocks=" + capacityBlocks +
                ", residentBound=" + residentBound + ")");
        }
        this.capacityBlocks = capacityBlocks;
        this.index = new BlockIndex(capacityBlocks, residentBound);
        this.policy = EvictionPolicies.forName(policyName, (int)pages);
    }

    @Override
    public boolean contains(final long hashId)
    {
        return index.find(hashId) != BlockIndex.NONE;
    }

    /**
     * Touches the leading run of resident blocks as it finds them, then accesses the rest: the same counts and
     * order as judging the run first and touching every block after, since nothing is evicted before the first
     * miss, with one probe per block instead of two.
     */
    @Override
    public int replay(final long[] ids, final long[] nextUses, final int offset)
    {
        int hits = 0;
        int parent = EvictionPolicy.NONE;
        while (hits < ids.length)
        {
            final int id = index.find(ids[hits]);
            if (id == BlockIndex.NONE)
            {
                break;
            }
            policy.onAccess(id, parent);
            parent = id;
            hits++;
        }
        for (int i = hits; i < ids.length; i++)
        {
            parent = touch(ids[i], parent);
        }
        return hits;
    }

    @Override
    public void access(final long hashId, final long nextUse)
    {
        touch(hashId, EvictionPolicy.NONE);
    }

    /** @return the block's entry id after the touch, the next block's parent */
    private int touch(final long hashId, final int parent)
    {
        final int id = index.findOrClaim(hashId);
        if (id != BlockIndex.NONE)
        {
            policy.onAccess(id, parent);
            return id;
        }
        if (index.size() < capacityBlocks)
        {
            final int added = index.bindNew();
            policy.onInsert(added, parent, hashId);
            peak = Math.max(peak, index.size());
            return added;
        }
        final int victim = policy.first();
        policy.onRemove(victim);
        index.bindEvicting(victim);
        evictions++;
        policy.onInsert(victim, victim == parent ? EvictionPolicy.NONE : parent, hashId);
        return victim;
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
