package io.kvtier.engine.eviction;

/**
 * A small cache that replays, under one {@link SegmentedPolicy.Setting}, the pages of a sample of the chains the
 * real pool sees, and counts the hits it would have had: a miniature simulation of the pool. The sample takes
 * whole chains (below their hubs), so prefixes stay intact, and the miniature's capacity is the pool's scaled
 * down by the same rate, so its hit rate estimates the pool's under that setting.
 *
 * <p>A hit counts as a request would: the key is resident and so is the leading run before it. A parent outside
 * the sample is taken as hit (the miniature cannot know), one inside must have been a hit in this request.
 */
final class MiniatureCache
{
    /** The key is a chain head. */
    static final int NO_PARENT = 0;

    /** The parent's chain is sampled too: the miniature knows whether it was a hit. */
    static final int PARENT_SAMPLED = 1;

    /** The parent is outside the sample. */
    static final int PARENT_OUTSIDE = 2;

    private final int capacity;
    private final SegmentedPolicy policy;
    /** The keys of this miniature and of the others replaying the same events; this one is {@link #number}. */
    private final MiniatureKeys keys;
    private final int number;
    /** A page's entry in {@link #keys}. */
    private final int[] entryOf;
    private final boolean[] leading;
    private int size;
    private double hits;
    /** The key touched last and its slot ({@link MiniatureKeys#ABSENT} before the first touch). */
    private long lastKey;
    private int lastSlot = MiniatureKeys.ABSENT;

    /**
     * @param capacity the miniature's pages, at least 1
     * @param setting  the setting it simulates
     * @param sketch   the pool's frequency sketch, which the pool's policy keeps counting
     * @param keys     the keys this miniature shares with the others replaying the same events, sized for this capacity
     * @param number   this miniature's number in {@code keys}
     */
    MiniatureCache(final int capacity, final SegmentedPolicy.Setting setting, final FrequencySketch sketch, final MiniatureKeys keys,
        final int number)
    {
        if (capacity < 1)
        {
            throw new IllegalArgumentException("capacity=" + capacity + " must be at least 1");
        }
        this.capacity = capacity;
        this.policy = new SegmentedPolicy(capacity, setting, sketch, false);
        this.keys = keys;
        this.number = number;
        this.entryOf = new int[capacity];
        this.leading = new boolean[capacity];
    }

    /**
     * Touches a sampled key as the pool did: a hit if resident, else an insertion that evicts per the setting.
     *
     * @param key         the key's hash
     * @param home        {@link MiniatureKeys#home} of the key
     * @param entry       the key's entry in the shared keys, or {@link MiniatureKeys#ABSENT} when no miniature holds it
     * @param parentKey   the parent's key hash, when {@code parentState} is {@link #PARENT_SAMPLED}
     * @param parentState {@link #NO_PARENT}, {@link #PARENT_SAMPLED} or {@link #PARENT_OUTSIDE}
     * @param seen        the shared sketch's estimate for the key, after the pool counted this sight
     * @return the key's entry afterwards, for the next miniature to touch it
     */
    int touch(final long key, final int home, final int entry, final long parentKey, final int parentState, final int seen)
    {
        // A parent is nearly always the key touched just before, in the same request: its slot is known then.
        int parent = parentState != PARENT_SAMPLED ? EvictionPolicy.NONE :
            lastSlot != MiniatureKeys.ABSENT && parentKey == lastKey ? lastSlot : keys.page(keys.find(parentKey), number);
        final int page = keys.page(entry, number);
        lastKey = key;
        if (page != MiniatureKeys.ABSENT)
        {
            final boolean hit = parentState != PARENT_SAMPLED || (parent != EvictionPolicy.NONE && leading[parent]);
            if (hit)
            {
                hits++;
            }
            leading[page] = hit;
            lastSlot = page;
            policy.access(page, parent, seen);
            return entry;
        }
        final int slot;
        if (size < capacity)
        {
            slot = size++;
        }
        else
        {
            slot = policy.first();
            final long evicted = policy.keyHash(slot);
            policy.onRemove(slot);
            // Not the key's own entry, which this miniature does not hold: that entry outlives the release.
            keys.release(entryOf[slot], evicted, number);
            if (slot == parent)
            {
                parent = EvictionPolicy.NONE;
            }
        }
        final int held = keys.hold(entry, key, home, number, slot);
        entryOf[slot] = held;
        leading[slot] = false;
        lastSlot = slot;
        policy.insert(slot, parent, key, seen);
        return held;
    }

    /** @return hits counted, as decayed by {@link #decay} */
    double hits()
    {
        return hits;
    }

    /**
     * Ages the hit count, so that recent hits weigh more.
     *
     * @param factor what the count is multiplied by, in [0, 1]
     */
    void decay(final double factor)
    {
        hits *= factor;
    }

    /** @return the setting simulated */
    SegmentedPolicy.Setting setting()
    {
        return policy.setting();
    }

    /** @return the miniature's pages */
    int capacity()
    {
        return capacity;
    }
}
