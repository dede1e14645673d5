package io.kvtier.engine.core;

import io.kvtier.client.pool.CountersDescriptor;
import io.kvtier.client.pool.PageStateWord;
import io.kvtier.collections.KeyTable;
import io.kvtier.collections.KeyTableDescriptor;
import io.kvtier.engine.EngineClock;
import io.kvtier.engine.config.MigrationStrategy;
import io.kvtier.engine.index.PageIndex;
import io.kvtier.engine.operations.AdmissionReason;
import io.kvtier.engine.operations.MigrationMethod;
import io.kvtier.engine.operations.MigrationReport;
import io.kvtier.engine.operations.OperationException;
import io.kvtier.engine.operations.Retention;
import io.kvtier.engine.pool.PageFrames;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;
import io.kvtier.spi.PageKey;
import io.kvtier.spi.TierStatus;

import java.lang.foreign.Arena;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Migrations between L3 tiers: a source tier's strategy (its fill past its trigger) or an operator's
 * request moves cold pages to a target tier by copy, by mark, or both.
 *
 * <p>A copy runs on a free pool page that nobody else can see (never one evicted for it): the page is
 * read from the source into it and verified as every L3 read is, written to the target, and only when
 * the target has answered OK is the key recorded for the target and, under {@code move}, dropped from the
 * source index and removed from the source. So at every instant each page is readable from at least one
 * tier: before the target's answer from the source, after it from the target (and the source until its
 * removal lands); a reader that finds the source's copy gone tries the other tiers. A kill at any point
 * leaves the object in the source, or in both, never in neither; a write the target never finished is a
 * temporary object (the tiers write by temp-and-rename) or a frame a later load refuses.
 *
 * <p>A mark sends the pages' next backups straight to the target ({@link Marks}). {@code both} copies,
 * and marks every page whose copy admission refused or that found no free page to copy through.
 *
 * <p>Every page a migration considers goes through admission ({@link Admission}): it is admitted or
 * refused with a named reason, counted per migration and in the engine's counters. Engine thread only.
 */
final class Migrations implements TimedPart
{
    private static final System.Logger LOG = System.getLogger(Migrations.class.getName());
    private static final int NONE = -1;
    private static final AdmissionReason[] REASONS = AdmissionReason.values();
    /** Index slots a migration's sampler looks at per tick. */
    private static final int SCAN_PER_TICK = 4096;
    /** Keys that may be in flight across all migrations. */
    private static final int MAX_MOVING = 1 << 14;
    /** Migrations remembered for reports once they end. */
    private static final int REMEMBERED = 64;
    private static final long MARK_FLUSH_NS = 1_000_000_000L;
    private static final byte READING = 1;
    private static final byte WRITING = 2;
    private static final byte ABANDONED = 4;

    private final PagePool pool;
    private final PageIndex index;
    private final EngineCounters counters;
    private final EngineClock clock;
    private final PageSpace space;
    private final TierQueue io;
    private final TierLevels levels;
    private final Admission admission;
    private final Marks marks;
    private final Probes lookups;
    private final Backups backups;
    private final List<MigrationStrategy> strategies;
    private final int[] strategyOf;
    private final Job[] jobOfPage;
    private final byte[] phase;
    private final KeyTable moving;
    private final ArrayDeque<Job> running = new ArrayDeque<>();
    private final ArrayDeque<Job> ended = new ArrayDeque<>();
    private final Job[] strategyJobs;
    private final long frameLength;
    /** Removals from a source that found no free batch: keys, then tags and tiers; retried on ticks. */
    private final LongRing pendingRemoves = new LongRing(1 << 16, 3);
    private final LongRing pendingTags = new LongRing(1 << 16, 3);
    private long nextId = 1;
    private long startNanos;

    /** One migration: what it moves, how, and its progress. */
    static final class Job
    {
        final long id;
        final String origin;
        final int source;
        final int target;
        final MigrationMethod method;
        final Retention retention;
        final int batch;
        final int minAgeSeconds;
        final TokenBucket rate;
        final int concurrency;
        final long markTtlNanos;
        final String what;
        /** Explicit keys as high, low pairs; null for a sampling rule. */
        final long[] keys;
        final long namespace;
        final double fraction;
        final boolean continuous;
        long remaining;
        int keyCursor;
        long scanCursor;
        long scanned;
        /** Sampled candidates as high, low, tag triples, oldest first, and the next one to consider. */
        long[] candidates = new long[0];
        long[] ages;
        long[] chosen;
        int candidateCount;
        int candidateCursor;
        long[] pendingMarks = new long[64];
        int pendingMarkCount;
        long lastMarkFlushNanos;
        int inFlight;
        long considered;
        long admitted;
        long copied;
        long marked;
        long failed;
        long bytes;
        final long[] refusals = new long[REASONS.length];
        final Instant started = Instant.now();
        Instant endedAt;
        String state = "running";
        String message;
        boolean stopping;

        Job(final long id, final String origin, final int source, final int target, final MigrationMethod method, final Retention retention,
            final int batch, final long minAgeNanos, final TokenBucket rate, final int concurrency, final long markTtlNanos, final String what,
            final long[] keys, final long namespace, final double fraction, final long limit, final boolean continuous)
        {
            this.id = id;
            this.origin = origin;
            this.source = source;
            this.target = target;
            this.method = method;
            this.retention = retention;
            this.batch = batch;
            this.minAgeSeconds = (int)Math.min(Integer.MAX_VALUE, (minAgeNanos + 999_999_999L) / 1_000_000_000L);
            this.rate = rate;
            this.concurrency = concurrency;
            this.markTtlNanos = markTtlNanos;
            this.what = what;
            this.keys = keys;
            this.namespace = namespace;
            this.fraction = fraction;
            this.remaining = limit;
            this.continuous = continuous;
        }

        boolean copies()
        {
            return method != MigrationMethod.MARK;
        }
    }

    Migrations(final PagePool pool, final PageIndex index, final EngineCounters counters, final EngineClock clock, final PageSpace space,
               final TierQueue io, final TierLevels levels, final Admission admission, final Marks marks, final Probes lookups, final Backups backups,
               final List<MigrationStrategy> strategies)
    {
        this.pool = pool;
        this.index = index;
        this.counters = counters;
        this.clock = clock;
        this.space = space;
        this.io = io;
        this.levels = levels;
        this.admission = admission;
        this.marks = marks;
        this.lookups = lookups;
        this.backups = backups;
        this.strategies = List.copyOf(strategies);
        this.strategyOf = new int[levels.count()];
        Arrays.fill(strategyOf, NONE);
        for (int s = 0; s < this.strategies.size(); s++)
        {
            strategyOf[levels.indexOf(this.strategies.get(s).source())] = s;
        }
        this.strategyJobs = new Job[this.strategies.size()];
        this.jobOfPage = new Job[pool.pageCount()];
        this.phase = new byte[pool.pageCount()];
        this.moving = KeyTable.format(Arena.ofAuto().allocate(KeyTableDescriptor.regionLength(MAX_MOVING), 8), MAX_MOVING);
        this.frameLength = pool.frameLength();
        this.startNanos = clock.nanoTime();
    }

    /**
     * @param page a pool page
     * @return whether a migration's copy runs through it (its tier answers are the migration's)
     */
    boolean owns(final int page)
    {
        return jobOfPage[page] != null;
    }

    /**
     * @param tier a tier
     * @return its strategy, or null
     */
    MigrationStrategy strategyOf(final int tier)
    {
        return strategyOf[tier] == NONE ? null : strategies.get(strategyOf[tier]);
    }

    // Starting migrations

    /**
     * Starts a migration an operator asked for.
     *
     * @return its report
     */
    MigrationReport startAdmin(final int source, final int target, final MigrationMethod method, final Retention retention, final long[] keys,
                               final long namespace, final long minAgeNanos, final double fraction, final int limit)
    {
        final MigrationStrategy strategy = strategyOf(source);
        final long rateBytes = strategy != null ? strategy.rateBytes() : 256L << 20;
        final int concurrency = strategy != null ? strategy.concurrency() : 16;
        final long ttl = strategy != null ? strategy.markTtl().toNanos() : 600_000_000_000L;
        final long id = nextId++;
        final Job job = new Job(id, "admin", source, target, method, retention, 64, minAgeNanos,
            new TokenBucket(rateBytes, Math.max(rateBytes / 10, frameLength), clock.nanoTime()), concurrency, ttl,
            "migration " + id + " (" + levels.name(source) + " to " + levels.name(target) + ")", keys, namespace, fraction,
            keys != null ? keys.length / 2 : limit, false);
        running.add(job);
        counters.set(EngineCounter.MIGRATIONS_RUNNING, running.size());
        LOG.log(System.Logger.Level.INFO, "{0} started by an operator: {1} {2}, {3}", job.what, method.label(), keys != null ? (keys.length / 2)
            + " pages named" : "up to " + limit + " sampled pages", retention.label());
        pump(job, clock.nanoTime());
        return report(job);
    }

    /**
     * Answers what a migration would admit now, and why not, changing nothing: each page is judged as the
     * migration would judge it, without counting, copying or marking.
     */
    MigrationReport dryRun(final int source, final int target, final MigrationMethod method, final Retention retention, final long[] keys,
                           final long namespace, final long minAgeNanos, final double fraction, final int limit)
    {
        final Job job = new Job(0, "admin", source, target, method, retention, 64, minAgeNanos, null, 1, 1, "dry run", keys, namespace,
            fraction, keys != null ? keys.length / 2 : limit, false);
        if (keys != null)
        {
            for (int i = 0; i < keys.length; i += 2)
            {
                judgeForReport(job, keys[i], keys[i + 1]);
            }
        }
        else
        {
            final long slots = index.table().slotCount();
            for (long slot = 0; slot < slots && job.remaining > 0; slot++)
            {
                if (sampled(job, slot))
                {
                    judgeForReport(job, index.table().keyHigh(slot), index.table().keyLow(slot));
                    job.remaining--;
                }
            }
        }
        job.state = "dry-run";
        job.endedAt = Instant.now();
        return report(job);
    }

    private void judgeForReport(final Job job, final long high, final long low)
    {
        job.considered++;
        final AdmissionReason reason = judge(job, high, low, clock.nanoTime(), false);
        if (reason == null)
        {
            job.admitted++;
        }
        else
        {
            job.refusals[reason.ordinal()]++;
        }
    }

    /** Starts or stops each strategy by its source's fill, and moves every running migration on. */
    @Override
    public void onTime(final long nowNanos)
    {
        index.clockSeconds((int)Math.min(Integer.MAX_VALUE, (nowNanos - startNanos) / 1_000_000_000L + 1));
        retryRemoves();
        for (int s = 0; s < strategies.size(); s++)
        {
            final MigrationStrategy strategy = strategies.get(s);
            final int source = levels.indexOf(strategy.source());
            final boolean triggered = levels.knowsCapacity(source) && levels.fill(source) > strategy.trigger();
            final Job job = strategyJobs[s];
            if (triggered && (job == null || job.endedAt != null))
            {
                strategyJobs[s] = startStrategy(strategy, source, nowNanos);
            }
            else if (!triggered && job != null && job.endedAt == null && !job.stopping)
            {
                job.stopping = true; // its copies in flight finish; it ends when they have
            }
        }
        if (running.isEmpty())
        {
            return;
        }
        for (int n = running.size(); n > 0; n--)
        {
            final Job job = running.poll();
            pump(job, nowNanos);
            flushMarks(job, nowNanos, false);
            if (isDone(job))
            {
                end(job, "done", null);
            }
            else
            {
                running.add(job);
            }
        }
    }

    private Job startStrategy(final MigrationStrategy strategy, final int source, final long nowNanos)
    {
        final long id = nextId++;
        final int target = levels.indexOf(strategy.target());
        final Job job = new Job(id, "strategy", source, target, strategy.method(), strategy.retention(), strategy.batch(),
            strategy.minAge().toNanos(), new TokenBucket(strategy.rateBytes(), Math.max(strategy.rateBytes() / 10, frameLength), nowNanos),
            strategy.concurrency(), strategy.markTtl().toNanos(), "migration " + id + " (" + strategy.source() + " to " + strategy.target() + ")",
            null, 0, 1.0, Long.MAX_VALUE, true);
        running.add(job);
        counters.set(EngineCounter.MIGRATIONS_RUNNING, running.size());
        LOG.log(System.Logger.Level.INFO, "{0} started: tier {1} is {2}% full, above its trigger of {3}%; {4}", job.what, strategy.source(),
            Math.round(levels.fill(source) * 100), Math.round(strategy.trigger() * 100), strategy.describe());
        return job;
    }

    private boolean isDone(final Job job)
    {
        if (job.inFlight > 0)
        {
            return false;
        }
        if (job.stopping || job.remaining <= 0)
        {
            return true;
        }
        if (job.keys != null)
        {
            return job.keyCursor >= job.keys.length;
        }
        // A one-off sampling rule is done once it has swept the whole index.
        return !job.continuous && job.scanned >= index.table().slotCount() && job.candidateCursor >= job.candidateCount;
    }

    private void end(final Job job, final String state, final String message)
    {
        flushMarks(job, clock.nanoTime(), true);
        job.state = state;
        job.message = message;
        job.endedAt = Instant.now();
        running.remove(job);
        ended.addFirst(job);
        while (ended.size() > REMEMBERED)
        {
            ended.removeLast();
        }
        counters.set(EngineCounter.MIGRATIONS_RUNNING, running.size());
        LOG.log(System.Logger.Level.INFO, "{0} {1}: {2} considered, {3} admitted, {4} copied, {5} marked, {6} failed{7}", job.what, state,
            job.considered, job.admitted, job.copied, job.marked, job.failed, message == null ? "" : ": " + message);
    }

    // Choosing pages

    /** Considers pages until the migration has as many copies in flight as it may, or runs out of pages or rate for now. */
    private void pump(final Job job, final long nowNanos)
    {
        if (job.stopping)
        {
            return;
        }
        // At most a batch's worth of pages per tick: a migration whose every page is refused must not hold the engine thread.
        for (int budget = job.batch; budget > 0 && job.inFlight < job.concurrency && job.remaining > 0; budget--)
        {
            final long high;
            final long low;
            if (job.keys != null)
            {
                if (job.keyCursor >= job.keys.length)
                {
                    return;
                }
                high = job.keys[job.keyCursor];
                low = job.keys[job.keyCursor + 1];
            }
            else
            {
                if (job.candidateCursor >= job.candidateCount && !sample(job))
                {
                    return;
                }
                high = job.candidates[3 * job.candidateCursor];
                low = job.candidates[3 * job.candidateCursor + 1];
            }
            final int outcome = consider(job, high, low, nowNanos);
            if (outcome == WAIT)
            {
                return; // the same page is considered again later
            }
            if (job.keys != null)
            {
                job.keyCursor += 2;
            }
            else
            {
                job.candidateCursor++;
            }
            job.remaining--;
        }
    }

    /**
     * Fills the migration's candidates from the next stretch of the index: keys its source holds (of its
     * namespace, in its fraction), the oldest first. A continuous migration wraps around; a one-off one
     * stops after one sweep.
     *
     * @return whether there are candidates
     */
    private boolean sample(final Job job)
    {
        final KeyTable table = index.table();
        final long slots = table.slotCount();
        if (!job.continuous && job.scanned >= slots)
        {
            return false;
        }
        int count = 0;
        final int want = Math.max(job.batch, 1);
        if (job.candidates.length < 3 * SCAN_PER_TICK)
        {
            job.candidates = new long[3 * SCAN_PER_TICK];
            job.ages = new long[SCAN_PER_TICK];
            job.chosen = new long[3 * SCAN_PER_TICK];
        }
        final long[] ages = job.ages;
        final long stop = Math.min(SCAN_PER_TICK, job.continuous ? slots : slots - job.scanned);
        for (long step = 0; step < stop; step++)
        {
            final long slot = job.scanCursor;
            job.scanCursor = (job.scanCursor + 1) & (slots - 1);
            job.scanned++;
            if (sampled(job, slot))
            {
                final long high = table.keyHigh(slot);
                final long low = table.keyLow(slot);
                job.candidates[3 * count] = high;
                job.candidates[3 * count + 1] = low;
                job.candidates[3 * count + 2] = table.aux(slot);
                ages[count] = ((long)index.ageSeconds(high, low) << 32) | count;
                count++;
            }
        }
        if (count == 0)
        {
            job.candidateCount = 0;
            job.candidateCursor = 0;
            return false;
        }
        // The oldest first: sort by age, keep the batch's worth.
        Arrays.sort(ages, 0, count);
        final int keep = Math.min(want, count);
        final long[] chosen = job.chosen;
        for (int k = 0; k < keep; k++)
        {
            final int at = (int)(ages[count - 1 - k] & 0xFFFF_FFFFL);
            System.arraycopy(job.candidates, 3 * at, chosen, 3 * k, 3);
        }
        System.arraycopy(chosen, 0, job.candidates, 0, 3 * keep);
        job.candidateCount = keep;
        job.candidateCursor = 0;
        return true;
    }

    /** @return whether an index slot holds a key the migration's rule takes */
    private boolean sampled(final Job job, final long slot)
    {
        final KeyTable table = index.table();
        if (!table.isOccupied(slot) || (index.tiers((int)slot) & (1 << job.source)) == 0)
        {
            return false;
        }
        if (job.namespace != 0 && table.aux(slot) != job.namespace)
        {
            return false;
        }
        if (job.fraction < 1.0)
        {
            // A fixed share of the keys, the same ones every time: the key's low half is a hash already.
            final double position = (double)(table.keyLow(slot) >>> 11) / (double)(1L << 53);
            if (position >= job.fraction)
            {
                return false;
            }
        }
        if (job.method == MigrationMethod.MARK && marks.tierFor(table.keyHigh(slot), table.keyLow(slot), table.aux(slot)) == job.target)
        {
            return false; // marked already: nothing left to do for it
        }
        return true;
    }

    private static final int TAKEN = 0;
    private static final int WAIT = 1;

    /**
     * Judges one page and acts on the verdict: copies it, marks it, or counts why not.
     *
     * @return {@link #WAIT} when the page should be considered again later (no free page or no rate now)
     */
    private int consider(final Job job, final long high, final long low, final long nowNanos)
    {
        final AdmissionReason reason = judge(job, high, low, nowNanos, true);
        job.considered++;
        if (reason != null && admission.refuse(reason, job.what))
        {
            job.refusals[reason.ordinal()]++;
            if (job.method == MigrationMethod.BOTH)
            {
                addPendingMark(job, high, low);
                return TAKEN;
            }
            if (reason == AdmissionReason.RATE_LIMITED || reason == AdmissionReason.WRITE_BUDGET_SPENT
                || (job.continuous && (reason == AdmissionReason.TARGET_FULL || reason == AdmissionReason.TARGET_OUT_OF_SERVICE)))
            {
                // A refusal of the whole migration for now, not of this page: the page is considered again on a
                // later tick (a strategy also waits out a full or absent target; an operator's request ends).
                job.considered--;
                return WAIT;
            }
            return TAKEN;
        }
        if (reason == null)
        {
            admission.admitted();
        }
        job.admitted++;
        if (!job.copies())
        {
            addPendingMark(job, high, low);
            return TAKEN;
        }
        final int slot = index.find(high, low);
        final long tag = slot == KeyTable.NONE ? 0 : index.tierTag(slot);
        if (!startCopy(job, high, low, tag, nowNanos))
        {
            if (job.method == MigrationMethod.BOTH)
            {
                addPendingMark(job, high, low); // no free page to copy through: marked instead
                return TAKEN;
            }
            job.admitted--;
            job.considered--;
            return WAIT;
        }
        return TAKEN;
    }

    /**
     * The first reason that refuses a page for this migration, or null.
     *
     * @param spend whether an admitted copy takes its bytes from the rate and the budget
     */
    private AdmissionReason judge(final Job job, final long high, final long low, final long nowNanos, final boolean spend)
    {
        if (moving.find(high, low) != KeyTable.NONE)
        {
            return AdmissionReason.ALREADY_MIGRATING;
        }
        final int slot = index.find(high, low);
        final int bits = slot == KeyTable.NONE ? 0 : index.tiers(slot);
        if ((bits & (1 << job.source)) == 0)
        {
            return AdmissionReason.SOURCE_MISSING;
        }
        if ((bits & (1 << job.target)) != 0)
        {
            return AdmissionReason.TARGET_HOLDS;
        }
        final int page = index.page(slot);
        if (page != PageIndex.NO_PAGE)
        {
            if (backups.isCopyingTo(page, job.target))
            {
                return AdmissionReason.TARGET_WRITING;
            }
            final long word = pool.metadata().stateWordAcquire(page);
            if (PageStateWord.state(word) != PageStateWord.SERVING || PageStateWord.pins(word) > 0)
            {
                return AdmissionReason.POOL_BUSY;
            }
        }
        if (index.ageSeconds(high, low) < job.minAgeSeconds)
        {
            return AdmissionReason.TOO_YOUNG;
        }
        if (!io.inService(job.target))
        {
            return AdmissionReason.TARGET_OUT_OF_SERVICE;
        }
        if (levels.full(job.target))
        {
            return AdmissionReason.TARGET_FULL;
        }
        if (job.copies())
        {
            if (job.rate != null && !job.rate.allows(frameLength, nowNanos))
            {
                return AdmissionReason.RATE_LIMITED;
            }
            if (!levels.budgetAllows(job.target, frameLength, nowNanos))
            {
                return AdmissionReason.WRITE_BUDGET_SPENT;
            }
        }
        return null;
    }

    // Copying

    private boolean startCopy(final Job job, final long high, final long low, final long tag, final long nowNanos)
    {
        if (moving.size() >= MAX_MOVING)
        {
            return false; // as many copies in flight as the engine tracks: this one waits, as for a free page
        }
        final int page = space.allocateFree();
        if (page == NONE)
        {
            return false;
        }
        final long word = pool.metadata().stateWordAcquire(page);
        pool.metadata().keyPlain(page, high, low);
        pool.metadata().namespaceTagPlain(page, tag);
        pool.metadata().reservationPlain(page, EngineConductor.ENGINE_OWNER, 0);
        pool.metadata().hitCountPlain(page, 0);
        // WRITING and bound to no key: no client can find, pin or evict it while the copy runs.
        pool.metadata().compareAndSetStateWord(page, word, PageStateWord.word(PageStateWord.generation(word), 0, PageStateWord.WRITING));
        jobOfPage[page] = job;
        phase[page] = READING;
        moving.insert(high, low);
        job.inFlight++;
        if (job.rate != null)
        {
            job.rate.take(frameLength, nowNanos);
        }
        levels.spendBudget(job.target, frameLength, nowNanos);
        counters.increment(EngineCounter.L3_READS);
        io.queuePageIo(job.source, TierIoBatch.READ, page);
        return true;
    }

    /** The source answered a copy's read. */
    void onReadDone(final TierIoBatch batch, final int i)
    {
        final int page = batch.page[i];
        final Job job = jobOfPage[page];
        final long high = batch.keyHigh[i];
        final long low = batch.keyLow[i];
        if ((phase[page] & ABANDONED) != 0)
        {
            release(page, null, high, low, true); // the late answer of a read given up on: the page rests before reuse
            return;
        }
        if (batch.refused)
        {
            fail(page, job, high, low, false, "the source was out of service");
            return;
        }
        final TierStatus status = batch.status[i];
        if (status == TierStatus.OK && batch.check[i] == PageFrames.FrameCheck.VALID)
        {
            if (!io.inService(job.target))
            {
                fail(page, job, high, low, false, "the target left service");
                return;
            }
            phase[page] = WRITING;
            io.queuePageIo(job.target, TierIoBatch.WRITE, page);
            return;
        }
        switch (status)
        {
            case OK, CORRUPT ->
            {
                // The source's copy is bad: it is removed from the source, as a load would, never copied.
                counters.increment(EngineCounter.L3_CORRUPT);
                LOG.log(System.Logger.Level.WARNING, "{0}: page {1} in tier {2} failed verification ({3}); not copied, removed from the source",
                    job.what, new PageKey(high, low), levels.name(job.source), status == TierStatus.OK ? batch.check[i] : "tier reported corrupt");
                index.removeTier(high, low, job.source);
                io.queueKeyIo(job.source, TierIoBatch.REMOVE, high, low, batch.tag[i], EngineConductor.ENGINE_OWNER, 0, 0);
            }
            case NOT_FOUND ->
            {
                counters.increment(EngineCounter.L3_READ_MISSES);
                index.removeTier(high, low, job.source);
            }
            default -> counters.increment(EngineCounter.L3_ERRORS);
        }
        final boolean uncertain = status != TierStatus.OK && status != TierStatus.CORRUPT && status != TierStatus.NOT_FOUND;
        fail(page, job, high, low, uncertain, "the source's read answered " + status);
    }

    /** The source is late with a copy's read: the copy fails now, and its page waits for the answer. */
    void abandonRead(final int page)
    {
        if ((phase[page] & ABANDONED) != 0)
        {
            return;
        }
        phase[page] |= ABANDONED;
        final Job job = jobOfPage[page];
        job.failed++;
        job.inFlight--; // the migration goes on (and may end) without it; the page stays owned until the tier answers
        counters.increment(EngineCounter.MIGRATION_FAILURES);
        moving.remove(pool.metadata().keyHighPlain(page), pool.metadata().keyLowPlain(page));
    }

    /** The target answered a copy's write. */
    void onWriteDone(final TierIoBatch batch, final int i)
    {
        final int page = batch.page[i];
        final Job job = jobOfPage[page];
        final long high = batch.keyHigh[i];
        final long low = batch.keyLow[i];
        final long tag = batch.tag[i];
        if (batch.refused || batch.status[i] != TierStatus.OK)
        {
            if (!batch.refused && Probes.mayHaveLanded(batch.status[i]))
            {
                lookups.indexMayMiss(job.target, "a migration's write ended with its outcome unknown (a timeout or an error)");
            }
            fail(page, job, high, low, !batch.refused, "the target's write answered " + (batch.refused ? "REJECTED" : batch.status[i]));
            return;
        }
        io.stored(tag, high, low);
        lookups.copiedToL3(io.nameHigh(), io.nameLow());
        final boolean recorded = index.addTier(high, low, job.target, tag);
        if (!recorded)
        {
            counters.increment(EngineCounter.INDEX_FULL);
            lookups.indexMayMiss(job.target, "the index was full and could not record a migrated page");
        }
        job.copied++;
        job.bytes += frameLength;
        counters.increment(EngineCounter.PAGES_MIGRATED);
        counters.add(EngineCounter.MIGRATION_BYTES, frameLength);
        if (job.retention == Retention.MOVE && recorded)
        {
            // Only now, with the target's copy written and recorded, does the source's go: first from the
            // index, so no new read picks it, then from the tier.
            index.removeTier(high, low, job.source);
            remove(job.source, high, low, tag);
            counters.increment(EngineCounter.L3_EVICTIONS);
            counters.addTier(job.source, CountersDescriptor.TIER_EVICTIONS, 1);
        }
        release(page, job, high, low, false);
    }

    /** The target is late with a copy's write: the copy fails now; the page rests, as the tier may still read it. */
    void abandonWrite(final TierIoBatch batch, final int i)
    {
        final int page = batch.page[i];
        final Job job = jobOfPage[page];
        if (job != null)
        {
            lookups.indexMayMiss(job.target, "a migration's write timed out");
            fail(page, job, batch.keyHigh[i], batch.keyLow[i], true, "the target's write timed out");
        }
    }

    private void fail(final int page, final Job job, final long high, final long low, final boolean quarantine, final String why)
    {
        job.failed++;
        counters.increment(EngineCounter.MIGRATION_FAILURES);
        LOG.log(System.Logger.Level.DEBUG, "{0}: copy of page {1} failed: {2}; it stays where it was", job.what, new PageKey(high, low), why);
        release(page, job, high, low, quarantine);
    }

    /** Gives a copy's page back (after quarantine when a tier may still touch it); {@code job} null for a read given up on before. */
    private void release(final int page, final Job job, final long high, final long low, final boolean quarantine)
    {
        final long word = pool.metadata().stateWordAcquire(page);
        if (!pool.metadata().compareAndSetStateWord(page, word, PageStateWord.word(PageStateWord.generation(word) + 1, 0, PageStateWord.FREE)))
        {
            throw new IllegalStateException("migration page " + page + " changed under the engine");
        }
        jobOfPage[page] = null;
        phase[page] = 0;
        if (job != null)
        {
            moving.remove(high, low);
            job.inFlight--;
        }
        if (quarantine)
        {
            space.quarantine(page);
        }
        else
        {
            space.free(page);
            space.resumeSpaceWaiters();
        }
    }

    /**
     * Removes an object from a tier, now or, when the tier has no batch free, on a later tick: the index no
     * longer names it there, so a removal put off only leaves bytes no read picks.
     */
    void remove(final int tier, final long high, final long low, final long tag)
    {
        if (!pendingRemoves.isEmpty() || !io.queueKeyIo(tier, TierIoBatch.REMOVE, high, low, tag, EngineConductor.ENGINE_OWNER, 0, 0))
        {
            if (pendingRemoves.isFull())
            {
                LOG.log(System.Logger.Level.WARNING, "tier {0}: {1} removals wait for a free batch; the removal of page {2} is dropped, and"
                    + " the tier keeps its object until its own eviction takes it", levels.name(tier), pendingRemoves.size(), new PageKey(high, low));
                return;
            }
            pendingRemoves.add(high, low, 0);
            pendingTags.add(tag, tier, 0);
        }
    }

    private void retryRemoves()
    {
        while (!pendingRemoves.isEmpty())
        {
            final long high = pendingRemoves.peek(0);
            final long low = pendingRemoves.peek(1);
            final long tag = pendingTags.peek(0);
            final int tier = (int)pendingTags.peek(1);
            if (!io.queueKeyIo(tier, TierIoBatch.REMOVE, high, low, tag, EngineConductor.ENGINE_OWNER, 0, 0))
            {
                return;
            }
            pendingRemoves.poll();
            pendingTags.poll();
        }
    }

    // Marking

    private void addPendingMark(final Job job, final long high, final long low)
    {
        if (job.pendingMarkCount * 2 + 2 > job.pendingMarks.length)
        {
            job.pendingMarks = Arrays.copyOf(job.pendingMarks, job.pendingMarks.length * 2);
        }
        job.pendingMarks[2 * job.pendingMarkCount] = high;
        job.pendingMarks[2 * job.pendingMarkCount + 1] = low;
        job.pendingMarkCount++;
    }

    /** Marks the pages a migration chose to mark, once a second at most (each call makes one mark). */
    private void flushMarks(final Job job, final long nowNanos, final boolean force)
    {
        if (job.pendingMarkCount == 0 || (!force && nowNanos - job.lastMarkFlushNanos < MARK_FLUSH_NS))
        {
            return;
        }
        job.lastMarkFlushNanos = nowNanos;
        final long[] pairs = Arrays.copyOf(job.pendingMarks, 2 * job.pendingMarkCount);
        try
        {
            marks.add(job.target, pairs, 0, job.markTtlNanos, "migration " + job.id);
            job.marked += job.pendingMarkCount;
        }
        catch (final OperationException ex)
        {
            job.failed += job.pendingMarkCount;
            LOG.log(System.Logger.Level.WARNING, "{0}: {1} pages could not be marked: {2}", job.what, job.pendingMarkCount, ex.getMessage());
        }
        job.pendingMarkCount = 0;
    }

    // Reports

    /**
     * @param id a migration's id
     * @return its report, or null when none of that id is remembered
     */
    MigrationReport report(final long id)
    {
        for (final Job job : running)
        {
            if (job.id == id)
            {
                return report(job);
            }
        }
        for (final Job job : ended)
        {
            if (job.id == id)
            {
                return report(job);
            }
        }
        return null;
    }

    /** @return every remembered migration, the newest first */
    List<MigrationReport> reports()
    {
        final List<MigrationReport> result = new ArrayList<>();
        for (final Job job : running)
        {
            result.add(report(job));
        }
        for (final Job job : ended)
        {
            result.add(report(job));
        }
        result.sort((a, b) -> Long.compare(b.id(), a.id()));
        return result;
    }

    private MigrationReport report(final Job job)
    {
        final Map<String, Long> refusals = new LinkedHashMap<>();
        for (final AdmissionReason reason : REASONS)
        {
            if (job.refusals[reason.ordinal()] > 0)
            {
                refusals.put(reason.label(), job.refusals[reason.ordinal()]);
            }
        }
        return new MigrationReport(job.id, job.origin, job.state, levels.name(job.source), levels.name(job.target), job.method, job.retention,
            job.considered, job.admitted, job.copied, job.marked, job.failed, job.bytes, refusals, job.started,
            job.endedAt, job.message);
    }

    /**
     * @param high a key's high half
     * @param low  its low half
     * @return whether a migration is copying the key now
     */
    boolean isMoving(final long high, final long low)
    {
        return moving.find(high, low) != KeyTable.NONE;
    }
}
