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
 * <p>Cost: each sampled event is replayed in four small caches, O(1) each, but not while a request waits: it is
 * recorded (the key, its parent's key and state, the estimate) and replayed when the engine thread has nothing
 * else to do ({@link #maintain}), in batches, one miniature after the other; at most {@link #PENDING} wait, and
 * all of them are replayed before a choice, so the choices, and so the pool's order, are those of replaying each
 * event at once. Memory is the pool's policy plus four miniatures of at most 4,095 pages (about 50 bytes a page)
 * and the records (24 KiB).
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

    private static final int REFERENCE = CANDIDATES.size() - 1;
    private static final long SAMPLE_SALT = 0x5DEECE66DL;

    /** Counts every key the pool sees; the pool and the miniatures read it. */
    private final FrequencySketch sketch;
    private final SegmentedPolicy pool;
    private final MiniatureCache[] miniatures;
    private final boolean[] sampled;
    private final int sampleRate;
    private final long window;
    /** Sampled events not replayed in the miniatures yet, a ring from {@link #pendingHead}: the key, the parent's key, its state, the estimate. */
    private final long[] pendingKey = new long[PENDING];
    private final long[] pendingParentKey = new long[PENDING];
    private final byte[] pendingState = new byte[PENDING];
    private final byte[] pendingSeen = new byte[PENDING];
    private final int[] pendingHome = new int[PENDING];
    private int pendingHead;
    private int pendingCount;
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
        miniatures = new MiniatureCache[CANDIDATES.size()];
        for (int i = 0; i < miniatures.length; i++)
        {
            miniatures[i] = new MiniatureCache(miniaturePages, CANDIDATES.get(i), sketch);
        }
        sampled = new boolean[capacity];
        window = Math.max(capacity, MIN_WINDOW);
    }

    @Override
    public void onInsert(final int page, final int parent, final long keyHash)
    {
        final int seen = sketch.incrementAndEstimate(keyHash);
        pool.insert(page, parent, keyHash, seen);
        observe(page, parent, keyHash, seen);
    }

    @Override
    public void onAccess(final int page, final int parent)
    {
        final long keyHash = pool.keyHash(page);
        final int seen = sketch.incrementAndEstimate(keyHash);
        pool.access(page, parent, seen);
        observe(page, parent, keyHash, seen);
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
            defer(keyHash, parentPage == NONE ? 0 : pool.keyHash(parentPage), parentState, seen);
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
    private void defer(final long keyHash, final long parentKey, final int parentState, final int seen)
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
     * Replays the oldest put-off events in every miniature, one miniature after the other (each keeps to its own
     * arrays while it runs; they share nothing but what the records hold, so the order between them changes no count).
     *
     * @param records the most events to replay
     * @return how many were replayed
     */
    private int replay(final int records)
    {
        final int n = Math.min(records, pendingCount);
        if (n == 0)
        {
            return 0;
        }
        // The miniatures have one capacity, so one table size: a key's home slot is the same in each.
        for (int i = 0, record = pendingHead; i < n; i++, record = (record + 1) & (PENDING - 1))
        {
            pendingHome[record] = miniatures[0].home(pendingKey[record]);
        }
        for (final MiniatureCache miniature : miniatures)
        {
            for (int i = 0, record = pendingHead; i < n; i++, record = (record + 1) & (PENDING - 1))
            {
                miniature.touch(pendingKey[record], pendingHome[record], pendingParentKey[record], pendingState[record], pendingSeen[record]);
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
        return replay(budget);
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
        pool.onRemove(page);
    }

    @Override
    public int first()
    {
        return pool.first();
    }

    @Override
    public int next(final int page)
    {
        return pool.next(page);
    }

    /** @return the setting the pool follows now */
    public SegmentedPolicy.Setting setting()
    {
        return pool.setting();
    }

    /** @return the number of resident pages */
    public int size()
    {
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

    /** @return the miniatures, in {@link #CANDIDATES} order, every event put off replayed in them */
    MiniatureCache[] miniatures()
    {
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
        return NAME + "(now " + pool.setting().name() + ")";
    }
}
