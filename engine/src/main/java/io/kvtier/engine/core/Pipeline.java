package io.kvtier.engine.core;

import com.lmax.disruptor.BlockingWaitStrategy;
import com.lmax.disruptor.BusySpinWaitStrategy;
import com.lmax.disruptor.ExceptionHandler;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.SleepingWaitStrategy;
import com.lmax.disruptor.TimeoutException;
import com.lmax.disruptor.WaitStrategy;
import com.lmax.disruptor.YieldingWaitStrategy;
import com.lmax.disruptor.dsl.Disruptor;
import com.lmax.disruptor.dsl.ProducerType;
import io.kvtier.engine.EngineClock;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.pool.Counters;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.engine.status.ThreadWatch;
import io.kvtier.engine.status.EngineCounters;
import io.kvtier.engine.tier.TierHandle;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The engine thread and the ring that feeds it: a Disruptor multi-producer ring of small
 * preallocated events, handled by one {@link EngineConductor}, plus the ticker that drives the parts'
 * deadlines. Clients publish requests through {@link #publish}; tiers publish their completions
 * through the batches they were handed.
 */
public final class Pipeline
{
    private static final System.Logger LOG = System.getLogger(Pipeline.class.getName());

    /** How many failed copies a write-back backup survives before its page is dropped and counted lost. */
    public static final int MAX_BACKUP_ATTEMPTS = Backups.MAX_BACKUP_ATTEMPTS;

    private final EngineConductor conductor;
    private final Disruptor<EngineEvent> disruptor;
    private final RingBuffer<EngineEvent> ring;
    private final Thread ticker;
    private final long tickNanos;
    private final DutyCycleWaitStrategy dutyCycle;
    private volatile boolean halted;
    private final ThreadWatch threads;

    /**
     * Starts the engine thread and the ticker.
     *
     * @param config     validated settings
     * @param clock      the engine's time
     * @param pool       the owned pool
     * @param counters   the pool's counters
     * @param tiers      the started L3 tiers, in configuration order
     * @param maxClients client slots
     */
    public Pipeline(final EngineConfig config, final EngineClock clock, final PagePool pool, final EngineCounters counters, final List<TierHandle> tiers,
                    final int maxClients)
    {
        this.threads = new ThreadWatch(new Counters(pool.counters()), config.get(io.kvtier.engine.config.EngineSettings.HEALTH_STUCK_AFTER).toNanos());
        this.conductor = new EngineConductor(config, clock, pool, counters, tiers, maxClients, threads);
        // With IPC the engine thread polls the client rings itself (an EngineDuty) and waits the IPC way.
        this.dutyCycle = config.get(io.kvtier.engine.config.EngineSettings.IPC_ENABLED) ? new DutyCycleWaitStrategy() : null;
        this.disruptor = new Disruptor<>(EngineEvent::new, config.ringSize(), runnable ->
        {
            final Thread thread = new Thread(runnable, "kvtier-pipeline");
            thread.setDaemon(true);
            return thread;
        }, ProducerType.MULTI, dutyCycle != null ? dutyCycle : waitStrategy(config));
        disruptor.handleEventsWith(conductor);
        disruptor.setDefaultExceptionHandler(new LoggingExceptionHandler());
        this.ring = disruptor.start();
        conductor.ring(ring);
        conductor.startThreads();
        this.tickNanos = config.tickInterval().toNanos();
        this.ticker = Thread.ofPlatform().name("kvtier-ticker").daemon(true).unstarted(this::tick);
        ticker.start();
    }

    private static WaitStrategy waitStrategy(final EngineConfig config)
    {
        return switch (config.waitStrategy())
        {
            case PARK -> new SpinParkWaitStrategy();
            case BLOCKING -> new BlockingWaitStrategy();
            case SLEEPING -> new SleepingWaitStrategy();
            case YIELDING -> new YieldingWaitStrategy();
            case BUSY_SPIN -> new BusySpinWaitStrategy();
        };
    }

    /**
     * Puts a client's request on the ring.
     *
     * @param client the requesting client
     * @param op     a {@link io.kvtier.client.protocol.MessageType} or {@link InternalOp} code
     * @param from   first key index
     * @param count  number of keys
     * @return false once the pipeline has stopped
     */
    public boolean publish(final ClientPort client, final int op, final int from, final int count)
    {
        if (halted)
        {
            return false;
        }
        final long sequence = ring.next();
        try
        {
            ring.get(sequence).request(client, op, from, count);
        }
        finally
        {
            ring.publish(sequence);
        }
        return true;
    }

    /**
     * Gives the engine thread a duty to run between batches (the IPC adapter). Only with {@code ipc.enabled},
     * whose engine thread waits the duty's way; {@code pipeline.wait-strategy} is then not used.
     *
     * @param duty the duty
     * @throws IllegalStateException without {@code ipc.enabled}
     */
    public void installDuty(final EngineDuty duty)
    {
        if (dutyCycle == null)
        {
            throw new IllegalStateException("an engine duty needs ipc.enabled");
        }
        dutyCycle.install(duty);
        ring.tryPublishEvent((event, sequence) -> event.type = EngineEvent.TICK); // wakes the thread into its new wait
    }

    /**
     * Handles a client's request at once, on the engine thread, as if it had come through the ring: the
     * way an {@link EngineDuty} hands over the requests it reads.
     *
     * @param client the requesting client
     * @param op     a {@link io.kvtier.client.protocol.MessageType} or {@link InternalOp} code
     * @param from   first key index
     * @param count  number of keys
     * @return false once the pipeline has stopped
     * @throws IllegalStateException off the engine thread
     */
    public boolean handleOnEngineThread(final ClientPort client, final int op, final int from, final int count)
    {
        if (!conductor.isEngineThread())
        {
            throw new IllegalStateException("handleOnEngineThread called on " + Thread.currentThread().getName());
        }
        if (halted)
        {
            return false;
        }
        conductor.onDirectRequest(client, op, from, count);
        return true;
    }

    /**
     * A tier dropped an object on its own; callable from any thread.
     *
     * @param tier the tier's index
     * @param high the key's high half
     * @param low  its low half
     */
    public void objectRemoved(final int tier, final long high, final long low)
    {
        conductor.objectRemoved(tier, high, low);
    }

    /** New requests other than release, abort, flush and close are refused from now on. */
    public void beginClosing()
    {
        conductor.beginClosing();
    }

    /** @return the watch of the engine's worker threads, which other parts (the IPC server) register theirs with */
    public ThreadWatch threads()
    {
        return threads;
    }

    /** @return whether the pipeline has stopped taking requests */
    public boolean isHalted()
    {
        return halted;
    }

    private void tick()
    {
        while (!halted)
        {
            ring.tryPublishEvent((event, sequence) -> event.type = EngineEvent.TICK);
            java.util.concurrent.locks.LockSupport.parkNanos(tickNanos);
        }
    }

    /**
     * Stops the ticker and the engine thread, letting it drain the ring for up to {@code waitMillis},
     * then the tiers' call threads and the re-verification thread (a call thread stuck in a tier's call
     * is left, and named in the log). Bounded whatever the tiers do: the engine thread never waits on one.
     *
     * @param waitMillis how long the ring may take to drain, and the threads to end
     */
    public void stop(final long waitMillis)
    {
        halted = true;
        try
        {
            ticker.join(1000);
            disruptor.shutdown(Math.max(1, waitMillis), TimeUnit.MILLISECONDS);
        }
        catch (final TimeoutException ex)
        {
            LOG.log(System.Logger.Level.WARNING, "pipeline did not drain in {0} ms; halting it", waitMillis);
            disruptor.halt();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            disruptor.halt();
        }
        conductor.stopThreads(Math.min(waitMillis, 1000));
    }

    /**
     * @return the names of the tiers that may still read or write memory the engine handed them (a call
     *         in progress, a batch not come back); after {@link #stop}
     */
    public List<String> tiersStillTouchingMemory()
    {
        return conductor.tiersStillTouchingMemory();
    }

    /** Frees the staging frames of untrusted tiers' reads; after {@link #stop}, and only if no tier may still write into them. */
    public void closeStaging()
    {
        conductor.closeStaging();
    }

    private static final class LoggingExceptionHandler implements ExceptionHandler<EngineEvent>
    {
        @Override
        public void handleEventException(final Throwable ex, final long sequence, final EngineEvent event)
        {
            LOG.log(System.Logger.Level.ERROR, "pipeline event " + sequence + " failed; the engine keeps running", ex);
        }

        @Override
        public void handleOnStartException(final Throwable ex)
        {
            LOG.log(System.Logger.Level.ERROR, "pipeline failed to start", ex);
        }

        @Override
        public void handleOnShutdownException(final Throwable ex)
        {
            LOG.log(System.Logger.Level.ERROR, "pipeline failed to stop cleanly", ex);
        }
    }
}
