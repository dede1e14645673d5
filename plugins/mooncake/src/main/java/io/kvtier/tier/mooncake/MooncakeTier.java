package io.kvtier.tier.mooncake;

import io.kvtier.spi.PageKey;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierCapability;
import io.kvtier.spi.TierContext;
import io.kvtier.spi.TierStatus;
import io.kvtier.spi.TierUsage;
import io.kvtier.tier.mooncake.bindings.mooncake_replicate_config;
import io.kvtier.tier.support.TierWorkers;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An L3 tier whose objects live in a Mooncake Store cluster: the memory segments that nodes (this
 * one included, through {@code global-segment-size}) contribute, placed and evicted by
 * {@code mooncake_master}. Page frames move straight between the pool and the store
 * ({@code batch_put_from}, {@code batch_get_into}); keys are {@code key-prefix} + the page key's 32
 * hex digits.
 *
 * <h2>Threads</h2>
 * Operations return at once: the caller queues the batch ({@link TierWorkers}), and the
 * {@code io-threads} workers ({@link MooncakeWorker}) claim it in chunks of at most {@code batch-keys}
 * keys. The workers each own native scratch arrays (key strings, their
 * pointers, buffer pointers, sizes, results) sized for one chunk, so a chunk costs one batched C call
 * and no allocation in native memory. The key pointers never change: only the text they point at is
 * rewritten.
 *
 * <h2>What Mooncake does differently from the SPI, and how the tier bridges it</h2>
 * <ul>
 *   <li><b>No overwrite.</b> A put on an existing key returns 0 and keeps the first value. A write
 *       probes its keys first ({@code batch_is_exist}); a present key is removed, forced if a lease
 *       holds it, and then put. A key that cannot be removed fails its write: it is never reported OK
 *       while the old bytes stay. With {@code replace-existing = false} a present key is left as it is
 *       and its write completes OK: equal keys are equal bytes, so engines on a cluster backing up the
 *       same shared prefix need not remove each other's copies (forcing past remote readers' leases).</li>
 *   <li><b>Leases.</b> A read leases the object (the master's {@code default_kv_lease_ttl}); a remove
 *       without force during it returns {@code OBJECT_HAS_LEASE}. {@code remove} retries it off the
 *       workers until {@code lease-wait} has passed and then forces it; with the default
 *       {@code lease-wait = 0} it forces at once. Never dropped: the key completes only when the object
 *       is gone (or the remove failed for another reason, reported).</li>
 *   <li><b>Reads that outlive the lease.</b> The lease is what keeps the master from evicting or
 *       reallocating an object's memory while it is transferred. A batched get that took
 *       {@code lease-ttl} or longer may have copied memory already reused, so its keys are misses
 *       ({@link TierStatus#NOT_FOUND}): a miss costs a recompute, wrong bytes would cost the engine's
 *       frame check (trailer and CRC), which stays the last line of defence.</li>
 *   <li><b>A full store.</b> {@code NO_AVAILABLE_HANDLE} and friends: the master found no room.
 *       Its eviction frees some at the high watermark, so the put is retried {@code write-retries}
 *       times with doubling backoff from {@code write-backoff}; then the key is
 *       {@link TierStatus#NO_SPACE}.</li>
 *   <li><b>Silent eviction.</b> The master evicts objects on its own and tells no client, so the tier
 *       cannot report them through {@link TierContext#objectRemoved} and does not declare
 *       {@link TierCapability#SELF_EVICTING}; the engine learns of them as misses. {@link #usage()}
 *       counts this instance's puts minus its removes.</li>
 * </ul>
 *
 * <h2>Forced removals and this node's reads</h2>
 * A forced removal frees an object's memory even while a get is copying it, and the next put may
 * reuse that memory: the get would return OK with a mix of two objects. Within this tier that cannot
 * happen: a get holds the read side of its keys' stripe locks ({@value MooncakeRemovals#STRIPES} read-write locks by
 * key hash) for its C call, and a forced removal (a replacing write, a remove past its lease) holds
 * the write side of its key's stripe until its put or removal is done. Readers on other nodes are
 * protected only by their lease and the engine's frame check, which is why {@code remove} may wait
 * out leases ({@code lease-wait}).
 *
 * <h2>Memory registration</h2>
 * Mooncake moves bytes only from and into registered memory on RDMA (TCP also copies from
 * unregistered memory). The engine's pool ({@link TierContext#transferMemory()}) is registered once at
 * start and unregistered at close; a segment outside it is registered for the duration of its chunk.
 */
public final class MooncakeTier implements StorageTier
{
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(60);
    /** Batches queued at once; the engine bounds those in flight per tier far below it. */
    private static final int QUEUE_CAPACITY = 1 << 16;

    private final String name;
    private final MooncakeSettings settings;
    private final MooncakeStore store;
    private final long objectSize;
    private final System.Logger logger;
    private final Arena arena;
    private final MemorySegment hostMemory;
    private final boolean hostRegistered;
    private final TierWorkers workers;
    private final MooncakeRemovals removals;
    private final AtomicLong objects = new AtomicLong();
    private final Stats stats = new Stats();
    private final Object closeLock = new Object();
    private boolean released;

    /** Counters of the behaviours the tier bridges, for logs and tests. */
    static final class Stats
    {
        /** Present keys removed before a write put them again (Mooncake keeps a key's first value). */
        final AtomicLong replacedBeforeWrite = new AtomicLong();
        /** Present keys a write left as they were ({@code replace-existing = false}). */
        final AtomicLong keptExisting = new AtomicLong();
        /** Removals refused with OBJECT_HAS_LEASE, each then retried or forced. */
        final AtomicLong leaseRefusals = new AtomicLong();
        /** Removals forced past a lease. */
        final AtomicLong forcedRemovals = new AtomicLong();
        /** Keys of gets that took lease-ttl or longer, reported as misses. */
        final AtomicLong leaseExpiredReads = new AtomicLong();
        /** Put attempts refused because the store was full, each retried or reported NO_SPACE. */
        final AtomicLong fullRefusals = new AtomicLong();
        /** Keys reported NO_SPACE after the retries ran out. */
        final AtomicLong noSpace = new AtomicLong();

        @Override
        public String toString()
        {
            return "replaced-before-write=" + replacedBeforeWrite + ", kept-existing=" + keptExisting + ", lease-refusals=" + leaseRefusals + ", forced-removals=" + forcedRemovals
                + ", lease-expired-reads=" + leaseExpiredReads + ", full-refusals=" + fullRefusals + ", no-space=" + noSpace;
        }
    }

    private MooncakeTier(final String name, final MooncakeSettings settings, final TierContext context, final MooncakeStore store)
    {
        this.name = name;
        this.settings = settings;
        this.store = store;
        this.objectSize = context.objectSize();
        this.logger = context.logger();
        final byte[] prefix = settings.keyPrefix.getBytes(StandardCharsets.UTF_8);
        final int keyStride = (prefix.length + PageKey.HEX_LENGTH + 1 + 7) & ~7;
        this.arena = Arena.ofShared();
        final MemorySegment replicateConfig = replicateConfig(arena, settings, store.segmentName());

        final MemorySegment host = context.transferMemory().orElse(MemorySegment.NULL);
        boolean registered = false;
        if (host != null && !host.equals(MemorySegment.NULL) && host.byteSize() > 0)
        {
            final int rc = store.register(host);
            registered = rc == 0;
            if (!registered)
            {
                logger.log(System.Logger.Level.WARNING, "tier {0}: registering the pool ({1} bytes) with Mooncake failed with {2}; "
                    + "each chunk registers its slices instead", name, host.byteSize(), MooncakeErrors.name(rc));
            }
        }
        this.hostMemory = registered ? host : MemorySegment.NULL;
        this.hostRegistered = registered;

        final MooncakeParts parts = new MooncakeParts(name, settings, store, objectSize, logger, replicateConfig, prefix, keyStride, hostMemory,
            hostRegistered, objects, stats, new AtomicBoolean());
        removals = new MooncakeRemovals(parts);
        final List<MooncakeWorker> handlers = new ArrayList<>();
        for (int i = 0; i < settings.ioThreads; i++)
        {
            handlers.add(new MooncakeWorker(parts, removals, arena));
        }
        // One queue in submission order, as the tier always kept: chunks of batch-keys keys, one C call each.
        workers = new TierWorkers("mooncake tier " + name, "kvtier-mooncake-" + name + "-io", handlers, QUEUE_CAPACITY, false, logger);
        workers.start();
    }

    /**
     * Connects to the store and starts the workers.
     *
     * @param name     the tier's name
     * @param settings validated settings
     * @param context  the engine's side
     * @return the running tier
     * @throws MooncakeUnavailableException if the library cannot be bound or the master not reached
     */
    static MooncakeTier open(final String name, final MooncakeSettings settings, final TierContext context)
    {
        final MooncakeStore store = MooncakeStore.connect(settings, context.logger());
        try
        {
            final MooncakeTier tier = new MooncakeTier(name, settings, context, store);
            context.logger().log(System.Logger.Level.INFO, "tier {0}: Mooncake Store via {1}, segment {2}; {3}", name,
                MooncakeLibrary.location(), store.segmentName(), settings);
            return tier;
        }
        catch (final RuntimeException | Error ex)
        {
            store.destroyInBackground();
            throw ex;
        }
    }

    private static MemorySegment replicateConfig(final Arena arena, final MooncakeSettings settings, final String localSegment)
    {
        final List<String> preferred = new ArrayList<>();
        if (settings.preferLocalSegment)
        {
            preferred.add(localSegment);
        }
        preferred.addAll(settings.preferredSegments);
        final MemorySegment config = mooncake_replicate_config.allocate(arena);
        mooncake_replicate_config.replica_num(config, settings.replicas);
        mooncake_replicate_config.with_soft_pin(config, settings.softPin ? 1 : 0);
        mooncake_replicate_config.with_hard_pin(config, settings.hardPin ? 1 : 0);
        if (preferred.isEmpty())
        {
            mooncake_replicate_config.preferred_segments(config, MemorySegment.NULL);
        }
        else
        {
            final MemorySegment names = arena.allocate(ValueLayout.ADDRESS, preferred.size());
            for (int i = 0; i < preferred.size(); i++)
            {
                names.setAtIndex(ValueLayout.ADDRESS, i, arena.allocateFrom(preferred.get(i)));
            }
            mooncake_replicate_config.preferred_segments(config, names);
        }
        mooncake_replicate_config.preferred_segments_count(config, preferred.size());
        return config;
    }

    @Override
    public String name()
    {
        return name;
    }

    @Override
    public Set<TierCapability> capabilities()
    {
        // Every node on the same master sees every object; bytes move from and into pool slices directly.
        return EnumSet.of(TierCapability.SHARED, TierCapability.ZERO_COPY);
    }

    @Override
    public void exists(final TierBatch batch)
    {
        workers.submit(TierWorkers.EXISTS, batch);
    }

    @Override
    public void read(final TierBatch batch)
    {
        workers.submit(TierWorkers.READ, batch);
    }

    @Override
    public void write(final TierBatch batch)
    {
        workers.submit(TierWorkers.WRITE, batch);
    }

    @Override
    public void remove(final TierBatch batch)
    {
        workers.submit(TierWorkers.REMOVE, batch);
    }

    @Override
    public TierUsage usage()
    {
        final long count = Math.max(0, objects.get());
        return new TierUsage(count * objectSize, TierUsage.UNBOUNDED, count);
    }

    /** @return counters of the bridged behaviours */
    Stats stats()
    {
        return stats;
    }

    /** @return the name of this client's segment in the cluster */
    String segmentName()
    {
        return store.segmentName();
    }

    @Override
    public void close()
    {
        synchronized (closeLock)
        {
            if (released)
            {
                return;
            }
            final long deadline = System.nanoTime() + CLOSE_TIMEOUT.toNanos();
            // Queued chunks complete CLOSED; a put being retried stops retrying.
            final boolean workersStopped = workers.close(CLOSE_TIMEOUT);
            // Removals still waiting out a lease are forced now: they were promised, not dropped.
            removals.forcePending();
            if (!workersStopped)
            {
                // A native call hung past the deadline: leave memory and client alone rather than free them under it.
                logger.log(System.Logger.Level.ERROR, "tier {0}: workers did not stop within {1} s; the Mooncake client is leaked", name,
                    CLOSE_TIMEOUT.toSeconds());
                released = true;
                return;
            }
            if (hostRegistered)
            {
                // Before close returns: the engine may unmap the pool right after.
                store.unregister(hostMemory);
            }
            store.destroyInBackground();
            arena.close();
            released = true;
            // Once close returns nothing of the tier needs the master: whoever stops it next (a test, the
            // demo, bench) finds no client of ours mid-unmount. Bounded: a destroy that hangs is left to its thread.
            if (!store.awaitDestroyed(deadline - System.nanoTime()))
            {
                logger.log(System.Logger.Level.WARNING, "tier {0}: the Mooncake client was still unmounting its segment {1} when close gave up"
                    + " after {2} s", name, store.segmentName(), CLOSE_TIMEOUT.toSeconds());
            }
            logger.log(System.Logger.Level.DEBUG, "tier {0} closed: {1}", name, stats);
        }
    }
}
