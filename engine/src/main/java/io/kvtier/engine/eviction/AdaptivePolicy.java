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
 * The miniatures share the pool's frequency sketch. Cost: each sampled event is replayed in four small caches,
 * O(1) each; memory is the pool's policy plus four miniatures of at most 4,095 pages (about 50 bytes a page).
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

    private static final int REFERENCE = CANDIDATES.size() - 1;
    private static final long SAMPLE_SALT = 0x5DEECE66DL;

    /** Counts every key the pool sees; the pool and the miniatures read it. */
    private final FrequencySketch sketch;
    private final SegmentedPolicy pool;
    private final MiniatureCache[] miniatures;
    private final boolean[] sampled;
    private final int sampleRate;
    private final long window;
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

    /** Replays the event in the miniatures when its chain is sampled; the sketch has counted it, {@code seen} is its estimate. */
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
            final long parentKey = parentPage == NONE ? 0 : pool.keyHash(parentPage);
            // The miniatures have one capacity, so one table size: the key's home slot is the same in each.
            final int home = miniatures[0].home(keyHash);
            for (final MiniatureCache miniature : miniatures)
            {
                miniature.touch(keyHash, home, parentKey, parentState, seen);
            }
        }
        if (++events >= window)
        {
            events = 0;
            choose();
        }
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

    /** @return the miniatures, in {@link #CANDIDATES} order */
    MiniatureCache[] miniatures()
    {
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
