package io.kvtier.engine.core;

import io.kvtier.engine.status.ThreadWatch;

import io.kvtier.collections.ParkingQueue;
import io.kvtier.engine.EngineClock;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.TierStatus;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The thread that makes one tier's calls, {@code kvtier-tier-<name>}: the engine thread hands it
 * batches through a bounded queue that allocates nothing ({@link ParkingQueue}: a lock-free offer, a
 * full fence, and an unpark only when this thread has gone to sleep), and it calls the tier's
 * {@code read}, {@code write}, {@code exists} or {@code remove} with each in turn. A plugin that blocks
 * in a call, which the SPI forbids, blocks this thread and no other: the engine thread sees the call's
 * age ({@link #callStartedNanos()}) on its ticks and takes the tier out of service once the call is
 * older than {@code l3.io-timeout} ({@link TierIo}).
 *
 * <p>Idle, the thread polls its queue between up to 100 yields, then spins briefly and parks (the
 * queue's own wait, at most 1 ms at a time), as the engine thread's own wait does: the next batch of a
 * busy tier is taken without a wake-up, which a one-page load otherwise pays (docs/PERFORMANCE.md,
 * "Tiers that misbehave"). The call's start and the calls finished are release stores, read with acquire from any
 * thread, so a watchdog can tell a stuck call from an idle thread without asking this one.
 */
final class TierCallThread implements TierCaller, Runnable
{
    private static final System.Logger LOG = System.getLogger(TierCallThread.class.getName());
    private static final VarHandle CALL_STARTED;
    private static final VarHandle CALLS_FINISHED;

    static
    {
        try
        {
            final MethodHandles.Lookup lookup = MethodHandles.lookup();
            CALL_STARTED = lookup.findVarHandle(TierCallThread.class, "callStarted", long.class);
            CALLS_FINISHED = lookup.findVarHandle(TierCallThread.class, "callsFinished", long.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    /** Polls between yields before the queue's own spin and park. */
    private static final int YIELD_POLLS = 100;

    /** Put in the queue by {@link #stop}: the thread ends when it reaches it. Never called, never armed. */
    private static final TierIoBatch STOP = new TierIoBatch(-1, TierIoBatch.REMOVE, 0, null, null, batch -> { });
    /** The marker that asks the thread to read its tier's usage into its gauges; one per thread, so it can be told apart. */
    private final TierIoBatch usageMarker = new TierIoBatch(-1, TierIoBatch.EXISTS, 0, null, null, batch -> { });
    private final java.util.concurrent.atomic.AtomicBoolean usageAsked = new java.util.concurrent.atomic.AtomicBoolean();
    private io.kvtier.engine.status.EngineCounters usageCounters;
    private io.kvtier.engine.tier.TierHandle usageHandle;
    private io.kvtier.spi.TierUsage.Consumer usageConsumer;

    private final StorageTier tier;
    private final String tierName;
    private final EngineClock clock;
    private final ParkingQueue<TierIoBatch> queue;
    private final Thread thread;
    private final ThreadWatch.Watched watched;
    private volatile boolean running = true;
    @SuppressWarnings("unused") // through CALL_STARTED
    private volatile long callStarted;
    @SuppressWarnings("unused") // through CALLS_FINISHED
    private volatile long callsFinished;

    /**
     * @param tier     the tier
     * @param tierName its configured name, for the thread's name and the log
     * @param clock    the engine's clock, on which a call's start is recorded
     * @param batches  how many batches of this tier exist: the queue holds twice as many, so a stale
     *                 entry left by a refused batch never makes it refuse a live one
     */
    TierCallThread(final StorageTier tier, final String tierName, final EngineClock clock, final int batches, final ThreadWatch watch)
    {
        this.tier = tier;
        this.tierName = tierName;
        this.clock = clock;
        this.queue = new ParkingQueue<>(2 * batches, 1);
        this.thread = Thread.ofPlatform().name("kvtier-tier-" + tierName).daemon(true).unstarted(this);
        this.watched = watch.watch(thread.getName());
        watched.thread(thread);
        // Libraries that look services up through the context class loader find the plugin's jars, as at create.
        thread.setContextClassLoader(tier.getClass().getClassLoader());
    }

    /** Starts the thread. */
    /**
     * Lets this thread record its tier's usage in the tier's gauges when asked ({@link #askUsage}); the
     * gauges' one writer from then on.
     *
     * @param handle   the tier
     * @param index    its index
     * @param counters the pool's counters
     */
    void recordUsage(final io.kvtier.engine.tier.TierHandle handle, final int index, final io.kvtier.engine.status.EngineCounters counters)
    {
        this.usageHandle = handle;
        this.usageCounters = counters;
        this.usageConsumer = (used, capacity, objects) -> TierStart.TierUsageReader.set(counters, index, used, capacity, objects);
    }

    /**
     * Asks the thread to read its tier's usage between calls, unless it was asked already and has not
     * done it yet (a tier stuck in a call is not asked twice). Engine thread; allocates nothing.
     */
    void askUsage()
    {
        if (usageCounters != null && running && usageAsked.compareAndSet(false, true) && !queue.offer(usageMarker))
        {
            usageAsked.set(false);
        }
    }

    void start()
    {
        thread.start();
    }

    @Override
    public boolean hand(final TierIoBatch batch)
    {
        return queue.offer(batch);
    }

    @Override
    public long callStartedNanos()
    {
        return (long)CALL_STARTED.getAcquire(this);
    }

    /** @return calls that returned (or threw) since start, read with acquire semantics */
    long callsFinished()
    {
        return (long)CALLS_FINISHED.getAcquire(this);
    }

    @Override
    public boolean isIdle()
    {
        return callStartedNanos() == 0 && queue.isEmpty();
    }

    /** @return the thread, for a watchdog that reports it */
    Thread thread()
    {
        return thread;
    }

    @Override
    public void run()
    {
        while (running)
        {
            TierIoBatch batch = queue.poll();
            // Yields first, as the engine thread's own wait does: on an idle core the next batch is taken
            // without a wake-up, and on a busy one the yield gives the core to the threads doing the work.
            for (int i = 0; batch == null && i < YIELD_POLLS; i++)
            {
                Thread.yield();
                batch = queue.poll();
            }
            try
            {
                if (batch == null)
                {
                    batch = queue.take(0);
                }
            }
            catch (final InterruptedException ex)
            {
                continue; // only stop() interrupts, and only when its marker found no room
            }
            if (batch == STOP)
            {
                return;
            }
            if (batch == usageMarker)
            {
                usageAsked.set(false);
                recordUsageNow();
                continue;
            }
            if (!running || !batch.compareAndSetCallState(TierIoBatch.CALL_CALLING))
            {
                continue; // the engine refused it meanwhile (its tier was taken out of service), or is stopping
            }
            // 0 means idle; a clock reading of exactly 0 is taken as 1, a nanosecond off.
            final long now = clock.nanoTime();
            CALL_STARTED.setRelease(this, now == 0 ? 1 : now);
            watched.begin();
            try
            {
                call(tier, tierName, batch);
            }
            finally
            {
                watched.end();
                CALL_STARTED.setRelease(this, 0L);
                CALLS_FINISHED.setRelease(this, (long)CALLS_FINISHED.get(this) + 1);
            }
        }
    }

    /**
     * Stops taking batches and waits for the thread to end; one stuck in a tier's call stays there.
     * Batches still queued are not called. The thread is told through its queue, not interrupted: an
     * interrupt reaching a plugin's call could break it (a {@code FileChannel} closes on one).
     *
     * @param waitMillis how long to wait for it
     * @return whether it ended
     */
    private void recordUsageNow()
    {
        final long now = clock.nanoTime();
        CALL_STARTED.setRelease(this, now == 0 ? 1 : now);
        watched.begin();
        try
        {
            TierStart.TierUsageReader.record(usageHandle, usageConsumer);
        }
        finally
        {
            watched.end();
            CALL_STARTED.setRelease(this, 0L);
        }
    }

    boolean stop(final long waitMillis)
    {
        running = false;
        watched.stopping();
        if (!queue.offer(STOP))
        {
            thread.interrupt(); // no room for the marker: the queue is full, so the thread is in a call or about to be
        }
        try
        {
            thread.join(Math.max(1, waitMillis));
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        return !thread.isAlive();
    }

    /**
     * Calls the tier with a batch it was handed, then lets the batch come back. An exception from the
     * plugin completes the keys it left as I/O errors; the engine thread counts it when the batch is
     * done ({@link TierIoBatch#pluginFailure}).
     *
     * @param tier     the tier
     * @param tierName its name, for the log
     * @param batch    a batch taken for the call ({@link TierIoBatch#CALL_CALLING})
     */
    static void call(final StorageTier tier, final String tierName, final TierIoBatch batch)
    {
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
            LOG.log(System.Logger.Level.ERROR, "tier " + tierName + " threw from " + TierIoBatch.opName(batch.op) + " of " + batch.size
                + " keys; the keys it left count as I/O errors and the engine keeps running", ex);
            batch.pluginFailure = ex;
            batch.completeRemaining(TierStatus.IO_ERROR);
        }
        finally
        {
            batch.callReturned();
        }
    }
}
