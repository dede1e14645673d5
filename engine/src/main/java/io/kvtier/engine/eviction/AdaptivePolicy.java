package io.kvtier.engine.eviction;

import java.util.List;

/**
 * The default policy: a {@link SegmentedPolicy} whose setting follows the workload. Beside the pool it runs one
 * {@link MiniatureCache} per candidate setting ({@link SegmentedPolicy#FREQUENCY}, {@link SegmentedPolicy#ADMISSION},
 * {@link SegmentedPolicy#PROBATION}, {@link SegmentedPolicy#CHAIN}) over the same sample of chains, and every
 * {@code max(capacity, 1024)} events switches the pool to the setting whose miniature hit most lately (hit counts
 * lose 5% per window, so a choice weighs about the last twenty windows). {@link SegmentedPolicy#CHAIN}, plain
 * recency tail first, is the reference: another setting has to beat it by 5% to be chosen, so a workload on which
 * recency is best keeps recency. (Those two figures were chosen on the traces of {@code docs/PERFORMANCE.md}:
 * with a fifth lost per window the pool switched away from recency on noise, and fell up to 0.0004 below LRU in
 * 2 of 32 chat replays (8 seeds, 4 capacities); a margin of 10% kept it from switching at 1e7 tokens on the
 * Mooncake trace, where the probation setting hits 4.6% more than recency.)
 *
 * <p>Why several fixed settings and a vote rather than one cleverer rule: which pages are worth keeping depends
 * on the capacity as much as on the traffic. On the Mooncake conversation trace, at 3e6 tokens evicting every
 * page seen for the first time before anything else nearly doubles LRU's hit rate, while at 1e7 tokens the same
 * rule loses to LRU (the first turn of a conversation comes back before a large pool would evict it); on a chat
 * workload with short think times it loses at every size. A miniature simulation measures that instead of
 * guessing it (Waldspurger et al., "Cache Modeling and Optimization using Miniature Simulations", USENIX ATC
 * 2017).
 *
 * <p>Sampling: a chain head below a hub is in the sample when its key hash falls in one residue class of
 * {@code max(1, capacity / 2048)}, and a page inherits its parent's membership, so whole conversations are
 * sampled; each miniature has {@code capacity / rate} pages. A pool of up to 4,095 pages is simulated whole.
 * The miniatures share the pool's frequency sketch, which the pool counts and whose estimate each event carries.
 *
 * <p>Cost: a request pays for a record per insertion and hit, no more. Each event is written down (the page, its
 * parent, the key's hash) and applied to the pool's policy, the sketch and the sample later, in order: when the
 * engine thread has nothing else to do ({@link #maintain}), when {@link #DEFERRED} are waiting, and before anything
 * that reads the order or changes residency ({@link #first}, {@link #next}, {@link #onRemove}). Applied in the order
 * they came, with every removal after the events before it, they leave the pool's policy exactly as applying each at
 * once would. A sampled event is then replayed in four small caches, O(1) each, also put off: it is recorded (the
 * key, its parent's key and state, the estimate) and replayed in idle time, in batches; at most {@link #PENDING}
 * wait, and all of them are replayed before a choice, so the choices, and so the pool's order, are those of replaying
 * each event at once. The miniatures keep their keys in one table ({@link MiniatureKeys}), so a replayed event finds
 * its key once, not once a miniature. Memory is the pool's policy plus four miniatures of at most 4,095 pages (about
 * 90 bytes a page, their shared keys included) and the records (22 KiB).
 */
final class AdaptivePolicy implements EvictionPolicy
{
    /** This policy's name. */
    public static final String NAME = "adaptive";

    /** The settings it chooses from; the last is the reference. */
    static final List<SegmentedPolicy.Setting> CANDIDATES =
        List.of(SegmentedPolicy.FREQUENCY, SegmentedPolicy.ADMISSION, SegmentedPolicy.PROBATION, SegmentedPolicy.CHAIN);

    /** Pages a miniature aims for: the sampling rate is {@code max(1, capacity / MINIATURE_PAGES)}. */
    static final int MINIATURE_PAGES = 2048;

    /** How much better than the reference another setting's miniature must hit to be chosen. */
    static final double MARGIN = 0.05;

    /** What hit counts are multiplied by after each window. */
    static final double DECAY = 0.95;

    /** The fewest events between two choices. */
    static final int MIN_WINDOW = 1024;

    /**
     * The most sampled events put off for the miniatures (a power of two): their replay is left to the engine
     * thread's idle time ({@link #maintain}), so that a hit costs a request the pool's own policy and a record.
     */
    static final int PENDING = 1024;

    /** How many put-off events a full ring replays at once before it takes another. */
    static final int CATCH_UP = 64;

    /**
     * The most insertions and hits written down before the pool's policy hears them (a power of two): a full record
     * applies them all, in one pass over warm arrays, before it takes another.
     */
    static final int DEFERRED = 256;

    private static final int REFERENCE = CANDIDATES.size() - 1;
    private static final long SAMPLE_SALT = 0x5DEECE66DL;

    /** Counts every key the pool sees; the pool and the miniatures read it. */
    private final FrequencySketch sketch;
    private final SegmentedPolicy pool;
    private final MiniatureCache[] miniatures;
    /** The miniatures' keys: a replayed event finds its key once for all of them. */
    private final MiniatureKeys miniatureKeys;
    private final boolean[] sampled;
    private final int sampleRate;
    private final long window;
    /** Sampled events not replayed in the miniatures yet, a ring from {@link #pendingHead}: the key, the parent's key, its state, the estimate. */
    private final long[] pendingKey = new long[PENDING];
    private final long[] pendingParentKey = new long[PENDING];
    private final byte[] pendingState = new byte[PENDING];
    private final byte[] pendingSeen = new byte[PENDING];
    private int pendingHead;
    private int pendingCount;
    /**
     * Insertions and hits not yet applied to the pool's policy, from {@link #deferredApplied} to
     * {@link #deferredCount}: the page (its complement {@code ~page}, negative, for an insertion), its parent and,
     * for an insertion, the key's hash.
     */
    private final int[] deferredPage = new int[DEFERRED];
    private final int[] deferredParent = new int[DEFERRED];
    private final long[] deferredKey = new long[DEFERRED];
    private int deferredCount;
    private int deferredApplied;
    private long events;
    private int chosen = REFERENCE;

    /**
     * @param capacity pages range over {@code [0, capacity)}
     */
    public AdaptivePolicy(final int capacity)
    {
        if (capacity < 0)
        {
            throw new IllegalArgumentException("capacity=" + capacity + " must be at least 0");
        }
        sketch = new FrequencySketch(FrequencySketch.countersFor(capacity));
        pool = new SegmentedPolicy(capacity, CANDIDATES.get(REFERENCE), sketch, false); // this policy counts the keys
        sampleRate = Math.max(1, capacity / MINIATURE_PAGES);
        final int miniaturePages = Math.max(1, capacity / sampleRate);
        miniatureKeys = new MiniatureKeys(CANDIDATES.size(), miniaturePages);
        miniatures = new MiniatureCache[CANDIDATES.size()];
        for (int i = 0; i < miniatures.length; i++)
        {
            miniatures[i] = new MiniatureCache(miniaturePages, CANDIDATES.get(i), sketch, miniatureKeys, i);
        }
        sampled = new boolean[capacity];
        window = Math.max(capacity, MIN_WINDOW);
    }

    @Override
    public void onInsert(final int page, final int parent, final long keyHash)
    {
        defer(~page, parent, keyHash);
    }

    @Override
    public void onAccess(final int page, final int parent)
    {
        defer(page, parent, 0);
    }

    /** Writes an event down for the pool's policy; a full record applies every event in it first. */
    private void defer(final int pageOrInsertion, final int parent, final long keyHash)
    {
        if (deferredCount == DEFERRED)
        {
            apply(DEFERRED);
        }
        final int event = deferredCount++;
        deferredPage[event] = pageOrInsertion;
        deferredParent[event] = parent;
        deferredKey[event] = keyHash;
    }

    /**
     * Applies written-down events to the pool's policy, the sketch and the sample, oldest first.
     *
     * @param events the most to apply
     * @return how many were applied
     */
    private int apply(final int events)
    {
        final int from = deferredApplied;
        final int to = from + Math.min(events, deferredCount - from);
        for (int event = from; event < to; event++)
        {
            final int pageOrInsertion = deferredPage[event];
            final int parent = deferredParent[event];
            if (pageOrInsertion < 0)
            {
                final int page = ~pageOrInsertion;
                final long keyHash = deferredKey[event];
                final int seen = sketch.incrementAndEstimate(keyHash);
                pool.insert(page, parent, keyHash, seen);
                observe(page, parent, keyHash, seen);
            }
            else
            {
                final long keyHash = pool.keyHash(pageOrInsertion);
                final int seen = sketch.incrementAndEstimate(keyHash);
                pool.access(pageOrInsertion, parent, seen);
                observe(pageOrInsertion, parent, keyHash, seen);
            }
        }
        if (to == deferredCount)
        {
            deferredCount = 0;
            deferredApplied = 0;
        }
        else
        {
            deferredApplied = to;
        }
        return to - from;
    }

    /** Applies every written-down event: the pool's policy is then as if each had been applied at once. */
    private void settle()
    {
        if (deferredCount != 0)
        {
            apply(DEFERRED);
        }
    }

    /** Puts the event off for the miniatures when its chain is sampled; the sketch has counted it, {@code seen} is its estimate. */
    private void observe(final int page, final int parent, final long keyHash, final int seen)
    {
        final int parentPage = parent == NONE || parent == page || !pool.isResident(parent) ? NONE : parent;
        final boolean inSample = parentPage != NONE && !pool.isHub(parentPage) ?
            sampled[parentPage] :
            sampleRate == 1 || Long.remainderUnsigned(FrequencySketch.mix(keyHash ^ SAMPLE_SALT), sampleRate) == 0;
        sampled[page] = inSample;
        if (inSample)
        {
            final int parentState = parentPage == NONE ? MiniatureCache.NO_PARENT :
                sampled[parentPage] ? MiniatureCache.PARENT_SAMPLED : MiniatureCache.PARENT_OUTSIDE;
            putOff(keyHash, parentPage == NONE ? 0 : pool.keyHash(parentPage), parentState, seen);
        }
        if (++events >= window)
        {
            events = 0;
            replay(pendingCount);
            choose();
        }
    }

    /**
     * Puts a sampled event off for the miniatures, everything they will need read now; when {@link #PENDING} are
     * waiting, the oldest {@link #CATCH_UP} are replayed first.
     */
    private void putOff(final long keyHash, final long parentKey, final int parentState, final int seen)
    {
        if (pendingCount == PENDING)
        {
            replay(CATCH_UP);
        }
        final int record = (pendingHead + pendingCount) & (PENDING - 1);
        pendingKey[record] = keyHash;
        pendingParentKey[record] = parentKey;
        pendingState[record] = (byte)parentState;
        pendingSeen[record] = (byte)seen;
        pendingCount++;
    }

    /**
     * Replays the oldest put-off events in every miniature, each event in all of them before the next: its key is
     * found once, in the keys they share. The miniatures share nothing else (the records hold what they read of the
     * pool), so the order between them changes no count.
     *
     * @param records the most events to replay
     * @return how many were replayed
     */
    private int replay(final int records)
    {
        final int n = Math.min(records, pendingCount);
        for (int i = 0, record = pendingHead; i < n; i++, record = (record + 1) & (PENDING - 1))
        {
            final long key = pendingKey[record];
            final long parentKey = pendingParentKey[record];
            final int parentState = pendingState[record];
            final int seen = pendingSeen[record];
            final int home = miniatureKeys.home(key);
            int entry = miniatureKeys.find(key, home);
            for (final MiniatureCache miniature : miniatures)
            {
                entry = miniature.touch(key, home, entry, parentKey, parentState, seen);
            }
        }
        pendingHead = (pendingHead + n) & (PENDING - 1);
        pendingCount -= n;
        return n;
    }

    /**
     * Replays put-off sampled events in the miniatures. Nothing else depends on it: a full ring of them is replayed
     * in part at the next sampled event, and all of them before the miniatures' counts choose a setting.
     *
     * @param budget the most events to replay
     * @return the events replayed
     */
    @Override
    public int maintain(final int budget)
    {
        final int applied = apply(budget);
        return applied + (applied < budget ? replay(budget - applied) : 0);
    }

    private void choose()
    {
        int best = REFERENCE;
        for (int i = 0; i < miniatures.length; i++)
        {
            if (miniatures[i].hits() > miniatures[best].hits())
            {
                best = i;
            }
        }
        if (best != REFERENCE && miniatures[best].hits() < miniatures[REFERENCE].hits() * (1 + MARGIN))
        {
            best = REFERENCE;
        }
        if (best != chosen)
        {
            chosen = best;
            pool.configure(CANDIDATES.get(best));
        }
        for (final MiniatureCache miniature : miniatures)
        {
            miniature.decay(DECAY);
        }
    }

    @Override
    public void onRemove(final int page)
    {
        settle();
        pool.onRemove(page);
    }

    @Override
    public int first()
    {
        settle();
        return pool.first();
    }

    @Override
    public int next(final int page)
    {
        settle(); // an event written down since first() ended the walk: the pool's policy says so once it heard it
        return pool.next(page);
    }

    /** @return the setting the pool follows now */
    public SegmentedPolicy.Setting setting()
    {
        settle();
        return pool.setting();
    }

    /** @return the number of resident pages */
    public int size()
    {
        settle();
        return pool.size();
    }

    /** @return one in how many chains the miniatures sample */
    int sampleRate()
    {
        return sampleRate;
    }

    /** @return sampled events put off, not yet replayed in the miniatures */
    int pendingEvents()
    {
        return pendingCount;
    }

    /** @return insertions and hits written down, not yet applied to the pool's policy */
    int deferredEvents()
    {
        return deferredCount - deferredApplied;
    }

    /** @return the miniatures, in {@link #CANDIDATES} order, every event written down applied and replayed in them */
    MiniatureCache[] miniatures()
    {
        settle();
        replay(pendingCount);
        return miniatures;
    }

    @Override
    public String name()
    {
        return NAME;
    }

    @Override
    public String toString()
    {
        return NAME + "(now " + setting().name() + ")";
    }
}
