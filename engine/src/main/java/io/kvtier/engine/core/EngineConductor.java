package io.kvtier.engine.core;

import io.kvtier.engine.operations.Health;
import io.kvtier.client.pool.CountersDescriptor;
import com.lmax.disruptor.EventPoller;
import com.lmax.disruptor.RingBuffer;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.engine.EngineClock;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.config.EngineSettings;
import io.kvtier.engine.config.PrefetchMode;
import io.kvtier.engine.config.WritePolicy;
import io.kvtier.engine.events.EventRing;
import io.kvtier.engine.events.EventSource;
import io.kvtier.engine.eviction.EvictionPolicies;
import io.kvtier.engine.index.PageIndex;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;
import io.kvtier.engine.status.ThreadWatch;
import io.kvtier.engine.tier.TierHandle;

import java.util.List;

/**
 * The engine thread's agent: takes each ring event and each request the IPC adapter reads and hands it
 * to the part that owns what it concerns, and nothing more. The parts (see the package description) own
 * every piece of engine state between them, each field one owner, and all of them run on this one
 * thread, so nothing takes a lock. One duty cycle ({@link #doWork}):
 *
 * <ol>
 *   <li>polls the Disruptor ring: client requests, tier completions, re-verified pages;</li>
 *   <li>runs the IPC adapter's duty, if one is attached, which hands its clients' requests straight in;</li>
 *   <li>every {@code pipeline.tick-interval}, gives each part with deadlines the engine clock's time;</li>
 *   <li>sends the tier batches the cycle filled;</li>
 *   <li>when it found nothing to do, lets the eviction policy do a little of the work it put off.</li>
 * </ol>
 *
 * <p>The model is Aeron's {@code DriverConductor}: a conductor that dispatches commands to collaborators
 * and drives their time events, rather than one class that does everything.
 */
final class EngineConductor implements Agent, EventPoller.Handler<EngineEvent>, TierIoBatch.Sink, TierIo.Completions, EngineSteps,
    PoolSpace.EvictionGate, PoolSpace.SpaceWaiterResumer, Loads.WaitOver, ReverifyThread.Sink, AdoptThread.Sink
{
    private static final System.Logger LOG = System.getLogger(EngineConductor.class.getName());

    /** The owner recorded on pages the engine itself holds (loads, committed pages). */
    static final int ENGINE_OWNER = 0;

    private final EngineClock clock;
    private final PagePool pool;
    private final EngineCounters counters;
    private final SessionTable sessions;
    private final PoolSpace space;
    private final Reservations reservations;
    private final Acquires acquires;
    private final Lookups lookups;
    private final Loads loads;
    private final Backups backups;
    private final TierIo io;
    private final Reverifications reverifications;
    private final PoolLiveness liveness;
    private final TierCallThread[] callThreads;
    private final List<String> tierNames;
    private final StagingFrames staging;
    private final ReverifyThread reverifyThread;
    /** The warm restart's thread and part, when a dead engine's pool is being adopted; else null. */
    private final AdoptThread adoptThread;
    private final Adoptions adoptions;
    private final TimedPart[] timed;
    /** How often each tier's call thread is asked to read the tier's usage into its gauges. */
    private static final long USAGE_PERIOD_NS = 200_000_000L;
    /** Pages write-back's cleaning ahead looks at per idle duty cycle: a request arriving meanwhile waits a microsecond at most. */
    private static final int CLEAN_AHEAD_IDLE_BUDGET = 16;
    /** Pages it looks at per tick, for an engine never idle, and to reach past what an idle look covers. */
    private static final int CLEAN_AHEAD_TICK_BUDGET = 1024;
    private long usageAskedNanos;
    private final TierLevels levels;
    private final Admission admission;
    private final Marks marks;
    private final Migrations migrations;
    private final EngineAdmin operations;
    private final PageIndex index;
    private final EventSource events;
    private final RingBuffer<EngineEvent> ring;
    private final EventPoller<EngineEvent> poller;
    /** Idle spins between two reads of the clock by an idle engine thread. */
    static final int CLOCK_EVERY_SPINS = 16;
    private final long tickNanos;
    private long nextTimerNanos;
    /** How the engine thread idles between cycles: it says whether the last idle was a spin. */
    private IdleStrategy idling;
    /** Cycles since the clock was last read, each after an idle spin. */
    private int spinsSinceClock;
    /** {@link System#nanoTime()} as this cycle read it, or an earlier one at most {@link #CLOCK_EVERY_SPINS} idle spins ago. */
    private long cycleNanos = System.nanoTime();
    /** What the last cycle did: after work the clock is read again. */
    private int lastWork;
    private int handled;
    private volatile Agent duty;
    private volatile Thread engineThread;
    private volatile boolean closing;
    private volatile boolean stopped;

    EngineConductor(final EngineConfig config, final EngineClock clock, final PagePool pool, final EngineCounters counters,
                    final List<TierHandle> tierHandles, final int maxClients, final ThreadWatch threads, final RingBuffer<EngineEvent> ring)
    {
        this.ring = ring;
        this.poller = ring.newPoller();
        ring.addGatingSequences(poller.getSequence());
        this.tickNanos = config.tickInterval().toNanos();
        this.clock = clock;
        this.pool = pool;
        this.counters = counters;
        final int tierCount = tierHandles.size();
        final String[] names = new String[tierCount];
        final boolean[] staged = new boolean[tierCount];
        for (int t = 0; t < tierCount; t++)
        {
            names[t] = tierHandles.get(t).name();
            staged[t] = !tierHandles.get(t).trusted();
        }
        this.tierNames = List.of(names);
        final WritePolicy writePolicy = tierCount == 0 ? WritePolicy.NONE : config.writePolicy();
        final PrefetchMode prefetchMode = tierCount == 0 ? PrefetchMode.OFF : config.prefetchMode();
        this.index = new PageIndex(pool.index(), pool.pageCount());
        if (config.get(EngineSettings.EVENTS_ENABLED))
        {
            // KV events for routers: the engine starts empty, so the first record says everything was cleared.
            final EventRing eventRing = new EventRing(config.get(EngineSettings.EVENTS_RING_ENTRIES), counters);
            final List<String> mediums = new java.util.ArrayList<>();
            mediums.add(EventSource.POOL_MEDIUM);
            mediums.addAll(List.of(names));
            this.events = new EventSource(eventRing, List.copyOf(mediums), config.get(EngineSettings.EVENTS_ENDPOINT),
                config.get(EngineSettings.EVENTS_TOPIC_PREFIX), config.get(EngineSettings.EVENTS_BATCH_MAX),
                config.get(EngineSettings.EVENTS_REPLAY_ENDPOINT), config.get(EngineSettings.EVENTS_REPLAY_BATCHES), threads.watch("kvtier-events"), counters);
            eventRing.cleared();
            index.events(eventRing);
        }
        else
        {
            this.events = null;
        }
        final Residency residency = new Residency(pool, index);
        final long ioTimeoutNanos = config.l3IoTimeout().toNanos();

        // Each tier's calls on a thread of its own: the engine thread never calls into a plugin.
        final int batchesPerTier = TierIoBatch.OPS * config.l3MaxInflight();
        this.callThreads = new TierCallThread[tierCount];
        for (int t = 0; t < tierCount; t++)
        {
            callThreads[t] = new TierCallThread(tierHandles.get(t).tier(), names[t], clock, batchesPerTier, threads);
            callThreads[t].recordUsage(tierHandles.get(t), t, counters);
        }
        boolean anyStaged = false;
        for (final boolean s : staged)
        {
            anyStaged |= s;
        }
        this.staging = anyStaged ? new StagingFrames(config.get(EngineSettings.L3_STAGING_FRAMES), pool.frameLength()) : null;

        // Each part gets, when it is made, the narrow interfaces of the parts it asks things of; what would
        // make a cycle (a part asking a part that asks it) goes through this conductor (EngineSteps), as do
        // the tiers' answers (TierIo.Completions).
        this.space = new PoolSpace(pool, index, counters, clock, EvictionPolicies.forName(config.evictionPolicy(), pool.pageCount()), config.evictHigh(), config.evictLow(), config.quarantine().toNanos(),
            ioTimeoutNanos, maxClients, this, this);
        this.io = new TierIo(pool, counters, clock, callThreads, tierNames, staging, staged, config.l3MaxBatch(), config.l3MaxInflight(), ioTimeoutNanos, this,
            this, config.get(EngineSettings.L3_KEY_SALT), (int)Math.min(1L << 20, Math.max(4096L, config.indexEntries())));
        this.sessions = new SessionTable(counters, config.sessionTimeout().toNanos(), maxClients, space, this);
        this.loads = new Loads(residency, counters, clock, space, tierNames, io, sessions, this, this);
        this.lookups = new Lookups(residency, counters, clock, tierCount, config.probePages(), prefetchMode, config.prefetchThresholdPages(),
            config.prefetchTimeout().toNanos(), config.negativeProbeTtl().toNanos(), maxClients, loads, io, sessions, this);
        this.backups = new Backups(residency, counters, clock, space, tierNames, writePolicy, config.maxBackupPages(pool.pageCount()), ioTimeoutNanos,
            maxClients, io, lookups);
        backups.cleanAhead(config.get(EngineSettings.POLICY_WRITE_BACK_CLEAN_AHEAD));
        this.reservations = new Reservations(residency, counters, clock, space, backups, config.reservationTimeout().toNanos(), writePolicy);
        final double reverifyRate = tierCount == 0 ? 0 : config.get(EngineSettings.L3_REVERIFY_RATE);
        final int reverifyJobs = Math.max(16, Math.min(1024, maxClients));
        this.reverifyThread = reverifyRate > 0 ? new ReverifyThread(pool, clock, reverifyJobs, this, threads) : null;
        this.reverifications = new Reverifications(pool, counters, clock, tierNames, reverifyRate, config.get(EngineSettings.L3_REVERIFY_WINDOW).toNanos(),
            config.get(EngineSettings.L3_LATE_WRITE_LIMIT), reverifyJobs, reverifyThread, sessions, loads, space, io, this);
        this.acquires = new Acquires(residency, counters, clock, space, loads, lookups, backups, reverifications, writePolicy, config.writeHitThreshold(), this);
        this.liveness = new PoolLiveness(pool, index, counters, config.sessionTimeout().toMillis());
        liveness.connect(space::resumeSpaceWaiters);
        this.levels = TierStart.levels(config, counters, tierHandles, clock.nanoTime());
        lookups.trustIndex(TierStart.writtenOnlyByThisEngine(tierHandles), tierNames);
        this.admission = new Admission(counters, clock, config.admissionMode());
        this.marks = new Marks(counters, clock, tierNames);
        backups.route(levels, admission, marks);
        this.migrations = new Migrations(pool, index, counters, clock, space, io, levels, admission, marks, lookups, backups, config.migrations());
        this.operations = new EngineAdmin(this, levels, migrations, marks, index, tierHandles, counters, this::health);
        final io.kvtier.engine.pool.PreviousPool previous = pool.takePrevious();
        if (pool.adoptRefusal() != null)
        {
            LOG.log(System.Logger.Level.WARNING, "warm restart: the dead engine''s pool at {0} is not adopted, {1}; this pool starts empty",
                pool.path(), pool.adoptRefusal());
        }
        if (previous != null)
        {
            // Pages lent at once: enough that each wake-up of the adopter, which on a busy host comes milliseconds
            // apart, moves many pages, and few enough that the pool's free pages are not all tied up.
            final int adoptJobs = Math.max(8, Math.min(256, pool.pageCount() / 16));
            this.adoptThread = new AdoptThread(pool, previous, adoptJobs, this, threads);
            this.adoptions = new Adoptions(pool, index, space, counters, clock, adoptThread, adoptJobs);
        }
        else
        {
            this.adoptThread = null;
            this.adoptions = null;
        }
        // The watch reads the system's clock, as the threads it watches stamp their work with it.
        final TimedPart adopting = adoptions == null ? now -> { } : adoptions;
        this.timed = new TimedPart[] {liveness, reservations, space, sessions, lookups, backups, io, marks, migrations, adopting,
            now -> threads.check(System.nanoTime())};
    }

    /** @return what a publisher of KV events reads, or null when events.enabled is false */
    EventSource events()
    {
        return events;
    }

    /** Starts the tiers' call threads and the re-verification thread, which answer through the ring. */
    void startThreads()
    {
        for (final TierCallThread thread : callThreads)
        {
            thread.start();
        }
        if (reverifyThread != null)
        {
            reverifyThread.start();
        }
        if (adoptThread != null)
        {
            adoptThread.start();
        }
    }

    /**
     * Stops the threads {@link #startThreads} started, once the engine thread has stopped; a call thread
     * stuck in a tier's call cannot be stopped and stays, named in the log.
     *
     * @param waitMillis how long to wait for them in all
     */
    void stopThreads(final long waitMillis)
    {
        final long deadline = System.nanoTime() + waitMillis * 1_000_000L;
        if (adoptThread != null)
        {
            adoptThread.stop(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
        }
        if (reverifyThread != null)
        {
            reverifyThread.stop(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
        }
        for (int t = 0; t < callThreads.length; t++)
        {
            if (!callThreads[t].stop(Math.max(1, (deadline - System.nanoTime()) / 1_000_000)))
            {
                LOG.log(System.Logger.Level.WARNING, "the call thread of tier {0} ({1}) is still in a call to the tier after {2} ms; it is left"
                    + " running", tierNames.get(t), callThreads[t].thread().getName(), waitMillis);
            }
        }
    }

    /**
     * @return the names of tiers that may still read or write memory the engine handed them: a call in
     *         progress, or a batch handed over and not come back. Once the engine thread has stopped.
     */
    List<String> tiersStillTouchingMemory()
    {
        final java.util.ArrayList<String> busy = new java.util.ArrayList<>();
        for (int t = 0; t < callThreads.length; t++)
        {
            if (io.mayStillTouchMemory(t))
            {
                busy.add(tierNames.get(t));
            }
        }
        return busy;
    }

    /** Frees the staging frames; only once no tier can still write into them. */
    void closeStaging()
    {
        if (staging != null)
        {
            staging.close();
        }
    }

    boolean isEngineThread()
    {
        return Thread.currentThread() == engineThread;
    }

    /**
     * Attaches a duty the engine thread runs in every cycle after polling its ring: the IPC adapter.
     *
     * @param engineDuty the duty
     */
    void attach(final Agent engineDuty)
    {
        this.duty = engineDuty;
    }

    /**
     * @param strategy how the engine thread idles between its cycles; before the thread starts
     */
    void idling(final IdleStrategy strategy)
    {
        this.idling = strategy;
    }

    @Override
    public String roleName()
    {
        return "kvtier engine conductor";
    }

    @Override
    public void onStart()
    {
        engineThread = Thread.currentThread();
        nextTimerNanos = System.nanoTime() + tickNanos;
    }

    @Override
    public int doWork()
    {
        // Reading the clock costs as much as the rest of an empty cycle (30-40 ns here: ClockReadBenchmark). After an idle spin it is read
        // only every CLOCK_EVERY_SPINS cycles, so the cycle's time is then at most that many spins old, a few
        // microseconds; after work, a yield or a sleep, which may have lasted a time slice or a bounded sleep, always.
        final boolean clockRead = lastWork != 0 || idling == null || !idling.lastStepSpun() || ++spinsSinceClock >= CLOCK_EVERY_SPINS;
        if (clockRead)
        {
            spinsSinceClock = 0;
            cycleNanos = System.nanoTime();
        }
        handled = 0;
        try
        {
            poller.poll(this);
        }
        catch (final Exception ex)
        {
            LOG.log(System.Logger.Level.ERROR, "engine failed polling its ring; it keeps running", ex);
        }
        int work = handled;
        final Agent current = duty;
        if (current != null)
        {
            try
            {
                work += current.doWork();
            }
            catch (final RuntimeException ex)
            {
                // The duty keeps its own clients apart; whatever escapes it must not end the engine thread.
                LOG.log(System.Logger.Level.ERROR, "the engine thread's duty failed; it keeps running", ex);
            }
        }
        // The period runs on real time, the deadlines on the engine clock: a test that holds the engine clock
        // still and moves it by hand still has every part look at the time it set, every tick.
        if (clockRead && cycleNanos - nextTimerNanos >= 0)
        {
            nextTimerNanos = cycleNanos + tickNanos;
            onTick(clock.nanoTime());
        }
        io.flush();
        if (work == 0)
        {
            // Nothing came in: the eviction policy's put-off work runs now, a little each cycle, not in a request's time,
            // and then write-back's copies ahead of eviction.
            work = space.maintain();
            if (work == 0)
            {
                work = space.cleanAhead(CLEAN_AHEAD_IDLE_BUDGET);
            }
        }
        lastWork = work;
        return work;
    }

    /**
     * The engine thread's time for its duty's periods, read for it: {@link System#nanoTime()} as this cycle or an
     * earlier one read it, at most {@link #CLOCK_EVERY_SPINS} idle spins ago, so never more than a few microseconds old
     * when the duty runs. The engine thread only.
     *
     * @return nanoseconds
     */
    long cycleNanos()
    {
        return cycleNanos;
    }

    /** @return whether the ring holds events not yet polled: looked at once the engine thread announced its sleep */
    boolean hasWork()
    {
        return ring.getCursor() > poller.getSequence().get();
    }

    /** @return whether every event published on the ring was handled */
    boolean isDrained()
    {
        return ring.getCursor() <= poller.getSequence().get();
    }

    @Override
    public boolean onEvent(final EngineEvent event, final long sequence, final boolean endOfBatch)
    {
        handled++;
        try
        {
            switch (event.type)
            {
                case EngineEvent.CLIENT_REQUEST -> handleRequest(event.client, event.op, event.from, event.count);
                case EngineEvent.TIER_BATCH_DONE -> io.onBatchDone(event.batch);
                case EngineEvent.TIER_OBJECT_REMOVED ->
                {
                    counters.increment(EngineCounter.L3_REMOVED_BY_TIER);
                    io.objectDropped(index, event.tier, event.keyHigh, event.keyLow);
                }
                case EngineEvent.PAGE_REVERIFIED -> reverifications.onResult(event.job);
                case EngineEvent.PAGE_ADOPTED -> adoptions.onAdopted(event.adoptJob);
                case EngineEvent.ADMIN_CALL -> event.call.run();
                default -> LOG.log(System.Logger.Level.WARNING, "ignoring ring event of unknown type {0}", event.type);
            }
        }
        catch (final RuntimeException | Error ex)
        {
            LOG.log(System.Logger.Level.ERROR, "engine failed handling a ring event; it keeps running", ex);
        }
        finally
        {
            event.clear();
        }
        return true;
    }

    /**
     * A client's request, from the ring or straight from the IPC adapter's duty: a failure answers the
     * request INTERNAL_ERROR and the engine goes on. Its tier batches go out at the end of the cycle.
     */
    void handleRequest(final ClientPort client, final int op, final int from, final int count)
    {
        try
        {
            onRequest(client, op, from, count);
        }
        catch (final RuntimeException | Error ex)
        {
            LOG.log(System.Logger.Level.ERROR, "engine failed handling a client request; it keeps running", ex);
            final ClientRecord r = client == null ? null : sessions.recordOf(client);
            if (r != null && r.inFlight)
            {
                r.complete(ErrorCode.INTERNAL_ERROR);
            }
        }
    }

    private void onTick(final long nowNanos)
    {
        if (nowNanos - usageAskedNanos >= USAGE_PERIOD_NS)
        {
            usageAskedNanos = nowNanos;
            for (final TierCallThread thread : callThreads)
            {
                thread.askUsage();
            }
        }
        for (final TimedPart part : timed)
        {
            part.onTime(nowNanos);
        }
        // An engine never idle still copies ahead of eviction, a tick's budget at a time.
        space.cleanAhead(CLEAN_AHEAD_TICK_BUDGET);
    }

    private void onRequest(final ClientPort client, final int op, final int from, final int count)
    {
        counters.increment(EngineCounter.REQUESTS);
        counters.countRequest(op);
        // One read of the clock a request where the engine's is the system's: each costs tens of nanoseconds.
        final long system = System.nanoTime();
        final long now = clock == EngineClock.SYSTEM ? system : clock.nanoTime();
        if (op == InternalOp.OPEN)
        {
            if (closing)
            {
                client.complete(ErrorCode.CLOSED, 0, 0, 0, 0, 0);
                return;
            }
            sessions.open(client, now);
            return;
        }
        final ClientRecord r = sessions.recordOf(client);
        if (r == null)
        {
            client.complete(client.isExpired() ? ErrorCode.LEASE_EXPIRED : ErrorCode.CLOSED, 0, 0, 0, 0, 0);
            return;
        }
        if (closing && op != MessageType.CLOSE && op != InternalOp.DISCONNECT && op != MessageType.RELEASE && op != MessageType.ABORT
            && op != MessageType.FLUSH)
        {
            client.complete(ErrorCode.CLOSED, 0, 0, 0, 0, 0);
            return;
        }
        r.begin(op, from, count, now, system);
        r.namespaceTag = client.namespaceTag();
        r.allNamespaces = client.seesAllNamespaces();
        r.reserveLimit = op == MessageType.LOOKUP_AND_LOCK ? client.reserveLimit() : -1;
        r.backupOnCommit = op == MessageType.COMMIT_AND_RELEASE && client.backupOnCommit();
        if (!valid(r, op, from, count))
        {
            counters.increment(EngineCounter.REQUESTS_INVALID);
            r.complete(ErrorCode.INVALID);
            return;
        }
        // Every request answers for every slot of its range: nothing an earlier one said is read back.
        r.resetStatuses();
        switch (op)
        {
            case MessageType.LOOKUP -> lookups.lookup(r);
            case MessageType.ACQUIRE, MessageType.LOOKUP_AND_LOCK -> acquires.acquire(r);
            case MessageType.COMMIT_AND_RELEASE -> commitAndRelease(r);
            case MessageType.RELEASE -> r.finish(acquires.release(r, from, Math.min(from + count, r.holdLimit)));
            case MessageType.RESERVE -> reservations.reserve(r);
            case MessageType.COMMIT -> reservations.commit(r);
            case MessageType.ABORT -> r.finish(reservations.abort(r, from, Math.min(from + count, r.holdLimit), false));
            case MessageType.PREFETCH -> lookups.prefetch(r);
            case MessageType.BACKUP -> backups.backupKeys(r);
            case MessageType.FLUSH -> backups.flush(r);
            case MessageType.EVICT -> r.finish(evictKeys(r));
            case InternalOp.KEEP_ALIVE -> r.finish(0);
            case MessageType.CLOSE -> sessions.close(r);
            case InternalOp.DISCONNECT -> sessions.disconnect(r);
            default ->
            {
                counters.increment(EngineCounter.REQUESTS_INVALID);
                r.complete(ErrorCode.INVALID);
            }
        }
    }

    /** The request names keys inside the client's chain and key slots, and a LOOKUP_AND_LOCK's limit is within its count. */
    private static boolean valid(final ClientRecord r, final int op, final int from, final int count)
    {
        final boolean keyed = op == MessageType.LOOKUP || op == MessageType.ACQUIRE || op == MessageType.RESERVE || op == MessageType.COMMIT
            || op == MessageType.PREFETCH || op == MessageType.BACKUP || op == MessageType.EVICT || op == MessageType.LOOKUP_AND_LOCK
            || op == MessageType.COMMIT_AND_RELEASE;
        return from >= 0 && count >= 0 && (!keyed || from + count <= r.keys.size()) && from + count <= r.status.length
            && r.reserveLimit >= -1 && r.reserveLimit <= count;
    }

    /**
     * COMMIT_AND_RELEASE: drops the pins of the range first (a pinned slot then reads NONE), then commits
     * its reservations, whose slots read COMMITTED, EXPIRED or INVALID; answered with the pages committed
     * and, beside them, the pins dropped.
     */
    private void commitAndRelease(final ClientRecord r)
    {
        r.l2Pages = acquires.release(r, r.from, Math.min(r.from + r.count, r.holdLimit));
        r.finish(reservations.commitSlots(r));
    }

    /** An operator's eviction of the client's keys: unpinned pool pages leave now, unless copied or loading. */
    private int evictKeys(final ClientRecord r)
    {
        int evicted = 0;
        for (int i = r.from; i < r.from + r.count; i++)
        {
            final long high = r.keys.high(i);
            final long low = r.keys.low(i);
            final int slot = index.find(high, low);
            final int page = slot < 0 || index.page(slot) == PageIndex.NO_PAGE ? -1 : index.page(slot);
            if (page >= 0 && (r.allNamespaces || pool.metadata().namespaceTagPlain(page) == r.namespaceTag)
                && !backups.isCopying(page) && !loads.isLoading(page) && space.evict(page, pool.metadata().stateWordAcquire(page)))
            {
                evicted++;
            }
        }
        space.resumeSpaceWaiters();
        return evicted;
    }

    // The pool's eviction gate: what loads and backups say about a page.

    @Override
    public int beforeEvict(final int page)
    {
        return loads.isLoading(page) ? SKIP : backups.beforeEvict(page);
    }

    @Override
    public void lost(final long keyHigh, final long keyLow)
    {
        backups.lost(keyHigh, keyLow);
    }

    @Override
    public void evicted(final int page)
    {
        loads.forget(page);
        backups.evicted(page);
    }

    @Override
    public int evictionsPending()
    {
        return backups.evictionsPending();
    }

    @Override
    public boolean cleansAhead()
    {
        return backups.cleansAhead();
    }

    @Override
    public int cleanAhead(final int page)
    {
        return loads.isLoading(page) ? CLEAN_NOT_NEEDED : backups.cleanAhead(page);
    }

    // Requests that waited, going on.

    @Override
    public void resume(final ClientRecord r)
    {
        if (r.op == MessageType.RESERVE || (r.op == MessageType.LOOKUP_AND_LOCK && r.reserving))
        {
            reservations.reserve(r);
        }
        else if (r.op == MessageType.ACQUIRE || r.op == MessageType.LOOKUP_AND_LOCK)
        {
            acquires.walk(r);
        }
    }

    @Override
    public void waitOver(final ClientRecord r)
    {
        switch (r.phase)
        {
            case ClientRecord.PHASE_PROBING -> lookups.afterProbe(r);
            case ClientRecord.PHASE_PREFETCH_WAIT -> lookups.finishWaiting(r);
            case ClientRecord.PHASE_NONE ->
            {
                if (r.op == MessageType.ACQUIRE || (r.op == MessageType.LOOKUP_AND_LOCK && !r.reserving))
                {
                    acquires.finish(r);
                }
            }
            default ->
            {
                // The acquire's walk still waits (for probes, or for space): the walk finishes it.
            }
        }
    }

    // Steps one part takes on a request's behalf in another (EngineSteps).

    @Override
    public boolean pin(final ClientRecord r, final int key, final int page, final int as)
    {
        return acquires.pin(r, key, page, as);
    }

    @Override
    public void walk(final ClientRecord r)
    {
        acquires.walk(r);
    }

    @Override
    public int release(final ClientRecord r, final int from, final int end)
    {
        return acquires.release(r, from, end);
    }

    @Override
    public int abort(final ClientRecord r, final int from, final int end, final boolean expired)
    {
        return reservations.abort(r, from, end, expired);
    }

    @Override
    public void reserveAfterPrefix(final ClientRecord r)
    {
        reservations.reserveAfterPrefix(r);
    }

    @Override
    public void indexMayMiss(final int tier, final String why)
    {
        lookups.indexMayMiss(tier, why);
    }

    // Each key's answer from a tier, on the engine thread, to the part that owns what it concerns (TierIo.Completions).

    @Override
    public void readDone(final TierIoBatch batch, final int i)
    {
        if (migrations.owns(batch.page[i]))
        {
            migrations.onReadDone(batch, i);
            return;
        }
        loads.onReadDone(batch, i);
    }

    @Override
    public void writeDone(final TierIoBatch batch, final int i)
    {
        if (!batch.timedOut && migrations.owns(batch.page[i]))
        {
            migrations.onWriteDone(batch, i);
            return;
        }
        backups.onWriteDone(batch, i);
    }

    @Override
    public void existsDone(final TierIoBatch batch, final int i)
    {
        lookups.onExistsDone(batch, i);
    }

    @Override
    public void readAbandoned(final int page)
    {
        if (migrations.owns(page))
        {
            migrations.abandonRead(page);
            return;
        }
        loads.abandon(page);
    }

    @Override
    public void writeAbandoned(final TierIoBatch batch, final int i)
    {
        if (migrations.owns(batch.page[i]))
        {
            migrations.abandonWrite(batch, i);
            return;
        }
        backups.abandon(batch, i);
    }

    @Override
    public void existsAbandoned(final TierIoBatch batch, final int i)
    {
        lookups.answerProbe(batch, i);
    }

    // Tier completions, from any thread.

    @Override
    public void batchDone(final TierIoBatch batch)
    {
        if (isEngineThread())
        {
            io.doneOnEngineThread(batch);
            return;
        }
        if (stopped)
        {
            return; // nobody reads the ring any more; a tier finishing at close must not wait on it
        }
        final long sequence = ring.next();
        try
        {
            final EngineEvent event = ring.get(sequence);
            event.type = EngineEvent.TIER_BATCH_DONE;
            event.batch = batch;
        }
        finally
        {
            ring.publish(sequence);
        }
    }

    @Override
    public void reverified(final ReverifyJob job)
    {
        if (stopped)
        {
            return;
        }
        final long sequence = ring.next();
        try
        {
            final EngineEvent event = ring.get(sequence);
            event.type = EngineEvent.PAGE_REVERIFIED;
            event.job = job;
        }
        finally
        {
            ring.publish(sequence);
        }
    }

    @Override
    public void adopted(final AdoptJob job)
    {
        if (stopped)
        {
            return;
        }
        final long sequence = ring.next();
        try
        {
            final EngineEvent event = ring.get(sequence);
            event.type = EngineEvent.PAGE_ADOPTED;
            event.adoptJob = job;
        }
        finally
        {
            ring.publish(sequence);
        }
    }

    /** Called from any thread when a tier reports an object it dropped by itself, by its name in the tier. */
    void objectRemoved(final int tier, final long high, final long low)
    {
        if (isEngineThread())
        {
            counters.increment(EngineCounter.L3_REMOVED_BY_TIER);
            io.objectDropped(index, tier, high, low);
            return;
        }
        if (stopped)
        {
            return;
        }
        final long sequence = ring.next();
        try
        {
            final EngineEvent event = ring.get(sequence);
            event.type = EngineEvent.TIER_OBJECT_REMOVED;
            event.tier = tier;
            event.keyHigh = high;
            event.keyLow = low;
        }
        finally
        {
            ring.publish(sequence);
        }
    }

    /** @return the operator's calls on this engine, each carried out on the engine thread */
    EngineAdmin operations()
    {
        return operations;
    }

    /**
     * Runs an operator's call on the engine thread, through the ring.
     *
     * @param call the call
     * @return false when the engine has stopped
     */
    boolean publishCall(final Runnable call)
    {
        if (stopped)
        {
            return false;
        }
        final long sequence = ring.next();
        try
        {
            final EngineEvent event = ring.get(sequence);
            event.type = EngineEvent.ADMIN_CALL;
            event.call = call;
        }
        finally
        {
            ring.publish(sequence);
        }
        return true;
    }

    /**
     * @param page a pool page
     * @param tier a tier
     * @return whether a backup of the page into the tier is in flight
     */
    boolean isBackingUp(final int page, final int tier)
    {
        return backups.isCopyingTo(page, tier);
    }

    /**
     * Whether the engine is live and ready, from any thread without the engine thread: its thread's state,
     * the tiers' states and the watched threads, as the counters show them.
     */
    Health health()
    {
        if (stopped)
        {
            return new Health(false, false, "the engine has stopped");
        }
        if (closing)
        {
            return new Health(true, false, "the engine is closing");
        }
        final StringBuilder why = new StringBuilder();
        for (int t = 0; t < tierNames.size(); t++)
        {
            final int state = counters.tierStateOpaque(t);
            if (state != CountersDescriptor.TIER_IN_SERVICE)
            {
                why.append(why.isEmpty() ? "" : "; ").append("tier ").append(tierNames.get(t)).append(state
                    == CountersDescriptor.TIER_STUCK ? " is stuck" : " is out of service");
            }
        }
        if (counters.getOpaque(EngineCounter.THREADS_DEAD) > 0)
        {
            why.append(why.isEmpty() ? "" : "; ").append(counters.getOpaque(EngineCounter.THREADS_DEAD)).append(" engine thread(s) died (kvtier stat)");
        }
        return new Health(true, why.isEmpty(), why.isEmpty() ? null : why.toString());
    }

    /** @return whether the engine is closing or stopped */
    boolean isClosing()
    {
        return closing || stopped;
    }

    void beginClosing()
    {
        closing = true;
        space.beginClosing();
        if (adoptions != null)
        {
            // Through the ring: the part is the engine thread's; a job that comes back after it only frees its page.
            publishCall(adoptions::stop);
        }
    }

    @Override
    public void onClose()
    {
        stopped = true;
        sessions.closeAll();
    }
}
