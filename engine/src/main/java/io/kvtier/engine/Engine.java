package io.kvtier.engine;

import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.engine.config.ConfigException;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.config.EngineSettings;
import io.kvtier.engine.core.Pipeline;
import io.kvtier.engine.ipc.IpcServer;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.engine.pool.PoolPathException;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;
import io.kvtier.engine.status.EngineHistograms;
import io.kvtier.engine.tier.TierHandle;
import io.kvtier.engine.tier.TierPlugins;
import io.kvtier.engine.tier.TierRegistry;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The kvtier engine in one process: the shared-memory pool, the configured L3 tiers and the request
 * pipeline. {@link #start} builds everything from validated settings; {@link #openSession()} gives a
 * client; {@link #close()} lets in-flight backups finish, then stops.
 */
public final class Engine implements AutoCloseable
{
    private static final System.Logger LOG = System.getLogger(Engine.class.getName());
    private static final int MAX_SESSIONS = 4096;

    private final EngineConfig config;
    private final EngineClock clock;
    private final PagePool pool;
    private final EngineCounters counters;
    private final List<TierHandle> tiers;
    /** The tiers' plugins when this engine owns its tiers; null when they are shared (trust domains: {@link EngineGroup}). */
    private final TierPlugins plugins;
    private final Pipeline pipeline;
    private final AtomicBoolean closed = new AtomicBoolean();
    private IpcServer ipc;

    private Engine(final EngineConfig config, final EngineClock clock, final PagePool pool, final TierPlugins plugins, final List<TierHandle> tiers,
                   final Pipeline[] pipelineHolder)
    {
        this.plugins = plugins;
        this.config = config;
        this.clock = clock;
        this.pool = pool;
        this.counters = new EngineCounters(pool.counters());
        counters.allocateAll();
        for (final TierHandle tier : tiers)
        {
            counters.describeTier(tier.index(), tier.name(), tier.description());
        }
        this.tiers = tiers;
        this.pipeline = new Pipeline(config, clock, pool, counters, tiers, MAX_SESSIONS);
        pipelineHolder[0] = pipeline;
    }

    /**
     * Creates the pool, starts the tiers in configuration order, then the pipeline.
     *
     * @param config validated settings
     * @return the running engine
     * @throws IOException if the pool file cannot be created or mapped
     * @throws io.kvtier.engine.pool.PoolOwnedException if a live engine owns the pool file
     * @throws ConfigException if pool.path is a directory, a file that is not a pool, or on a filesystem
     *         that cannot hold the pool
     * @throws io.kvtier.spi.TierConfigException if a tier rejects its settings, or its plugin fails at start
     *         (create() returns null or throws, capabilities() or describe() throws): one line naming the
     *         tier, its type, where its plugin came from and what happened
     */
    public static Engine start(final EngineConfig config) throws IOException
    {
        return start(config, EngineClock.SYSTEM);
    }

    /**
     * Starts an engine that reads the time for leases, quarantine and timeouts from {@code clock}: for
     * tests and simulations that decide when a timeout is reached.
     *
     * @param config validated settings
     * @param clock  the engine's time
     * @return the running engine
     * @throws IOException if the pool file cannot be created or mapped
     */
    public static Engine start(final EngineConfig config, final EngineClock clock) throws IOException
    {
        ClassDirectories.loadEngineClasses();
        final PagePool pool;
        try
        {
            pool = PagePool.create(config.poolPath(), config.pageSize(), config.pageCount(), config.indexEntries(), config.clientSlots(),
                config.sessionTimeout(), config.get(EngineSettings.POOL_WARM_RESTART), config.get(EngineSettings.POOL_ALLOCATE_FIRST),
                config.get(EngineSettings.POOL_ALLOCATE_CHUNK), numaPlacement(config));
        }
        catch (final PoolPathException ex)
        {
            throw new ConfigException(EngineConfig.POOL_PATH, ex.getMessage(), ex);
        }
        if (config.get(EngineSettings.POOL_TRANSPARENT_HUGE_PAGES).equals("advise"))
        {
            pool.adviseTransparentHugePages();
        }
        final Pipeline[] pipelineHolder = new Pipeline[1];
        List<TierHandle> tiers = List.of();
        TierPlugins plugins = null;
        try
        {
            plugins = TierPlugins.discover(config.get(EngineSettings.PLUGINS_DIR));
            tiers = TierRegistry.start(config.tiers(), plugins, pool.frameLength(), pool.frames().data(), (tier, high, low) ->
            {
                final Pipeline running = pipelineHolder[0];
                if (running != null)
                {
                    running.objectRemoved(tier, high, low);
                }
            });
            final Engine engine = new Engine(config, clock, pool, plugins, tiers, pipelineHolder);
            if (config.get(EngineSettings.IPC_ENABLED))
            {
                try
                {
                    engine.ipc = IpcServer.start(config, pool, engine.pipeline);
                }
                catch (final IOException | RuntimeException ex)
                {
                    engine.close();
                    throw ex;
                }
            }
            // Only a started engine keeps its pool at a clean stop: one that failed to start leaves nothing to adopt.
            pool.keepFileOnClose(config.get(EngineSettings.POOL_KEEP_ON_STOP));
            LOG.log(System.Logger.Level.INFO, "kvtier engine started: pool {0} ({1} pages of {2} bytes), tiers {3}",
                pool.path(), pool.pageCount(), pool.pageSize(), tiers.stream().map(t -> t.name() + "(" + t.type() + ")").toList());
            return engine;
        }
        catch (final RuntimeException | Error ex)
        {
            if (closeTiers(tiers, config.l3IoTimeout()).isEmpty())
            {
                if (plugins != null)
                {
                    plugins.close();
                }
                pool.close();
            }
            else
            {
                pool.closeLeavingMapped();
            }
            throw ex;
        }
    }

    /**
     * Starts an engine on tiers it does not own: the tiers of a group of trust domains, started once for
     * all of them ({@link EngineGroup}). Closing it leaves them running.
     *
     * @param config   the domain's settings
     * @param clock    the engine's time
     * @param tiers    the started tiers, shared
     * @param removals where the group passes on objects a tier dropped, to this engine's pipeline
     * @return the running engine
     * @throws IOException if the pool file cannot be created or mapped
     */
    static Engine startOnShared(final EngineConfig config, final EngineClock clock, final List<TierHandle> tiers,
                                final java.util.function.Consumer<Pipeline> removals) throws IOException
    {
        ClassDirectories.loadEngineClasses();
        final PagePool pool;
        try
        {
            pool = PagePool.create(config.poolPath(), config.pageSize(), config.pageCount(), config.indexEntries(), config.clientSlots(),
                config.sessionTimeout(), config.get(EngineSettings.POOL_WARM_RESTART), config.get(EngineSettings.POOL_ALLOCATE_FIRST),
                config.get(EngineSettings.POOL_ALLOCATE_CHUNK), numaPlacement(config));
        }
        catch (final PoolPathException ex)
        {
            throw new ConfigException(EngineConfig.POOL_PATH, ex.getMessage(), ex);
        }
        if (config.get(EngineSettings.POOL_TRANSPARENT_HUGE_PAGES).equals("advise"))
        {
            pool.adviseTransparentHugePages();
        }
        final Engine engine;
        try
        {
            engine = new Engine(config, clock, pool, null, tiers, new Pipeline[1]);
        }
        catch (final RuntimeException | Error ex)
        {
            pool.close();
            throw ex;
        }
        removals.accept(engine.pipeline);
        if (config.get(EngineSettings.IPC_ENABLED))
        {
            try
            {
                engine.ipc = IpcServer.start(config, pool, engine.pipeline);
            }
            catch (final IOException | RuntimeException ex)
            {
                engine.close();
                throw ex;
            }
        }
        pool.keepFileOnClose(config.get(EngineSettings.POOL_KEEP_ON_STOP));
        return engine;
    }

    /**
     * Opens a session for one thread of this process.
     *
     * @return the registered session
     * @throws SessionException if the engine is closing or every session slot is taken
     */
    public Session openSession()
    {
        final Session session = new Session(this, pool, config.sessionMaxKeys());
        try
        {
            session.open();
        }
        catch (final SessionException ex)
        {
            if (ex.status() == ErrorCode.INVALID)
            {
                throw new SessionException(ErrorCode.INVALID, "no session slot left: " + MAX_SESSIONS + " sessions are open");
            }
            throw ex;
        }
        return session;
    }

    /**
     * @return the operator's calls on this engine: tiers, migrations, evictions, marks, health (the admin
     *         API serves them); each is carried out on the engine thread
     */
    public io.kvtier.engine.operations.EngineOperations operations()
    {
        return pipeline.operations();
    }

    /**
     * @return what a publisher of KV events for routers reads (docs/kv-events.md), when {@code events.enabled};
     *         kvtier serve starts the publisher
     */
    public java.util.Optional<io.kvtier.engine.events.EventSource> events()
    {
        return java.util.Optional.ofNullable(pipeline.events());
    }

    /**
     * @return the engine thread's pipeline: for the JMH benchmarks that hand the engine thread work of their own,
     *         to time its cost without a client's wait (its package is exported to bench only)
     */
    public io.kvtier.engine.core.Pipeline pipeline()
    {
        return pipeline;
    }

    /** @return the IPC server, when {@code ipc.enabled} */
    public java.util.Optional<IpcServer> ipc()
    {
        return java.util.Optional.ofNullable(ipc);
    }

    /** @return the settings the engine runs with */
    public EngineConfig config()
    {
        return config;
    }

    /** @return the shared-memory pool */
    public PagePool pool()
    {
        return pool;
    }

    /** @return the started L3 tiers, in configuration order */
    public List<TierHandle> tiers()
    {
        return tiers;
    }

    /** @return the engine's counters */
    public EngineCounters counters()
    {
        return counters;
    }

    /**
     * @param config the engine's settings
     * @return the pool's NUMA placement, once this host can make it
     * @throws ConfigException naming {@code pool.numa} when a node it names is not online, or the host cannot place memory
     */
    static io.kvtier.engine.pool.NumaPlacement numaPlacement(final EngineConfig config)
    {
        final io.kvtier.engine.pool.NumaPlacement numa = io.kvtier.engine.pool.NumaPlacement.parse(config.get(EngineSettings.POOL_NUMA));
        final java.util.Optional<String> unavailable = numa.unavailableOn(io.kvtier.engine.pool.NumaPlacement.ONLINE_NODES);
        if (unavailable.isPresent())
        {
            throw new ConfigException(EngineSettings.POOL_NUMA.key(), EngineSettings.POOL_NUMA.key() + " = " + numa.text() + ": " + unavailable.get());
        }
        return numa;
    }

    /**
     * @return the engine's latency histograms (per tier, per message type), which its engine thread
     *         alone writes and any thread may read
     */
    public EngineHistograms histograms()
    {
        return counters.histograms();
    }

    /** @return every counter's current value */
    public Map<EngineCounter, Long> snapshot()
    {
        return counters.snapshot();
    }

    boolean isClosed()
    {
        return closed.get();
    }

    boolean isHalted()
    {
        return pipeline.isHalted();
    }

    /** Puts a session request on the ring; false once the engine is closed. */
    boolean publish(final Session session, final int op, final int from, final int count)
    {
        return pipeline.publish(session, op, from, count);
    }

    /**
     * Stops the engine: new requests fail with {@link ErrorCode#CLOSED}, in-flight backups get up
     * to {@code l3.io-timeout} to finish (those that do not are reported), then the pipeline stops,
     * the tiers close and the pool file is removed.
     *
     * <p>Bounded whatever the tiers do: the engine thread never waits on a tier, and each tier's
     * {@code close()} runs on a thread of its own, all of them waited for at most {@code l3.io-timeout}
     * (in all, about three times {@code l3.io-timeout}: the backups' wait, the ring's drain, the tiers'
     * close). A tier that has not closed by then, or that may still be reading or writing memory the
     * engine handed it (a call that never returned, a batch never completed), is named in the log, and
     * the pool's mapping and the staging frames are then left in place until the process exits rather
     * than unmapped under it: native code writing into an unmapped page would take the whole JVM down.
     * The pool file is removed either way.
     */
    @Override
    public void close()
    {
        if (!closed.compareAndSet(false, true))
        {
            return;
        }
        if (ipc != null)
        {
            // First, while the pipeline still runs: IPC clients' pins and reservations go back through it.
            ipc.close();
        }
        final Duration wait = config.l3IoTimeout();
        // Opened before the engine refuses new sessions: it is how close() waits for in-flight backups.
        final Session drain = new Session(this, pool, 1);
        try
        {
            drain.open();
        }
        catch (final SessionException ignored)
        {
            // every session slot is taken: the flush below is skipped and unfinished backups are reported
        }
        pipeline.beginClosing();
        final long deadline = clock.nanoTime() + wait.toNanos();
        if (drain.id() != 0)
        {
            final Thread flusher = Thread.ofPlatform().daemon(true).start(() ->
            {
                try
                {
                    drain.flush();
                }
                catch (final RuntimeException ignored)
                {
                    // reported below from the counter
                }
            });
            // Waits on the engine's clock, so the timeout is the one configured, whatever the machine's load.
            while (flusher.isAlive() && clock.nanoTime() - deadline < 0 && !Thread.currentThread().isInterrupted())
            {
                java.util.concurrent.locks.LockSupport.parkNanos(1_000_000L);
            }
        }
        final long unfinished = counters.getOpaque(EngineCounter.BACKUPS_IN_FLIGHT);
        if (unfinished > 0)
        {
            LOG.log(System.Logger.Level.WARNING, "{0} backups still in flight after {1} ms at shutdown; their pages are not in L3",
                unfinished, wait.toMillis());
        }
        pipeline.stop(wait.toMillis());
        // Shared tiers (trust domains) are closed by their group, once every domain's engine stopped.
        final List<String> notClosed = plugins == null ? List.of() : closeTiers(tiers, wait);
        final List<String> stillTouching = pipeline.tiersStillTouchingMemory();
        if (notClosed.isEmpty() && stillTouching.isEmpty())
        {
            // Only now: a tier may load classes of its plugin until it is closed.
            if (plugins != null)
            {
                plugins.close();
            }
            pipeline.closeStaging();
            pool.close();
            LOG.log(System.Logger.Level.INFO, "kvtier engine stopped");
            return;
        }
        LOG.log(System.Logger.Level.ERROR, "kvtier engine stopped, but tiers {0} did not close within {1} ms and tiers {2} may still read or write"
            + " memory the engine handed them: the pool file is removed, but its mapping, the staging frames and the plugins'' class loaders"
            + " are left in place until the process exits", notClosed, wait.toMillis(), stillTouching);
        pool.closeLeavingMapped();
    }

    /**
     * Closes every tier, each on a thread of its own, and waits for them all at most {@code wait}.
     *
     * @return the names of the tiers whose {@code close()} had not returned by then (their threads stay)
     */
    static List<String> closeTiers(final List<TierHandle> tiers, final Duration wait)
    {
        final List<Thread> closers = new java.util.ArrayList<>();
        for (final TierHandle tier : tiers)
        {
            closers.add(Thread.ofPlatform().daemon(true).name("kvtier-close-" + tier.name()).start(() ->
            {
                try
                {
                    tier.tier().close();
                }
                catch (final RuntimeException | Error ex)
                {
                    LOG.log(System.Logger.Level.WARNING, "tier " + tier.name() + " failed to close", ex);
                }
            }));
        }
        // Real time, not the engine's clock: the bound must hold whatever clock the engine was given.
        final long deadline = System.nanoTime() + wait.toNanos();
        final List<String> notClosed = new java.util.ArrayList<>();
        for (int t = 0; t < closers.size(); t++)
        {
            try
            {
                closers.get(t).join(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
            if (closers.get(t).isAlive())
            {
                notClosed.add(tiers.get(t).name());
            }
        }
        return notClosed;
    }

    /** @return backups in flight, as of the last counter update */
    public long backupsInFlight()
    {
        return counters.getOpaque(EngineCounter.BACKUPS_IN_FLIGHT);
    }
}
