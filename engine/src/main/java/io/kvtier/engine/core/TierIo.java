package io.kvtier.engine.core;

import io.kvtier.engine.EngineClock;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.TierStatus;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;

/**
 * Tier I/O scheduling: the batches handed to each tier, one open batch per tier and operation that
 * requests fill and that goes out at the end of each ring batch, a bounded number in flight per tier,
 * pages waiting for a batch when all are in flight, and the timeout of a batch a tier is late with.
 * Owns the batches and those queues; the parts that asked for the I/O get each key's answer.
 */
final class TierIo implements TimedPart
{
    private static final System.Logger LOG = System.getLogger(TierIo.class.getName());
    private static final int NONE = -1;

    private final PagePool pool;
    private final EngineCounters counters;
    private final EngineClock clock;
    private final StorageTier[] tiers;
    private final List<String> tierNames;
    private final int tierCount;
    private final long ioTimeoutNanos;
    private final TierIoBatch[][] openBatch;
    private final ArrayDeque<TierIoBatch>[][] freeBatches;
    private final TierIoBatch[] inflight;
    private int inflightCount;
    private final int[] ioNext;
    private final int[][] ioHead;
    private final int[][] ioTail;
    private final ArrayDeque<TierIoBatch> doneOnEngineThread;
    private Loads loads;
    private Backups backups;
    private Lookups lookups;

    @SuppressWarnings("unchecked")
    TierIo(final PagePool pool, final EngineCounters counters, final EngineClock clock, final StorageTier[] tiers, final List<String> tierNames,
           final int maxBatch, final int maxInflight, final long ioTimeoutNanos, final TierIoBatch.Sink sink)
    {
        this.pool = pool;
        this.counters = counters;
        this.clock = clock;
        this.tiers = tiers;
        this.tierNames = tierNames;
        this.tierCount = tiers.length;
        this.ioTimeoutNanos = ioTimeoutNanos;
        this.openBatch = new TierIoBatch[tierCount][TierIoBatch.OPS];
        this.freeBatches = new ArrayDeque[tierCount][TierIoBatch.OPS];
        this.inflight = new TierIoBatch[tierCount * TierIoBatch.OPS * maxInflight];
        for (int t = 0; t < tierCount; t++)
        {
            for (int op = 0; op < TierIoBatch.OPS; op++)
            {
                freeBatches[t][op] = new ArrayDeque<>(maxInflight);
                for (int b = 0; b < maxInflight; b++)
                {
                    freeBatches[t][op].add(new TierIoBatch(t, op, maxBatch, pool, sink));
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
    }

    void connect(final Loads loadPart, final Backups backupPart, final Lookups lookupPart)
    {
        this.loads = loadPart;
        this.backups = backupPart;
        this.lookups = lookupPart;
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

    /** Queues a page read or write; waits in the page list when every batch of the tier is in flight. */
    void queuePageIo(final int tier, final int op, final int page)
    {
        final TierIoBatch batch = batchFor(tier, op);
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
        batch.add(pool.metadata().keyHighPlain(page), pool.metadata().keyLowPlain(page), page, EngineConductor.ENGINE_OWNER, 0, 0);
        if (batch.isFull())
        {
            submit(batch);
        }
    }

    /**
     * Queues an exists or remove; these are skipped, not queued, when no batch is free.
     *
     * @return whether it was queued
     */
    boolean queueKeyIo(final int tier, final int op, final long high, final long low, final int client, final int key, final int seq)
    {
        final TierIoBatch batch = batchFor(tier, op);
        if (batch == null)
        {
            return false;
        }
        batch.add(high, low, NONE, client, key, seq);
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
        final StorageTier tier = tiers[batch.tier];
        try
        {
            switch (batch.op)
            {
                case TierIoBatch.READ -> tier.read(batch);
                case TierIoBatch.WRITE -> tier.write(batch);
                case TierIoBatch.EXISTS -> tier.exists(batch);
                case TierIoBatch.REMOVE -> tier.remove(batch);
                default -> throw new IllegalStateException("unknown batch op " + batch.op);
            }
        }
        catch (final RuntimeException | Error ex)
        {
            counters.increment(EngineCounter.PLUGIN_ERRORS);
            LOG.log(System.Logger.Level.ERROR, "tier " + tierNames.get(batch.tier) + " threw from " + TierIoBatch.opName(batch.op)
                + " of " + batch.size + " keys; they count as I/O errors and the engine keeps running", ex);
            batch.completeRemaining(TierStatus.IO_ERROR);
        }
    }

    /** A tier completed a batch on the engine thread itself, inside a submit: handled at {@link #flush}. */
    void doneOnEngineThread(final TierIoBatch batch)
    {
        doneOnEngineThread.add(batch);
    }

    /** Submits every open batch, then handles completions that tiers delivered on the engine thread. */
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

    /** A tier completed every key of a batch: each key's answer goes to the part that asked. */
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
        for (int i = 0; i < batch.size; i++)
        {
            switch (batch.op)
            {
                case TierIoBatch.READ -> loads.onReadDone(batch, i);
                case TierIoBatch.WRITE -> backups.onWriteDone(batch, i);
                case TierIoBatch.EXISTS -> lookups.onExistsDone(batch, i);
                case TierIoBatch.REMOVE ->
                {
                    if (batch.status[i] != TierStatus.OK && batch.status[i] != TierStatus.NOT_FOUND)
                    {
                        counters.increment(EngineCounter.L3_ERRORS);
                    }
                }
                default -> throw new IllegalStateException("unknown batch op " + batch.op);
            }
        }
        final int tier = batch.tier;
        final int op = batch.op;
        batch.reset();
        freeBatches[tier][op].add(batch);
        drainWaitingPages(tier, op);
    }

    private void drainWaitingPages(final int tier, final int op)
    {
        if (op != TierIoBatch.READ && op != TierIoBatch.WRITE)
        {
            return;
        }
        while (ioHead[tier][op] != NONE)
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
            batch.add(pool.metadata().keyHighPlain(page), pool.metadata().keyLowPlain(page), page, EngineConductor.ENGINE_OWNER, 0, 0);
            if (batch.isFull())
            {
                submit(batch);
            }
        }
    }

    /** Batches a tier is late with: their waiters get a miss now; their pages stay held until it answers. */
    @Override
    public void onTime(final long nowNanos)
    {
        for (int b = 0; b < inflightCount; b++)
        {
            final TierIoBatch batch = inflight[b];
            if (batch.timedOut || nowNanos - batch.submittedNanos < ioTimeoutNanos)
            {
                continue;
            }
            batch.timedOut = true;
            counters.increment(EngineCounter.L3_TIMEOUTS);
            LOG.log(System.Logger.Level.WARNING, "tier {0} has not finished a {1} of {2} keys after {3} ms; waiters get a miss, pages stay held until it answers",
                tierNames.get(batch.tier), TierIoBatch.opName(batch.op), batch.size, (nowNanos - batch.submittedNanos) / 1_000_000);
            // Every key, including those the tier already completed: until the whole batch is handed
            // back, no key's answer reaches its waiters, and a probe of a timed-out batch is answered
            // only here (Lookups.onExistsDone does not answer it again).
            for (int i = 0; i < batch.size; i++)
            {
                if (batch.op == TierIoBatch.READ)
                {
                    loads.abandon(batch.page[i]);
                }
                else if (batch.op == TierIoBatch.EXISTS)
                {
                    lookups.answerProbe(batch, i);
                }
            }
        }
    }
}
