package io.kvtier.engine.core;

import io.kvtier.client.pool.PageStateWord;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.EngineClock;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;
import io.kvtier.spi.PageKey;

import java.util.ArrayDeque;
import java.util.List;

/**
 * Sampled re-verification of pages loaded from L3, for every tier: a load is verified once, when the
 * tier completes it, and a tier that writes into the page afterwards (a late DMA, a retry thread, a
 * bug) would otherwise change bytes a client is then served. Tiers the engine does not trust cannot:
 * their reads land in staging frames ({@link StagingFrames}). For trusted ones this is the defence:
 * when an acquire pins a page whose load landed within {@code l3.reverify.window} (late writes come
 * soon after the completion they follow), one such pin in {@code 1 / l3.reverify.rate} waits while the
 * {@link ReverifyThread} checks the payload against the CRC32C its load recorded.
 *
 * <p>A page that still matches is pinned as if nothing had happened. One that does not is never served:
 * the pin goes back and its key answers as a miss (the acquire's prefix ends there); the page leaves
 * the index at once and the pool through quarantine once nobody holds it ({@link PoolSpace#retire}),
 * since the tier may still be writing it; the write is counted ({@code l3_late_writes}) and logged
 * naming the tier, and after {@code l3.late-write-limit} of them the tier is out of service until the
 * engine restarts ({@link TierIo#takeOutOfService}).
 *
 * <p>Owns the sampler, the jobs and the late writes counted per tier. Engine thread only.
 */
final class Reverifications implements Reverifier
{
    private static final System.Logger LOG = System.getLogger(Reverifications.class.getName());
    private static final int NONE = -1;

    /** Checks a job's page off the engine thread and hands the answer back through the ring. */
    interface Verifier
    {
        /**
         * @param job a filled job
         * @return false when it cannot take one now (the page is then pinned without the check)
         */
        boolean submit(ReverifyJob job);
    }

    private final PagePool pool;
    private final EngineCounters counters;
    private final EngineClock clock;
    private final List<String> tierNames;
    private final long windowNanos;
    private final int sampleEvery;
    private final int lateWriteLimit;
    private final int[] lateWrites;
    private final ArrayDeque<ReverifyJob> freeJobs;
    private int countdown;
    private final Verifier verifier;
    private final SessionRecords sessions;
    private final LoadTracker loads;
    private final PageSpace space;
    private final TierQueue io;
    private final Loads.WaitOver continuation;

    /**
     * @param rate           the fraction of eligible pins checked, 0 for none (one in {@code round(1 / rate)})
     * @param windowNanos    how long after its load a page is eligible
     * @param lateWriteLimit pages caught changed after which a tier is taken out of service
     * @param jobs           checks that may be in progress at once; more eligible pins go unchecked
     */
    Reverifications(final PagePool pool, final EngineCounters counters, final EngineClock clock, final List<String> tierNames, final double rate,
                    final long windowNanos, final int lateWriteLimit, final int jobs, final Verifier verifier, final SessionRecords sessions,
                    final LoadTracker loads, final PageSpace space, final TierQueue io, final Loads.WaitOver continuation)
    {
        this.verifier = verifier;
        this.sessions = sessions;
        this.loads = loads;
        this.space = space;
        this.io = io;
        this.continuation = continuation;
        this.pool = pool;
        this.counters = counters;
        this.clock = clock;
        this.tierNames = tierNames;
        this.windowNanos = windowNanos;
        this.sampleEvery = rate <= 0 ? 0 : (int)Math.max(1, Math.min(Integer.MAX_VALUE, Math.round(1 / rate)));
        this.countdown = sampleEvery;
        this.lateWriteLimit = lateWriteLimit;
        this.lateWrites = new int[tierNames.size()];
        this.freeJobs = new ArrayDeque<>(jobs);
        for (int j = 0; j < jobs; j++)
        {
            freeJobs.add(new ReverifyJob());
        }
    }

    /** @return whether any page is ever checked again ({@code l3.reverify.rate} above 0) */
    boolean isEnabled()
    {
        return sampleEvery != 0;
    }

    /**
     * Decides whether a pin just taken waits for a check, and if so starts it.
     *
     * @param r          the acquiring request
     * @param key        the key pinned
     * @param page       the page pinned
     * @param generation the generation it was pinned under
     * @param pinnedAs   what the key's status becomes if the page passes
     * @return whether the key now waits ({@link PageEntryStatus#WAITING}, one more pending) for the check
     */
    @Override
    public boolean start(final ClientRecord r, final int key, final int page, final int generation, final int pinnedAs)
    {
        if (sampleEvery == 0 || !loads.loadedWithin(page, clock.nanoTime(), windowNanos) || --countdown > 0)
        {
            return false;
        }
        countdown = sampleEvery;
        final ReverifyJob job = freeJobs.poll();
        if (job == null)
        {
            return false;
        }
        job.page = page;
        job.generation = generation;
        job.client = r.id;
        job.key = key;
        job.seq = r.opSeq;
        job.pinnedAs = (byte)pinnedAs;
        job.tier = loads.tierOf(page);
        job.keyHigh = pool.metadata().keyHighPlain(page);
        job.keyLow = pool.metadata().keyLowPlain(page);
        job.intact = false;
        if (!verifier.submit(job))
        {
            freeJobs.add(job);
            return false;
        }
        counters.increment(EngineCounter.L3_REVERIFIED);
        return true;
    }

    /** A check ended: the key is pinned, or a miss with the page on its way out; the request goes on. */
    void onResult(final ReverifyJob job)
    {
        final ClientRecord r = sessions.record(job.client);
        final boolean waiting = r.awaits(job.seq) && r.status[job.key] == PageEntryStatus.WAITING && r.pageIds[job.key] == job.page;
        if (job.intact)
        {
            if (waiting)
            {
                r.status[job.key] = job.pinnedAs;
            }
            else
            {
                pool.unpin(job.page); // the request ended without it (the engine closing): its pin is ours to drop
            }
        }
        else
        {
            pool.unpin(job.page);
            if (waiting)
            {
                r.status[job.key] = (byte)PageEntryStatus.MISS;
                r.pageIds[job.key] = NONE;
            }
            lateWrite(job);
        }
        freeJobs.add(job);
        if (waiting && --r.pending == 0)
        {
            continuation.waitOver(r);
        }
    }

    private void lateWrite(final ReverifyJob job)
    {
        counters.increment(EngineCounter.L3_LATE_WRITES);
        final int tier = job.tier;
        lateWrites[tier]++;
        LOG.log(System.Logger.Level.ERROR, "tier {0} changed page {1} after its load was verified (a write after it completed the read): the page"
            + " is not served, and leaves the pool through quarantine; {2} such pages from this tier (l3.late-write-limit {3})",
            tierNames.get(tier), new PageKey(job.keyHigh, job.keyLow), lateWrites[tier], lateWriteLimit);
        // The job's pin kept the page from leaving until the unpin above, and only this thread evicts.
        if (PageStateWord.generation(pool.metadata().stateWordAcquire(job.page)) == job.generation)
        {
            space.retire(job.page);
        }
        if (lateWrites[tier] >= lateWriteLimit)
        {
            io.takeOutOfService(tier, lateWrites[tier] + " pages it loaded changed after their verification (l3.late-write-limit "
                + lateWriteLimit + ")");
        }
    }
}
