package io.kvtier.engine.core;

import com.lmax.disruptor.RingBuffer;
import io.kvtier.engine.EngineClock;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.config.EngineSettings;
import io.kvtier.engine.config.IdleStrategyKind;
import io.kvtier.engine.pool.Counters;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.engine.status.ThreadWatch;
import io.kvtier.engine.status.EngineCounters;
import io.kvtier.engine.tier.TierHandle;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The engine thread and the ring that feeds it: a Disruptor multi-producer ring of small preallocated
 * events, polled by one agent ({@link EngineConductor}) on a thread an {@link AgentRunner} owns, which
 * idles per {@code engine.idle-strategy}. Clients publish requests through {@link #publish}; tiers
 * publish their completions through the batches they were handed; every publication wakes the engine
 * thread if it sleeps.
 */
public final class Pipeline
{
    private static final System.Logger LOG = System.getLogger(Pipeline.class.getName());

    /** How many failed copies a write-back backup survives before its page is dropped and counted lost. */
    public static final int MAX_BACKUP_ATTEMPTS = Backups.MAX_BACKUP_ATTEMPTS;

    /** Spins of the backoff idle strategy before it yields. */
    static final int BACKOFF_SPINS = 100;
    /** Yields of the backoff idle strategy before it sleeps. */
    static final int BACKOFF_YIELDS = 100;
    /** The longest sleep of the engine thread: the bound on a missed wake-up, and how late a timer may fire. */
    static final long MAX_SLEEP_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final EngineConductor conductor;
    private final RingBuffer<EngineEvent> ring;
    private final EngineBell bell;
    private final AgentRunner runner;
    private volatile boolean halted;
    private final ThreadWatch threads;

    /**
     * Starts the engine thread.
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
        this.threads = new ThreadWatch(new Counters(pool.counters()), config.get(EngineSettings.HEALTH_STUCK_AFTER).toNanos());
        this.bell = new EngineBell();
        this.ring = RingBuffer.createMultiProducer(EngineEvent::new, config.ringSize(), new RingSignal(bell));
        this.conductor = new EngineConductor(config, clock, pool, counters, tiers, maxClients, threads, ring);
        conductor.startThreads();
        final IdleStrategy idling = idleStrategy(config.get(EngineSettings.ENGINE_IDLE_STRATEGY), bell, conductor::hasWork,
            IdleCounts.of(counters));
        conductor.idling(idling);
        this.runner = new AgentRunner(conductor, idling, bell, "kvtier-pipeline");
        runner.start();
    }

    /**
     * @param kind                the setting
     * @param sleeper             where a sleeping strategy sleeps
     * @param workAfterAnnouncing whether work came in once a sleep was announced
     * @return the idle strategy
     */
    static IdleStrategy idleStrategy(final IdleStrategyKind kind, final Sleeper sleeper, final java.util.function.BooleanSupplier workAfterAnnouncing)
    {
        return idleStrategy(kind, sleeper, workAfterAnnouncing, IdleCounts.NONE);
    }

    /**
     * @param kind                the setting
     * @param sleeper             where a sleeping strategy sleeps
     * @param workAfterAnnouncing whether work came in once a sleep was announced
     * @param counts              where the strategy counts its yields and sleeps
     * @return the idle strategy
     */
    static IdleStrategy idleStrategy(final IdleStrategyKind kind, final Sleeper sleeper, final java.util.function.BooleanSupplier workAfterAnnouncing,
                                     final IdleCounts counts)
    {
        return idleStrategy(kind, sleeper, workAfterAnnouncing, counts, System::nanoTime);
    }

    /**
     * @param kind                the setting
     * @param sleeper             where a sleeping strategy sleeps
     * @param workAfterAnnouncing whether work came in once a sleep was announced
     * @param counts              where the strategy counts its yields and sleeps
     * @param clock               nanoseconds for a strategy that reads the time: {@code System::nanoTime}, but in tests
     * @return the idle strategy
     */
    static IdleStrategy idleStrategy(final IdleStrategyKind kind, final Sleeper sleeper, final java.util.function.BooleanSupplier workAfterAnnouncing,
                                     final IdleCounts counts, final java.util.function.LongSupplier clock)
    {
        return switch (kind)
        {
            case ADAPTIVE -> new AdaptiveIdleStrategy(MAX_SLEEP_NANOS, sleeper, workAfterAnnouncing, counts, clock);
            case BACKOFF -> new BackoffIdleStrategy(BACKOFF_SPINS, BACKOFF_YIELDS, MAX_SLEEP_NANOS, sleeper, workAfterAnnouncing, counts);
            case SLEEP -> new BackoffIdleStrategy(0, 0, MAX_SLEEP_NANOS, sleeper, workAfterAnnouncing, counts);
            case YIELD -> new YieldingIdleStrategy();
            case SPIN -> new BusySpinIdleStrategy();
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
     * Gives the engine thread a duty to run in every cycle after polling its ring (the IPC adapter), and
     * where to sleep from now on when it idles: a sleeper its clients can wake too.
     *
     * @param duty    the duty
     * @param sleeper where the engine thread sleeps from now on
     */
    public void attach(final Agent duty, final Sleeper sleeper)
    {
        conductor.attach(duty);
        bell.use(sleeper);
    }

    /**
     * For a duty on the engine thread: the system clock's time as the thread's cycle read it, a few microseconds old at
     * most, so that a duty's periods cost no clock read of their own on every cycle.
     *
     * @return nanoseconds, comparable with {@link System#nanoTime()}
     */
    public long cycleNanos()
    {
        return conductor.cycleNanos();
    }

    /**
     * Handles a client's request at once, on the engine thread, as if it had come through the ring: the
     * way a duty {@linkplain #attach attached} to the engine thread hands over the requests it reads.
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
        conductor.handleRequest(client, op, from, count);
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

    /** @return the operator's calls on this engine (the admin API's) */
    /** @return the watch of the engine's worker threads, which other parts (the IPC server) register theirs with */
    public io.kvtier.engine.operations.EngineOperations operations()
    {
        return conductor.operations();
    }

    /** @return what a publisher of KV events reads, or null when events.enabled is false */
    public io.kvtier.engine.events.EventSource events()
    {
        return conductor.events();
    }

    /** @return the engine's watched threads */
    public ThreadWatch threads()
    {
        return threads;
    }

    /** @return whether the pipeline has stopped taking requests */
    public boolean isHalted()
    {
        return halted;
    }

    /**
     * Stops the engine thread, letting it drain the ring for up to {@code waitMillis}, then the tiers'
     * call threads and the re-verification thread (a call thread stuck in a tier's call is left, and
     * named in the log). Bounded whatever the tiers do: the engine thread never waits on one.
     *
     * @param waitMillis how long the ring may take to drain, and the threads to end
     */
    public void stop(final long waitMillis)
    {
        halted = true;
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(1, waitMillis));
        while (!conductor.isDrained() && System.nanoTime() - deadline < 0)
        {
            bell.wake();
            LockSupport.parkNanos(100_000);
        }
        if (!conductor.isDrained())
        {
            LOG.log(System.Logger.Level.WARNING, "pipeline did not drain in {0} ms; halting it", waitMillis);
        }
        if (!runner.close(Math.max(1000, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()))))
        {
            LOG.log(System.Logger.Level.ERROR, "the engine thread did not stop");
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
}
