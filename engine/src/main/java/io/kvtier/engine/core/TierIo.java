package io.kvtier.engine.core;

import io.kvtier.client.L3ObjectName;
import io.kvtier.engine.EngineClock;
import io.kvtier.engine.index.PageIndex;
import io.kvtier.client.pool.CountersDescriptor;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;
import io.kvtier.spi.TierStatus;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;

/**
 * Tier I/O scheduling: the batches handed to each tier, one open batch per tier and operation that
 * requests fill and that goes out at the end of each ring batch, a bounded number in flight per tier,
 * pages waiting for a batch (or, for a tier the engine does not trust, for a staging frame) when all
 * are in flight, the timeout of a batch a tier is late with, and whether each tier is in service. Owns
 * the batches, those queues and the tiers' service states; the parts that asked for the I/O get each
 * key's answer.
 *
 * <p>Batches go out through each tier's {@link TierCaller}, never by calling the tier on the engine
 * thread. A tier leaves service in two ways:
 * <ul>
 *   <li><b>stuck</b>: a call that has not returned, or a batch not completed, within
 *       {@code l3.io-timeout}. Logged once, counted in {@code l3_stuck}. Every batch of the tier is
 *       answered at once: those still queued for a call are refused, the others time out (reads and
 *       probes answered as misses, backups ended as failed). Later batches are refused as they are
 *       submitted: reads and probes are misses, backups failures, counted in {@code l3_refused}. The
 *       tier comes back into service, logged, once its stuck call has returned and every batch it was
 *       handed has come back: a tier that was slow rather than broken serves again, and one that never
 *       answers stays out.</li>
 *   <li><b>out of service</b> for good, after {@code l3.late-write-limit} pages it was caught writing
 *       after their load ({@link Reverifications}).</li>
 * </ul>
 * The state shows as the value of the tier's info record in the pool's counters
 * ({@link CountersDescriptor#TIER_IN_SERVICE}, ...), which {@code kvtier stat} prints.
 */
final class TierIo implements TierQueue, TimedPart
{
    /**
     * Where each key's answer from a tier goes: the conductor, which hands it to the part that owns what
     * it concerns ({@link Loads} reads, {@link Backups} writes, {@link Lookups} probes). Engine thread only.
     */
    interface Completions
    {
        /**
         * A key of a read batch completed.
         *
         * @param batch the batch
         * @param i     the key's index in it
         */
        void readDone(TierIoBatch batch, int i);

        /**
         * A key of a write batch completed.
         *
         * @param batch the batch
         * @param i     the key's index in it
         */
        void writeDone(TierIoBatch batch, int i);

        /**
         * A key of an exists batch completed.
         *
         * @param batch the batch
         * @param i     the key's index in it
         */
        void existsDone(TierIoBatch batch, int i);

        /**
         * A read that will never complete (its tier timed out or left service): the load ends.
         *
         * @param page the page it was loading into
         */
        void readAbandoned(int page);

        /**
         * A write that will never complete.
         *
         * @param batch the batch
         * @param i     the key's index in it
         */
        void writeAbandoned(TierIoBatch batch, int i);

        /**
         * A probe that will never be answered: answered as the tier's silence means.
         *
         * @param batch the batch
         * @param i     the key's index in it
         */
        void existsAbandoned(TierIoBatch batch, int i);
    }

    private static final System.Logger LOG = System.getLogger(TierIo.class.getName());
    private static final int NONE = -1;

    private final PagePool pool;
    private final EngineCounters counters;
    private final EngineClock clock;
    private final TierCaller[] callers;
    private final List<String> tierNames;
    private final int tierCount;
    private final long ioTimeoutNanos;
    private final StagingFrames staging;
    private final boolean[] staged;
    private final TierIoBatch[][] openBatch;
    private final ArrayDeque<TierIoBatch>[][] freeBatches;
    /** Every batch, free or not, per tier and operation: for {@link #mayStillTouchMemory}. */
    private final TierIoBatch[][][] allBatches;
    private final TierIoBatch[] inflight;
    private int inflightCount;
    private final int[] ioNext;
    private final int[][] ioHead;
    private final int[][] ioTail;
    private final ArrayDeque<TierIoBatch> doneOnEngineThread;
    /** Per tier: {@link CountersDescriptor#TIER_IN_SERVICE}, {@link CountersDescriptor#TIER_STUCK} or {@link CountersDescriptor#TIER_OUT_OF_SERVICE}. */
    private final int[] service;
    private final long[] outSinceNanos;
    private int inServiceMask;
    private final Completions completions;
    /** Names objects in L3; also the one the engine thread uses for the names it looks up itself. */
    private final L3ObjectName names;
    private final L3NameCache nameKeys;

    /**
     * @param callers   per tier, what makes its calls
     * @param staging   the staging frames, or null when every tier is trusted
     * @param staged    per tier, whether its reads land in staging frames (it is not trusted)
     * @param completions where each key's answer goes
     * @param keySalt   {@code l3.key-salt}, mixed into every object's name
     * @param nameCapacity names remembered for tiers that report objects they dropped
     */
    @SuppressWarnings("unchecked")
    TierIo(final PagePool pool, final EngineCounters counters, final EngineClock clock, final TierCaller[] callers, final List<String> tierNames,
           final StagingFrames staging, final boolean[] staged, final int maxBatch, final int maxInflight, final long ioTimeoutNanos,
           final TierIoBatch.Sink sink, final Completions completions, final String keySalt, final int nameCapacity)
    {
        this.completions = completions;
        this.names = new L3ObjectName(keySalt);
        this.nameKeys = new L3NameCache(nameCapacity);
        this.pool = pool;
        this.counters = counters;
        this.clock = clock;
        this.callers = callers;
        this.tierNames = tierNames;
        this.tierCount = callers.length;
        this.ioTimeoutNanos = ioTimeoutNanos;
        this.staging = staging;
        this.staged = staged.clone();
        for (int t = 0; t < tierCount; t++)
        {
            if (staged[t] && staging == null)
            {
                throw new IllegalArgumentException("tier " + tierNames.get(t) + " reads through staging, but there are no staging frames");
            }
        }
        this.openBatch = new TierIoBatch[tierCount][TierIoBatch.OPS];
        this.freeBatches = new ArrayDeque[tierCount][TierIoBatch.OPS];
        this.allBatches = new TierIoBatch[tierCount][TierIoBatch.OPS][maxInflight];
        this.inflight = new TierIoBatch[tierCount * TierIoBatch.OPS * maxInflight];
        for (int t = 0; t < tierCount; t++)
        {
            for (int op = 0; op < TierIoBatch.OPS; op++)
            {
                freeBatches[t][op] = new ArrayDeque<>(maxInflight);
                for (int b = 0; b < maxInflight; b++)
                {
                    allBatches[t][op][b] = new TierIoBatch(t, op, maxBatch, pool, staged[t] ? staging : null, sink);
                    freeBatches[t][op].add(allBatches[t][op][b]);
                }
            }
        }
        this.ioNext = new int[pool.pageCount()];
        this.ioHead = new int[tierCount][2];
        this.ioTail = new int[tierCount][2];
        for (int t = 0; t < tierCount; t++)
        {
            Arrays.fill(ioHead[t], NONE);
            Arrays.fill(ioTail[t], NONE);
        }
        this.doneOnEngineThread = new ArrayDeque<>(Math.max(16, tierCount * TierIoBatch.OPS * maxInflight));
        this.service = new int[tierCount];
        this.outSinceNanos = new long[tierCount];
        this.inServiceMask = tierCount == 0 ? 0 : (int)((1L << tierCount) - 1);
        for (int t = 0; t < tierCount; t++)
        {
            counters.tierState(t, CountersDescriptor.TIER_IN_SERVICE);
        }
        counters.set(EngineCounter.L3_TIERS_OUT_OF_SERVICE, 0);
    }

    /** @return one bit per tier in service, bit {@code t} for tier {@code t} (as the index's tier bits) */
    @Override
    public int inServiceMask()
    {
        return inServiceMask;
    }

    /** @return whether the tier takes batches */
    @Override
    public boolean inService(final int tier)
    {
        return (inServiceMask & 1 << tier) != 0;
    }

    /** @return whether the tier's reads land in staging frames */
    boolean isStaged(final int tier)
    {
        return staged[tier];
    }

    private TierIoBatch batchFor(final int tier, final int op)
    {
        TierIoBatch batch = openBatch[tier][op];
        if (batch == null)
        {
            batch = freeBatches[tier][op].poll();
            openBatch[tier][op] = batch;
        }
        return batch;
    }

    /**
     * Queues a page read or write; waits in the page list when every batch of the tier is in flight,
     * or, for a read through staging, when no staging frame is free.
     */
    @Override
    public void queuePageIo(final int tier, final int op, final int page)
    {
        final boolean needsStaging = op == TierIoBatch.READ && staged[tier];
        final TierIoBatch batch = needsStaging && staging.available() == 0 ? null : batchFor(tier, op);
        if (batch == null)
        {
            ioNext[page] = NONE;
            if (ioTail[tier][op] == NONE)
            {
                ioHead[tier][op] = page;
            }
            else
            {
                ioNext[ioTail[tier][op]] = page;
            }
            ioTail[tier][op] = page;
            return;
        }
        addPage(batch, page);
    }

    private void addPage(final TierIoBatch batch, final int page)
    {
        // The page's tag: its own for a write, and for a read the one the index says its copies are stored under.
        final int i = batch.add(pool.metadata().keyHighPlain(page), pool.metadata().keyLowPlain(page), pool.metadata().namespaceTagPlain(page),
            names, page, EngineConductor.ENGINE_OWNER, 0, 0);
        if (batch.isStaged())
        {
            batch.staging[i] = staging.take();
        }
        if (batch.isFull())
        {
            submit(batch);
        }
    }

    /**
     * Queues an exists or remove; these are skipped, not queued, when no batch is free.
     *
     * @param tag the namespace tag the object is stored under (for a probe, the asking request's)
     * @return whether it was queued
     */
    @Override
    public boolean queueKeyIo(final int tier, final int op, final long high, final long low, final long tag, final int client, final int key,
                       final int seq)
    {
        final TierIoBatch batch = batchFor(tier, op);
        if (batch == null)
        {
            return false;
        }
        batch.add(high, low, tag, names, NONE, client, key, seq);
        if (batch.isFull())
        {
            submit(batch);
        }
        return true;
    }

    private void submit(final TierIoBatch batch)
    {
        openBatch[batch.tier][batch.op] = null;
        if (batch.size == 0)
        {
            freeBatches[batch.tier][batch.op].add(batch);
            return;
        }
        inflight[inflightCount++] = batch;
        batch.arm(clock.nanoTime());
        if (!inService(batch.tier))
        {
            refuse(batch);
            return;
        }
        batch.callQueuedRelease();
        if (!callers[batch.tier].hand(batch) && batch.compareAndSetCallState(TierIoBatch.CALL_REFUSED))
        {
            // Cannot happen while the queue holds twice the tier's batches; were it full, the keys fail, counted.
            LOG.log(System.Logger.Level.ERROR, "the call queue of tier {0} is full; a {1} of {2} keys is refused",
                tierNames.get(batch.tier), TierIoBatch.opName(batch.op), batch.size);
            refuse(batch);
        }
    }

    /** Answers every key of a batch its tier never saw: the batch comes back now, on this thread. */
    private void refuse(final TierIoBatch batch)
    {
        batch.refused = true;
        counters.add(EngineCounter.L3_REFUSED, batch.size);
        batch.completeRemaining(TierStatus.REJECTED);
        batch.callReturned();
    }

    /**
     * Computes an object's name in L3 on the engine thread (for the memory of names L3 lacks); read it
     * with {@link #nameHigh()} and {@link #nameLow()}.
     */
    @Override
    public void name(final long tag, final long high, final long low)
    {
        names.name(tag, high, low);
    }

    @Override
    public long nameHigh()
    {
        return names.high();
    }

    @Override
    public long nameLow()
    {
        return names.low();
    }

    /**
     * A tier holds a key's object now (stored or found): computes its name, as {@link #name} does, and
     * remembers what the name stands for, should the tier report the object dropped.
     */
    @Override
    public void stored(final long tag, final long high, final long low)
    {
        names.name(tag, high, low);
        if (names.high() != high || names.low() != low)
        {
            nameKeys.put(names.high(), names.low(), high, low);
        }
    }

    /**
     * A tier dropped an object by itself, named as the tier knows it: the index forgets that the tier holds
     * its key, if the index's own copies are that object (the same name from the key and its tag).
     */
    void objectDropped(final PageIndex index, final int tier, final long nameHigh, final long nameLow)
    {
        final long high;
        final long low;
        if (nameKeys.find(nameHigh, nameLow))
        {
            high = nameKeys.keyHigh();
            low = nameKeys.keyLow();
        }
        else
        {
            high = nameHigh; // an untagged page of an unsalted engine is named by its key
            low = nameLow;
        }
        final int slot = index.find(high, low);
        if (slot == io.kvtier.collections.KeyTable.NONE || index.tiers(slot) == 0)
        {
            return;
        }
        names.name(index.tierTag(slot), high, low);
        if (names.high() == nameHigh && names.low() == nameLow)
        {
            index.removeTier(high, low, tier);
        }
    }

    /** A batch came back on the engine thread itself (refused): handled at {@link #flush}. */
    void doneOnEngineThread(final TierIoBatch batch)
    {
        doneOnEngineThread.add(batch);
    }

    /** Submits every open batch, then handles batches that came back on the engine thread. */
    void flush()
    {
        do
        {
            for (int t = 0; t < tierCount; t++)
            {
                for (int op = 0; op < TierIoBatch.OPS; op++)
                {
                    if (openBatch[t][op] != null)
                    {
                        submit(openBatch[t][op]);
                    }
                }
            }
            while (!doneOnEngineThread.isEmpty())
            {
                onBatchDone(doneOnEngineThread.poll());
            }
        }
        while (hasOpenBatches());
    }

    private boolean hasOpenBatches()
    {
        for (int t = 0; t < tierCount; t++)
        {
            for (int op = 0; op < TierIoBatch.OPS; op++)
            {
                if (openBatch[t][op] != null)
                {
                    return true;
                }
            }
        }
        return !doneOnEngineThread.isEmpty();
    }

    /** A tier completed every key of a batch and its call returned: each key's answer goes to the part that asked. */
    void onBatchDone(final TierIoBatch batch)
    {
        for (int i = 0; i < inflightCount; i++)
        {
            if (inflight[i] == batch)
            {
                inflight[i] = inflight[--inflightCount];
                inflight[inflightCount] = null;
                break;
            }
        }
        if (batch.pluginFailure != null)
        {
            counters.increment(EngineCounter.PLUGIN_ERRORS); // logged by the call thread, which caught it
        }
        if (!batch.refused)
        {
            countPerTier(batch);
        }
        for (int i = 0; i < batch.size; i++)
        {
            switch (batch.op)
            {
                case TierIoBatch.READ -> completions.readDone(batch, i);
                case TierIoBatch.WRITE -> completions.writeDone(batch, i);
                case TierIoBatch.EXISTS -> completions.existsDone(batch, i);
                case TierIoBatch.REMOVE ->
                {
                    if (!batch.refused && batch.status[i] != TierStatus.OK && batch.status[i] != TierStatus.NOT_FOUND)
                    {
                        counters.increment(EngineCounter.L3_ERRORS);
                    }
                }
                default -> throw new IllegalStateException("unknown batch op " + batch.op);
            }
        }
        final boolean gaveStaging = batch.isStaged();
        if (gaveStaging)
        {
            // Only now, with every key complete and the call returned: until then the tier may still write into them.
            for (int i = 0; i < batch.size; i++)
            {
                staging.give(batch.staging[i]);
            }
        }
        final int tier = batch.tier;
        final int op = batch.op;
        if (!batch.refused)
        {
            final long took = clock.nanoTime() - batch.submittedNanos;
            if (op == TierIoBatch.READ)
            {
                counters.histograms().tierRead(tier).record(took);
            }
            else if (op == TierIoBatch.WRITE)
            {
                counters.histograms().tierWrite(tier).record(took);
            }
        }
        batch.reset();
        freeBatches[tier][op].add(batch);
        drainWaitingPages(tier, op);
        if (gaveStaging)
        {
            for (int t = 0; t < tierCount; t++)
            {
                if (staged[t] && t != tier)
                {
                    drainWaitingPages(t, TierIoBatch.READ);
                }
            }
        }
    }

    /** Counts each key's answer in its tier's counters: bytes of verified reads and of writes, errors of all. */
    private void countPerTier(final TierIoBatch batch)
    {
        final int tier = batch.tier;
        long verified = 0;
        long errors = 0;
        long written = 0;
        for (int i = 0; i < batch.size; i++)
        {
            final TierStatus status = batch.status[i];
            switch (batch.op)
            {
                case TierIoBatch.READ ->
                {
                    if (status == TierStatus.OK && batch.check[i] == io.kvtier.engine.pool.PageFrames.FrameCheck.VALID)
                    {
                        verified++;
                    }
                    else if (status != TierStatus.NOT_FOUND)
                    {
                        errors++;
                    }
                }
                case TierIoBatch.WRITE ->
                {
                    if (status == TierStatus.OK)
                    {
                        written++;
                    }
                    else
                    {
                        errors++;
                    }
                }
                default ->
                {
                    if (status != TierStatus.OK && status != TierStatus.NOT_FOUND)
                    {
                        errors++;
                    }
                }
            }
        }
        final long frame = pool.frameLength();
        // Hits and misses are the loads' (Loads counts them: a migration's reads serve nobody); bytes read are every verified read's.
        if (verified > 0)
        {
            counters.addTier(tier, CountersDescriptor.TIER_BYTES_READ, verified * frame);
        }
        if (errors > 0)
        {
            counters.addTier(tier, CountersDescriptor.TIER_ERRORS, errors);
        }
        if (written > 0)
        {
            counters.addTier(tier, CountersDescriptor.TIER_BYTES_WRITTEN, written * frame);
        }
    }

    private void drainWaitingPages(final int tier, final int op)
    {
        if (op != TierIoBatch.READ && op != TierIoBatch.WRITE)
        {
            return;
        }
        final boolean needsStaging = op == TierIoBatch.READ && staged[tier];
        while (ioHead[tier][op] != NONE && (!needsStaging || staging.available() > 0))
        {
            final TierIoBatch batch = batchFor(tier, op);
            if (batch == null)
            {
                return;
            }
            final int page = ioHead[tier][op];
            ioHead[tier][op] = ioNext[page];
            if (ioHead[tier][op] == NONE)
            {
                ioTail[tier][op] = NONE;
            }
            addPage(batch, page);
        }
    }

    /**
     * Batches a tier is late with: their waiters get a miss now, their pages stay held until it answers,
     * and the tier leaves service. Calls that do not return: the tier leaves service. Stuck tiers that
     * have answered everything: back into service.
     */
    @Override
    public void onTime(final long nowNanos)
    {
        for (int t = 0; t < tierCount; t++)
        {
            final long started = callers[t].callStartedNanos();
            if (service[t] == CountersDescriptor.TIER_IN_SERVICE && started != 0 && nowNanos - started >= ioTimeoutNanos)
            {
                markStuck(t, nowNanos, "a call to it has not returned after " + (nowNanos - started) / 1_000_000 + " ms");
            }
        }
        for (int b = 0; b < inflightCount; b++)
        {
            final TierIoBatch batch = inflight[b];
            if (batch.timedOut || batch.refused || nowNanos - batch.submittedNanos < ioTimeoutNanos)
            {
                continue;
            }
            LOG.log(System.Logger.Level.WARNING, "tier {0} has not finished a {1} of {2} keys after {3} ms; {4}",
                tierNames.get(batch.tier), TierIoBatch.opName(batch.op), batch.size, (nowNanos - batch.submittedNanos) / 1_000_000,
                batch.op == TierIoBatch.READ ? "waiters get a miss, pages stay held until it answers and are never served"
                    : batch.op == TierIoBatch.WRITE ? "the backups end as failed" : "requests waiting on it go on without its answers");
            expire(batch);
            markStuck(batch.tier, nowNanos, "a " + TierIoBatch.opName(batch.op) + " it was handed " + (nowNanos - batch.submittedNanos) / 1_000_000
                + " ms ago is not complete");
        }
        for (int t = 0; t < tierCount; t++)
        {
            if (service[t] == CountersDescriptor.TIER_STUCK && callers[t].isIdle() && !holdsBatches(t))
            {
                service[t] = CountersDescriptor.TIER_IN_SERVICE;
                inServiceMask |= 1 << t;
                counters.tierState(t, CountersDescriptor.TIER_IN_SERVICE);
                updateOutOfServiceGauge();
                LOG.log(System.Logger.Level.WARNING, "tier {0} has answered everything it was handed, {1} ms after it was taken out of service as stuck:"
                    + " back in service", tierNames.get(t), (nowNanos - outSinceNanos[t]) / 1_000_000);
            }
        }
    }

    /** Gives up on a batch: its waiters are answered now; whatever the tier says later changes no answer. */
    private void expire(final TierIoBatch batch)
    {
        batch.timedOut = true;
        counters.increment(EngineCounter.L3_TIMEOUTS);
        // Every key, including those the tier already completed: until the whole batch is handed
        // back, no key's answer reaches its waiters, and a probe of a timed-out batch is answered
        // only here (Lookups.onExistsDone does not answer it again).
        for (int i = 0; i < batch.size; i++)
        {
            switch (batch.op)
            {
                case TierIoBatch.READ -> completions.readAbandoned(batch.page[i]);
                case TierIoBatch.EXISTS -> completions.existsAbandoned(batch, i);
                case TierIoBatch.WRITE -> completions.writeAbandoned(batch, i);
                default ->
                {
                    // a remove's answer changes nothing anyone waits for
                }
            }
        }
    }

    private boolean holdsBatches(final int tier)
    {
        for (int b = 0; b < inflightCount; b++)
        {
            if (inflight[b].tier == tier)
            {
                return true;
            }
        }
        return false;
    }

    /**
     * Takes a tier out of service as stuck (see the class description), unless it is out already.
     *
     * @param tier      the tier
     * @param nowNanos  the engine's time
     * @param why       what it did not do, for the log
     */
    private void markStuck(final int tier, final long nowNanos, final String why)
    {
        if (service[tier] != CountersDescriptor.TIER_IN_SERVICE)
        {
            return;
        }
        leaveService(tier, CountersDescriptor.TIER_STUCK, nowNanos);
        counters.increment(EngineCounter.L3_STUCK);
        LOG.log(System.Logger.Level.ERROR, "tier {0} is stuck: {1} (l3.io-timeout {2} ms). It is out of service: what it was handed is answered"
            + " now (reads and probes as misses, backups as failed) and what comes for it fails at once, counted in l3_refused, until it has"
            + " answered everything it was handed", tierNames.get(tier), why, ioTimeoutNanos / 1_000_000);
        for (int b = 0; b < inflightCount; b++)
        {
            final TierIoBatch batch = inflight[b];
            if (batch.tier != tier || batch.refused)
            {
                continue;
            }
            if (batch.compareAndSetCallState(TierIoBatch.CALL_REFUSED))
            {
                refuse(batch); // still queued behind the stuck call: the tier never sees it
            }
            else if (!batch.timedOut)
            {
                expire(batch);
            }
        }
    }

    /**
     * Takes a tier out of service for good: it was caught writing into pages after their load.
     * Batches still queued for it are refused; those it was handed end as it answers them.
     *
     * @param tier the tier
     * @param why  for the log
     */
    @Override
    public void takeOutOfService(final int tier, final String why)
    {
        if (service[tier] == CountersDescriptor.TIER_OUT_OF_SERVICE)
        {
            return;
        }
        leaveService(tier, CountersDescriptor.TIER_OUT_OF_SERVICE, clock.nanoTime());
        LOG.log(System.Logger.Level.ERROR, "tier {0} is taken out of service until the engine restarts: {1}; what comes for it fails at once,"
            + " counted in l3_refused", tierNames.get(tier), why);
        for (int b = 0; b < inflightCount; b++)
        {
            final TierIoBatch batch = inflight[b];
            if (batch.tier == tier && !batch.refused && batch.compareAndSetCallState(TierIoBatch.CALL_REFUSED))
            {
                refuse(batch);
            }
        }
    }

    private void leaveService(final int tier, final int state, final long nowNanos)
    {
        service[tier] = state;
        inServiceMask &= ~(1 << tier);
        outSinceNanos[tier] = nowNanos;
        counters.tierState(tier, state);
        updateOutOfServiceGauge();
    }

    private void updateOutOfServiceGauge()
    {
        counters.set(EngineCounter.L3_TIERS_OUT_OF_SERVICE, tierCount - Integer.bitCount(inServiceMask));
    }

    /**
     * @param tier a tier
     * @return whether any batch handed to it has not come back, or its call thread is in a call: the
     *         tier may still read or write memory the engine handed it. Any thread, once the engine
     *         thread has stopped (it reads the batches' own atomic state).
     */
    boolean mayStillTouchMemory(final int tier)
    {
        if (!callers[tier].isIdle())
        {
            return true;
        }
        for (int op = 0; op < TierIoBatch.OPS; op++)
        {
            for (final TierIoBatch batch : allBatches[tier][op])
            {
                if (!batch.isDone() && batch.callStateAcquire() == TierIoBatch.CALL_CALLING)
                {
                    return true;
                }
            }
        }
        return false;
    }
}
