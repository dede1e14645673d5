package io.kvtier.engine.core;

import io.kvtier.engine.operations.AdmissionReason;
import io.kvtier.client.PageKeyChain;
import io.kvtier.client.pool.PageStateWord;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.engine.EngineClock;
import io.kvtier.engine.config.WritePolicy;
import io.kvtier.engine.index.PageIndex;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;
import io.kvtier.spi.PageKey;
import io.kvtier.spi.TierStatus;

import java.util.ArrayDeque;
import java.util.List;

/**
 * Backups, pool to L3: the copy of a committed page into the first tier. A copy pins its source page
 * for as long as it runs, and at most {@code l3.max-backup-pages} run at once; more wait, unpinned, in
 * a backlog. Owns each page's backup state (in flight, waited for by an eviction, last attempt failed,
 * in the backlog), the attempt counts, the backlog and the clients waiting in {@code flush}.
 *
 * <p>It also answers the pool's eviction gate for what backups imply: under write-back, and for a page
 * whose last copy failed, a page L3 lacks is copied before it may leave; after
 * {@link #MAX_BACKUP_ATTEMPTS} failed copies it leaves anyway, counted in {@code backups_lost}.
 *
 * <p>A copy whose batch times out ends there, as a failed one ({@link #abandon}): its pin goes, and
 * whatever the tier says later is ignored. The tier may still be reading the page then, and the page
 * may meanwhile be evicted and reused; the worst that can come of it is an object of wrong bytes under
 * the key, which the next load's verification refuses (a miss, never a wrong page served), and the
 * index never learns that the tier has it. A copy refused because its tier is out of service fails at
 * once, without a warning per page (the tier's state was logged).
 *
 * <p>A {@code flush} waits at most {@code l3.io-timeout}: a client dropped while its flush waits on a
 * tier that never answers must get its pins and reservations back within a bounded time. A flush that
 * gives up is answered OK with its Result Count the backups not yet ended (in flight and queued), which
 * is 0 when it did not give up; counted in {@code flushes_timed_out}.
 */
final class Backups implements BackupRequests, TimedPart
{
    private static final System.Logger LOG = System.getLogger(Backups.class.getName());
    private static final int NONE = -1;
    private static final long SKIP_WARNING_PERIOD_NS = 10_000_000_000L;

    /** Backups of one page that may fail before eviction drops it without an L3 copy (counted, warned). */
    static final int MAX_BACKUP_ATTEMPTS = 3;

    private static final byte IN_FLIGHT = 1;
    private static final byte EVICT_PENDING = 2;
    private static final byte FAILED = 4;
    private static final byte QUEUED = 8;
    /** The copy in flight was started ahead of eviction ({@link #cleanAhead(int)}). */
    private static final byte CLEANING = 16;

    private final PagePool pool;
    private final PageIndex index;
    private final Residency residency;
    private final EngineCounters counters;
    private final EngineClock clock;
    private final PageSpace space;
    private final List<String> tierNames;
    private final WritePolicy writePolicy;
    private final int tierCount;
    private final int backupTier;
    private final int maxInFlight;
    private final byte[] flags;
    private final byte[] attempts;
    private final LongRing backlog;
    private final long flushTimeoutNanos;
    /** Clients waiting in flush, oldest first, each with the request it waits in and its deadline. */
    private final ArrayDeque<ClientRecord> flushWaiters;
    private final LongRing flushDeadlines;
    private int inFlight;
    private int backlogLive;
    private int evictPending;
    /** Whether write-back copies pages ahead of eviction ({@code policy.write.clean-ahead}). */
    private boolean cleansAhead;
    /** Copies started ahead of eviction, in flight: at most half of {@link #maxInFlight}, so evictions always find room. */
    private int cleaning;
    /** Copies that never started in the window of skips being counted, and when that window began. */
    private long skippedInWindow;
    private long skipWindowStartNanos;
    private final TierQueue io;
    private final Probes lookups;
    private final byte[] tierOf;
    private TierLevels levels;
    private Admission admission;
    private Marks marks;
    private String[] backupWhat;
    /** Whether the last {@link #start} failed because admission refused the page for every tier. */
    private boolean refused;

    Backups(final Residency residency, final EngineCounters counters, final EngineClock clock, final PageSpace space, final List<String> tierNames,
            final WritePolicy writePolicy, final int maxInFlight, final long flushTimeoutNanos, final int maxClients, final TierQueue io,
            final Probes lookups)
    {
        this.io = io;
        this.lookups = lookups;
        this.pool = residency.pool();
        this.index = residency.index();
        this.residency = residency;
        this.counters = counters;
        this.clock = clock;
        this.space = space;
        this.tierNames = tierNames;
        this.writePolicy = writePolicy;
        this.tierCount = tierNames.size();
        this.backupTier = 0;
        this.maxInFlight = maxInFlight;
        final int pageCount = pool.pageCount();
        this.flags = new byte[pageCount];
        this.attempts = new byte[pageCount];
        this.backlog = new LongRing(pageCount + 1, 2);
        this.flushTimeoutNanos = flushTimeoutNanos;
        this.flushWaiters = new ArrayDeque<>(maxClients + 1);
        this.flushDeadlines = new LongRing(maxClients + 1, 2);
        this.tierOf = new byte[pageCount];
    }

    /**
     * Connects what chooses a backup's tier: marks first, then the first tier in order that admits the page.
     *
     * @param levels    the tiers' fill and budgets
     * @param admission admission's verdicts
     * @param marks     the marks in force
     */
    void route(final TierLevels levels, final Admission admission, final Marks marks)
    {
        this.levels = levels;
        this.admission = admission;
        this.marks = marks;
        this.backupWhat = new String[tierCount];
        for (int t = 0; t < tierCount; t++)
        {
            backupWhat[t] = "backup to " + tierNames.get(t);
        }
    }

    /**
     * @param page a pool page
     * @param tier a tier
     * @return whether a backup of the page into that tier is in flight
     */
    boolean isCopyingTo(final int page, final int tier)
    {
        return (flags[page] & IN_FLIGHT) != 0 && tierOf[page] == tier;
    }

    /**
     * The tier a page's backup goes to: the one a mark in force names, if it admits the page (it needs
     * nothing of the other tiers); else the first tier, in order, that admits it. Each tier that does not
     * is named with its reason (out of service, full, write budget spent); the last tier is never full
     * for a backup, as it evicts to make room. In shadow mode the first tier is taken whatever its reasons.
     *
     * @return the tier, or {@link #NONE} when admission refused the page for every tier
     */
    private int chooseTier(final int page)
    {
        if (levels == null)
        {
            return backupTier;
        }
        final long now = clock.nanoTime();
        final long length = pool.frameLength();
        final int marked = marks.tierFor(pool.metadata().keyHighPlain(page), pool.metadata().keyLowPlain(page),
            pool.metadata().namespaceTagPlain(page));
        if (marked != Marks.NONE)
        {
            final AdmissionReason reason = reasonAgainst(marked, length, now);
            if (reason == null || !admission.refuse(reason, backupWhat[marked]))
            {
                if (reason == null)
                {
                    admission.admitted();
                }
                counters.increment(EngineCounter.MARKED_BACKUPS);
                levels.spendBudget(marked, length, now);
                return marked;
            }
        }
        for (int t = 0; t < tierCount; t++)
        {
            final AdmissionReason reason = reasonAgainst(t, length, now);
            if (reason == null || !admission.refuse(reason, backupWhat[t]))
            {
                if (reason == null)
                {
                    admission.admitted();
                }
                levels.spendBudget(t, length, now);
                return t;
            }
        }
        return NONE;
    }

    private AdmissionReason reasonAgainst(final int tier, final long length, final long now)
    {
        if (!io.inService(tier))
        {
            return AdmissionReason.TARGET_OUT_OF_SERVICE;
        }
        // The last tier takes a backup whatever its fill, since its own eviction makes room; so does a tier
        // that evicts by itself and that no migration drains. A full earlier tier that a migration drains (or
        // that cannot evict) sends new pages on to the later ones rather than evicting pages not yet moved.
        if (tier < tierCount - 1 && levels.fullForBackups(tier))
        {
            return AdmissionReason.TARGET_FULL;
        }
        if (!levels.budgetAllows(tier, length, now))
        {
            return AdmissionReason.WRITE_BUDGET_SPENT;
        }
        return null;
    }

    /** @return backups in flight */
    int inFlight()
    {
        return inFlight;
    }

    /** @return whether a copy of the page is in flight */
    boolean isCopying(final int page)
    {
        return (flags[page] & IN_FLIGHT) != 0;
    }

    /** @return pages whose eviction waits for their copy */
    int evictionsPending()
    {
        return evictPending;
    }

    /** Copies a page that L3 lacks, now or from the backlog. */
    @Override
    public void backupIfMissing(final int page)
    {
        if ((flags[page] & (IN_FLIGHT | QUEUED)) == 0 && !residency.inL3(page) && !start(page) && !refused)
        {
            enqueue(page);
        }
    }

    /**
     * Starts a backup unless {@code l3.max-backup-pages} are already pinned by backups: a slow L3 must
     * not pin the whole pool (it did, on ext4, until every reserve found the pool full).
     */
    private boolean start(final int page)
    {
        refused = false;
        if (tierCount == 0 || inFlight >= maxInFlight)
        {
            return false;
        }
        final int tier = chooseTier(page);
        if (tier == NONE)
        {
            refused = true; // every tier refused it, counted under its reasons: it stays in the pool without a copy for now
            return false;
        }
        if (!pool.tryPin(page))
        {
            return false;
        }
        tierOf[page] = (byte)tier;
        flags[page] |= IN_FLIGHT;
        inFlight++;
        counters.set(EngineCounter.BACKUPS_IN_FLIGHT, inFlight);
        counters.increment(EngineCounter.BACKUPS_STARTED);
        io.queuePageIo(tier, TierIoBatch.WRITE, page);
        return true;
    }

    /**
     * Puts a page that needs a backup in the backlog, unpinned: it starts when a backup in flight ends,
     * if the page is still there; if eviction takes it first, its copy is counted as skipped.
     */
    private void enqueue(final int page)
    {
        if (tierCount == 0 || (flags[page] & QUEUED) != 0)
        {
            return;
        }
        if (backlog.isFull())
        {
            // Stale entries (pages evicted or backed up since) make room; live ones keep their order.
            for (int n = backlog.size(); n > 0; n--)
            {
                final int p = (int)backlog.peek(0);
                final int g = (int)backlog.peek(1);
                backlog.poll();
                if ((flags[p] & QUEUED) != 0 && PageStateWord.generation(pool.metadata().stateWordAcquire(p)) == g)
                {
                    backlog.add(p, g, 0);
                }
            }
        }
        flags[page] |= QUEUED;
        backlog.add(page, PageStateWord.generation(pool.metadata().stateWordAcquire(page)), 0);
        backlogLive++;
        counters.set(EngineCounter.BACKUPS_QUEUED, backlogLive);
    }

    /** Starts backlogged backups while there is room in flight. */
    private void drainBacklog()
    {
        while (inFlight < maxInFlight && !backlog.isEmpty())
        {
            final int page = (int)backlog.peek(0);
            final int generation = (int)backlog.peek(1);
            backlog.poll();
            final long word = pool.metadata().stateWordAcquire(page);
            if ((flags[page] & QUEUED) == 0 || PageStateWord.state(word) != PageStateWord.SERVING || PageStateWord.generation(word) != generation)
            {
                continue; // stale: the page was evicted, and maybe reused, since
            }
            flags[page] &= ~QUEUED;
            backlogLive--;
            if ((flags[page] & IN_FLIGHT) == 0 && !residency.inL3(page))
            {
                start(page);
            }
        }
        counters.set(EngineCounter.BACKUPS_QUEUED, backlogLive);
    }

    /** A client asks for copies of the pool pages of its keys that L3 lacks. */
    void backupKeys(final ClientRecord r)
    {
        final PageKeyChain keys = r.keys;
        int started = 0;
        for (int i = r.from; i < r.from + r.count; i++)
        {
            final int page = residency.servingPage(index.find(keys.high(i), keys.low(i)), keys.high(i), keys.low(i));
            if (page != NONE && residency.visibleTo(r, page) && (flags[page] & (IN_FLIGHT | QUEUED)) == 0 && !residency.inL3(page))
            {
                if (!start(page))
                {
                    if (refused)
                    {
                        continue;
                    }
                    enqueue(page);
                }
                started++;
            }
        }
        r.finish(started);
    }

    /**
     * @param on whether write-back copies the pages at the cold end of the eviction order before eviction
     *           reaches them ({@code policy.write.clean-ahead}); no effect under another write policy
     */
    void cleanAhead(final boolean on)
    {
        cleansAhead = on && writePolicy == WritePolicy.WRITE_BACK && tierCount > 0;
    }

    /** @return whether pages are copied ahead of eviction */
    boolean cleansAhead()
    {
        return cleansAhead;
    }

    /**
     * Starts the copy of a page eviction will reach soon, so that it leaves without waiting for one. Under
     * write-back a page L3 lacks can leave the pool only once copied; copied at eviction, every reserve
     * that needs its page waits for the copy.
     *
     * @param page a resident page near the cold end of the eviction order
     * @return {@link PoolSpace.EvictionGate#CLEAN_STARTED}, {@link PoolSpace.EvictionGate#CLEAN_NOT_NEEDED}, or
     *         {@link PoolSpace.EvictionGate#CLEAN_NO_ROOM} when no more copies may start now
     */
    int cleanAhead(final int page)
    {
        if (!cleansAhead)
        {
            return PoolSpace.EvictionGate.CLEAN_NO_ROOM;
        }
        // A page whose last copy failed is left to eviction, which spaces its attempts out by the pool's churn.
        if ((flags[page] & (IN_FLIGHT | QUEUED | FAILED)) != 0 || residency.inL3(page))
        {
            return PoolSpace.EvictionGate.CLEAN_NOT_NEEDED;
        }
        if (cleaning >= maxInFlight / 2 || inFlight >= maxInFlight)
        {
            return PoolSpace.EvictionGate.CLEAN_NO_ROOM;
        }
        if (!start(page))
        {
            // Pinned by no one it could pin (not SERVING any more), or refused by every tier: the walk goes on.
            return PoolSpace.EvictionGate.CLEAN_NOT_NEEDED;
        }
        flags[page] |= CLEANING;
        cleaning++;
        counters.increment(EngineCounter.BACKUPS_CLEANED_AHEAD);
        return PoolSpace.EvictionGate.CLEAN_STARTED;
    }

    /** The pool's eviction gate, for what backups imply. */
    int beforeEvict(final int page)
    {
        if ((flags[page] & IN_FLIGHT) != 0)
        {
            return PoolSpace.EvictionGate.SKIP;
        }
        final boolean needsCopy = writePolicy == WritePolicy.WRITE_BACK || (flags[page] & FAILED) != 0;
        if (writePolicy == WritePolicy.NONE || !needsCopy || residency.inL3(page))
        {
            return PoolSpace.EvictionGate.EVICT;
        }
        if (attempts[page] >= MAX_BACKUP_ATTEMPTS)
        {
            return PoolSpace.EvictionGate.EVICT_LOST;
        }
        if (start(page))
        {
            flags[page] |= EVICT_PENDING;
            evictPending++;
            counters.increment(EngineCounter.EVICTIONS_HELD);
            return PoolSpace.EvictionGate.HELD;
        }
        if (refused)
        {
            // Every tier refused it (full, out of service, write budget spent), counted under its reasons: the
            // pool must not fill with pages no tier will take, so it leaves without a copy.
            counters.increment(EngineCounter.BACKUPS_SKIPPED);
            return PoolSpace.EvictionGate.EVICT;
        }
        return PoolSpace.EvictionGate.SKIP;
    }

    /** A page left the pool without an L3 copy after its backups kept failing: counted and said, never silent. */
    void lost(final long keyHigh, final long keyLow)
    {
        counters.increment(EngineCounter.BACKUPS_LOST);
        LOG.log(System.Logger.Level.WARNING, "page {0} left the pool without an L3 copy: its backup failed {1} times; counted in backups_lost",
            new PageKey(keyHigh, keyLow), MAX_BACKUP_ATTEMPTS);
    }

    /** The page left the pool: a copy still waiting in the backlog will never be made. */
    void evicted(final int page)
    {
        if ((flags[page] & QUEUED) != 0)
        {
            // Its write-through copy never started: L3 is slower than the commits. Counted, and said once
            // in a while, since under a slow L3 it happens to every page that waits too long.
            backlogLive--;
            counters.set(EngineCounter.BACKUPS_QUEUED, backlogLive);
            counters.increment(EngineCounter.BACKUPS_SKIPPED);
            final long now = clock.nanoTime();
            if (skippedInWindow++ == 0)
            {
                skipWindowStartNanos = now;
            }
            reportSkips(now);
            answerFlushWaitersIfIdle();
        }
        flags[page] = 0;
        attempts[page] = 0;
    }

    /**
     * Says how many copies never started in the window just ended, once it is over: the total of the
     * window, and the total since start, never the first of them alone.
     */
    private void reportSkips(final long nowNanos)
    {
        if (skippedInWindow == 0 || nowNanos - skipWindowStartNanos < SKIP_WARNING_PERIOD_NS)
        {
            return;
        }
        LOG.log(System.Logger.Level.WARNING, "L3 takes backups more slowly than pages are committed: {0} pages left the pool before their"
                + " backup could start in the last {1} s ({2} since the start, counted in backups_skipped); {3} backups in flight, at most {4}"
                + " (l3.max-backup-pages)", skippedInWindow, Math.max(1, (nowNanos - skipWindowStartNanos) / 1_000_000_000L),
            counters.getOpaque(EngineCounter.BACKUPS_SKIPPED), inFlight, maxInFlight);
        skippedInWindow = 0;
    }

    /** A tier answered the write of key {@code i} of a batch. */
    void onWriteDone(final TierIoBatch batch, final int i)
    {
        if (batch.timedOut)
        {
            return; // this copy ended when its batch timed out; a late answer changes nothing
        }
        end(batch.page[i], batch.tier, batch.refused ? TierStatus.REJECTED : batch.status[i], !batch.refused);
    }

    /** The tier is late with the write of key {@code i} of a batch: the copy ends now, as a failed one. */
    void abandon(final TierIoBatch batch, final int i)
    {
        if ((flags[batch.page[i]] & IN_FLIGHT) != 0)
        {
            end(batch.page[i], batch.tier, TierStatus.TIMEOUT, false); // the batch's timeout is logged once, not per page
        }
    }

    /** Ends a copy: records its outcome, drops its pin, starts the next, lets a held eviction go on. */
    private void end(final int page, final int tier, final TierStatus status, final boolean warn)
    {
        final boolean copied = status == TierStatus.OK;
        if (copied)
        {
            counters.increment(EngineCounter.BACKUPS_COMPLETED);
            counters.add(EngineCounter.L3_BYTES_WRITTEN, pool.frameLength());
            attempts[page] = 0;
            flags[page] &= ~FAILED;
            final long high = pool.metadata().keyHighPlain(page);
            final long low = pool.metadata().keyLowPlain(page);
            final long tag = pool.metadata().namespaceTagPlain(page);
            io.stored(tag, high, low);
            lookups.copiedToL3(io.nameHigh(), io.nameLow());
            if (!index.addTier(high, low, tier, tag))
            {
                counters.increment(EngineCounter.INDEX_FULL);
                lookups.indexMayMiss(tier, "the index was full and could not record a backup");
            }
        }
        else
        {
            counters.increment(EngineCounter.BACKUPS_FAILED);
            if (Probes.mayHaveLanded(status))
            {
                lookups.indexMayMiss(tier, "a backup ended with its outcome unknown (a timeout or an error)");
            }
            if (attempts[page] < Byte.MAX_VALUE)
            {
                attempts[page]++;
            }
            flags[page] |= FAILED;
            if (warn)
            {
                LOG.log(System.Logger.Level.WARNING, "backup of page {0} to tier {1} failed ({2}), attempt {3} of {4}; the page stays in the pool",
                    new PageKey(pool.metadata().keyHighPlain(page), pool.metadata().keyLowPlain(page)), tierNames.get(tier), status, attempts[page],
                    MAX_BACKUP_ATTEMPTS);
            }
        }
        flags[page] &= ~IN_FLIGHT;
        pool.unpin(page);
        inFlight--;
        counters.set(EngineCounter.BACKUPS_IN_FLIGHT, inFlight);
        drainBacklog();
        if ((flags[page] & CLEANING) != 0)
        {
            flags[page] &= ~CLEANING;
            cleaning--;
            // Copied now, it may leave at once: a reserve that found no page can have it.
            space.resumeSpaceWaiters();
        }
        if ((flags[page] & EVICT_PENDING) != 0)
        {
            flags[page] &= ~EVICT_PENDING;
            evictPending--;
            final long word = pool.metadata().stateWordAcquire(page);
            boolean evicted = false;
            if (copied)
            {
                evicted = space.evict(page, word);
            }
            else if (attempts[page] >= MAX_BACKUP_ATTEMPTS)
            {
                final long high = pool.metadata().keyHighPlain(page);
                final long low = pool.metadata().keyLowPlain(page);
                evicted = space.evict(page, word);
                if (evicted)
                {
                    lost(high, low);
                }
            }
            if (!evicted)
            {
                // Pinned meanwhile, or not copied yet: it stays cached, and the next eviction that reaches
                // it tries its backup again, which spaces the attempts out by the pool's own churn.
                space.touch(page, PoolSpace.NONE);
            }
            space.resumeSpaceWaiters();
        }
        answerFlushWaitersIfIdle();
    }

    /**
     * Answers at once, or when every backup started or queued so far has ended, or at {@code l3.io-timeout}
     * with the backups not yet ended as its Result Count.
     */
    void flush(final ClientRecord r)
    {
        if (inFlight == 0 && backlogLive == 0)
        {
            r.finish(0);
            return;
        }
        // Every waiter has the same timeout, so arrival order is deadline order; a client has one
        // request in flight at a time, so the ring never holds more than the clients.
        flushWaiters.add(r);
        flushDeadlines.add(r.opSeq, clock.nanoTime() + flushTimeoutNanos, 0);
    }

    private void answerFlushWaitersIfIdle()
    {
        if (inFlight != 0 || backlogLive != 0)
        {
            return;
        }
        while (!flushWaiters.isEmpty())
        {
            final ClientRecord waiting = flushWaiters.poll();
            final int seq = (int)flushDeadlines.peek(0);
            flushDeadlines.poll();
            if (waiting.awaits(seq) && waiting.op == MessageType.FLUSH)
            {
                waiting.finish(0);
            }
        }
    }

    /** Flushes waiting past {@code l3.io-timeout} are answered with the backups not yet ended; a window of skipped copies is reported once over. */
    @Override
    public void onTime(final long nowNanos)
    {
        reportSkips(nowNanos);
        while (!flushWaiters.isEmpty() && flushDeadlines.peek(1) - nowNanos <= 0)
        {
            final ClientRecord waiting = flushWaiters.poll();
            final int seq = (int)flushDeadlines.peek(0);
            flushDeadlines.poll();
            if (waiting.awaits(seq) && waiting.op == MessageType.FLUSH)
            {
                counters.increment(EngineCounter.FLUSHES_TIMED_OUT);
                LOG.log(System.Logger.Level.WARNING, "flush of client {0} answered after {1} ms (l3.io-timeout) with {2} backups in flight and {3}"
                    + " queued", waiting.id, flushTimeoutNanos / 1_000_000, inFlight, backlogLive);
                waiting.finish(inFlight + backlogLive);
            }
        }
    }
}
