package io.kvtier.tier.mooncake;

import io.kvtier.spi.PageKey;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierCapability;
import io.kvtier.spi.TierContext;
import io.kvtier.spi.TierStatus;
import io.kvtier.spi.TierUsage;
import io.kvtier.tier.mooncake.bindings.mooncake_replicate_config;
import io.kvtier.tier.mooncake.bindings.store_c_h;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * An L3 tier whose objects live in a Mooncake Store cluster: the memory segments that nodes (this
 * one included, through {@code global-segment-size}) contribute, placed and evicted by
 * {@code mooncake_master}. Page frames move straight between the pool and the store
 * ({@code batch_put_from}, {@code batch_get_into}); keys are {@code key-prefix} + the page key's 32
 * hex digits.
 *
 * <h2>Threads</h2>
 * Operations return at once: the caller splits the batch into chunks of at most {@code batch-keys}
 * keys and queues them. {@code io-threads} workers each own native scratch arrays (key strings, their
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
 * happen: a get holds the read side of its keys' stripe locks ({@value #STRIPES} read-write locks by
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
    private static final int EXISTS = 0;
    private static final int READ = 1;
    private static final int WRITE = 2;
    private static final int REMOVE = 3;
    private static final Chunk POISON = new Chunk(-1, null, 0, 0);
    private static final long CLOSE_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(60);
    private static final int STRIPES = 64;

    private final String name;
    private final MooncakeSettings settings;
    private final MooncakeStore store;
    private final MemorySegment handle;
    private final long objectSize;
    private final System.Logger logger;
    private final Arena arena;
    private final MemorySegment replicateConfig;
    private final byte[] prefix;
    private final int keyStride;
    private final MemorySegment hostMemory;
    private final boolean hostRegistered;
    private final LinkedBlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
    private final Thread[] workers;
    private final ScheduledExecutorService leaseRetries;
    private final List<LeasedRemoval> pendingRemovals = new ArrayList<>();
    private final ReentrantReadWriteLock[] stripes = new ReentrantReadWriteLock[STRIPES];
    private final AtomicInteger submitting = new AtomicInteger();
    private final AtomicLong objects = new AtomicLong();
    private final Stats stats = new Stats();
    private final AtomicBoolean registrationWarned = new AtomicBoolean();
    private final Object closeLock = new Object();
    private volatile boolean closed;
    private volatile boolean closing;
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

    private record Chunk(int op, TierBatch batch, int from, int to)
    {
    }

    /** A removal a lease refused, retried until its deadline and then forced. */
    private record LeasedRemoval(TierBatch batch, int index, long keyHigh, long keyLow, byte[] key, long deadlineNanos, long backoffNanos)
    {
    }

    private MooncakeTier(final String name, final MooncakeSettings settings, final TierContext context, final MooncakeStore store)
    {
        this.name = name;
        this.settings = settings;
        this.store = store;
        this.handle = store.handle();
        this.objectSize = context.objectSize();
        this.logger = context.logger();
        this.prefix = settings.keyPrefix.getBytes(StandardCharsets.UTF_8);
        this.keyStride = (prefix.length + PageKey.HEX_LENGTH + 1 + 7) & ~7;
        for (int i = 0; i < STRIPES; i++)
        {
            stripes[i] = new ReentrantReadWriteLock();
        }
        this.arena = Arena.ofShared();
        this.replicateConfig = replicateConfig(arena, settings, store.segmentName());

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

        leaseRetries = new ScheduledThreadPoolExecutor(1, runnable -> Thread.ofPlatform().daemon()
            .name("kvtier-mooncake-" + name + "-lease").unstarted(runnable));
        workers = new Thread[settings.ioThreads];
        for (int i = 0; i < workers.length; i++)
        {
            final Worker worker = new Worker();
            workers[i] = Thread.ofPlatform().daemon().name("kvtier-mooncake-" + name + "-io-" + i).unstarted(worker::run);
        }
        for (final Thread worker : workers)
        {
            worker.start();
        }
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
        submit(EXISTS, batch);
    }

    @Override
    public void read(final TierBatch batch)
    {
        submit(READ, batch);
    }

    @Override
    public void write(final TierBatch batch)
    {
        submit(WRITE, batch);
    }

    @Override
    public void remove(final TierBatch batch)
    {
        submit(REMOVE, batch);
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

    private void submit(final int op, final TierBatch batch)
    {
        final int size = batch.size();
        if (size == 0)
        {
            return;
        }
        submitting.incrementAndGet();
        try
        {
            if (closed)
            {
                completeAll(batch, 0, size, TierStatus.CLOSED);
                return;
            }
            for (int from = 0; from < size; from += settings.batchKeys)
            {
                queue.add(new Chunk(op, batch, from, Math.min(size, from + settings.batchKeys)));
            }
        }
        finally
        {
            submitting.decrementAndGet();
        }
    }

    private static void completeAll(final TierBatch batch, final int from, final int to, final TierStatus status)
    {
        for (int i = from; i < to; i++)
        {
            batch.complete(i, status);
        }
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
            closed = true;
            // A submit that saw closed == false is still queueing: let it finish so its chunks are drained below.
            while (submitting.get() != 0)
            {
                Thread.onSpinWait();
            }
            closing = true;
            for (int i = 0; i < workers.length; i++)
            {
                queue.add(POISON);
            }
            final long deadline = System.nanoTime() + CLOSE_TIMEOUT_NANOS;
            for (final Thread worker : workers)
            {
                try
                {
                    worker.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
                }
                catch (final InterruptedException ex)
                {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            leaseRetries.shutdownNow();
            try
            {
                leaseRetries.awaitTermination(10, TimeUnit.SECONDS);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
            // Removals still waiting out a lease are forced now: they were promised, not dropped.
            final List<LeasedRemoval> pending;
            synchronized (pendingRemovals)
            {
                pending = new ArrayList<>(pendingRemovals);
                pendingRemovals.clear();
            }
            try (Arena scratch = Arena.ofConfined())
            {
                for (final LeasedRemoval removal : pending)
                {
                    final MemorySegment key = scratch.allocate(removal.key().length + 1L);
                    MemorySegment.copy(removal.key(), 0, key, ValueLayout.JAVA_BYTE, 0, removal.key().length);
                    completeRemoval(removal.batch(), removal.index(), forceRemove(key, removal.keyHigh(), removal.keyLow()), true);
                }
            }
            boolean workersStopped = true;
            for (final Thread worker : workers)
            {
                workersStopped &= !worker.isAlive();
            }
            if (!workersStopped)
            {
                // A native call hung past the deadline: leave memory and client alone rather than free them under it.
                logger.log(System.Logger.Level.ERROR, "tier {0}: workers did not stop within {1} s; the Mooncake client is leaked", name,
                    TimeUnit.NANOSECONDS.toSeconds(CLOSE_TIMEOUT_NANOS));
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
            logger.log(System.Logger.Level.DEBUG, "tier {0} closed: {1}", name, stats);
        }
    }

    private void completeRemoval(final TierBatch batch, final int index, final int rc, final boolean forced)
    {
        if (rc == 0)
        {
            if (forced)
            {
                stats.forcedRemovals.incrementAndGet();
            }
            decrementObjects();
            batch.complete(index, TierStatus.OK);
        }
        else if (MooncakeErrors.isMiss(rc))
        {
            batch.complete(index, TierStatus.NOT_FOUND);
        }
        else
        {
            logger.log(System.Logger.Level.WARNING, "tier {0}: remove failed with {1}", name, MooncakeErrors.name(rc));
            batch.complete(index, MooncakeErrors.failure(rc));
        }
    }

    private void decrementObjects()
    {
        objects.getAndUpdate(n -> n > 0 ? n - 1 : 0);
    }

    /** Retries a removal a lease refused, from the lease thread; forces it at its deadline. */
    private void retryLeasedRemoval(final LeasedRemoval removal)
    {
        synchronized (pendingRemovals)
        {
            if (!pendingRemovals.remove(removal))
            {
                return; // close took it
            }
        }
        try (Arena scratch = Arena.ofConfined())
        {
            final MemorySegment key = scratch.allocate(removal.key().length + 1L);
            MemorySegment.copy(removal.key(), 0, key, ValueLayout.JAVA_BYTE, 0, removal.key().length);
            final boolean force = System.nanoTime() - removal.deadlineNanos() >= 0;
            final int rc = force ? forceRemove(key, removal.keyHigh(), removal.keyLow()) : store_c_h.mooncake_store_remove(handle, key, 0);
            if (rc == MooncakeErrors.OBJECT_HAS_LEASE && !force)
            {
                stats.leaseRefusals.incrementAndGet();
                scheduleLeasedRemoval(new LeasedRemoval(removal.batch(), removal.index(), removal.keyHigh(), removal.keyLow(), removal.key(), removal.deadlineNanos(),
                    Math.min(removal.backoffNanos() * 2, TimeUnit.SECONDS.toNanos(1))));
                return;
            }
            completeRemoval(removal.batch(), removal.index(), rc, force);
        }
        catch (final RuntimeException ex)
        {
            logger.log(System.Logger.Level.ERROR, "tier " + name + ": retrying a removal failed", ex);
            removal.batch().complete(removal.index(), TierStatus.IO_ERROR);
        }
    }

    private void scheduleLeasedRemoval(final LeasedRemoval removal)
    {
        synchronized (pendingRemovals)
        {
            pendingRemovals.add(removal);
        }
        final long delay = Math.max(0, Math.min(removal.backoffNanos(), removal.deadlineNanos() - System.nanoTime()));
        try
        {
            leaseRetries.schedule(() -> retryLeasedRemoval(removal), delay, TimeUnit.NANOSECONDS);
        }
        catch (final java.util.concurrent.RejectedExecutionException ex)
        {
            // Closing: close() forces whatever is still pending.
        }
    }

    /**
     * One I/O thread and its native scratch: the arrays one batched C call takes, for up to
     * {@code batch-keys} keys.
     */
    private final class Worker
    {
        private final int capacity = settings.batchKeys;
        /** One slot past the batch arrays, for single-key calls made while the arrays are being filled. */
        private final int scratch = capacity;
        private final MemorySegment keyText = arena.allocate((long)keyStride * (capacity + 1), 8);
        private final MemorySegment keyPointers = arena.allocate(ValueLayout.ADDRESS, capacity + 1L);
        private final MemorySegment bufferPointers = arena.allocate(ValueLayout.ADDRESS, capacity);
        private final MemorySegment sizes = arena.allocate(ValueLayout.JAVA_LONG, capacity);
        private final MemorySegment results = arena.allocate(ValueLayout.JAVA_LONG, capacity);
        /** Which batch index sits at each position of the arrays. */
        private final int[] slots = new int[capacity];
        private final boolean[] existed = new boolean[capacity];
        private final int[] attempts = new int[capacity];
        private final byte[] hex = new byte[PageKey.HEX_LENGTH];
        private final List<MemorySegment> registeredSlices = new ArrayList<>();
        /** Which keys of the current chunk the worker completed or handed on, so a failure completes only the rest. */
        private final boolean[] handled = new boolean[capacity];
        private final TierStatus[] deferred = new TierStatus[capacity];
        private int chunkFrom;

        Worker()
        {
            for (int i = 0; i <= capacity; i++)
            {
                final MemorySegment text = keyText.asSlice((long)i * keyStride, keyStride);
                MemorySegment.copy(prefix, 0, text, ValueLayout.JAVA_BYTE, 0, prefix.length);
                text.set(ValueLayout.JAVA_BYTE, prefix.length + PageKey.HEX_LENGTH, (byte)0);
                // The pointers never change: each points at its slot's text, rewritten per key.
                keyPointers.setAtIndex(ValueLayout.ADDRESS, i, text);
            }
        }

        void run()
        {
            while (true)
            {
                final Chunk chunk;
                try
                {
                    chunk = queue.take();
                }
                catch (final InterruptedException ex)
                {
                    // Interrupts are not how the tier stops workers; the poison chunk is.
                    continue;
                }
                if (chunk == POISON)
                {
                    return;
                }
                if (closing)
                {
                    completeAll(chunk.batch(), chunk.from(), chunk.to(), TierStatus.CLOSED);
                    continue;
                }
                java.util.Arrays.fill(handled, false);
                chunkFrom = chunk.from();
                try
                {
                    switch (chunk.op())
                    {
                        case EXISTS -> exists(chunk);
                        case READ -> read(chunk);
                        case WRITE -> write(chunk);
                        default -> remove(chunk);
                    }
                }
                catch (final RuntimeException | Error ex)
                {
                    logger.log(System.Logger.Level.ERROR, "tier " + name + ": a " + opName(chunk.op()) + " chunk failed", ex);
                    // Keys the chunk completed (or handed to the lease thread) are not the worker's any more.
                    for (int i = chunk.from(); i < chunk.to(); i++)
                    {
                        if (!handled[i - chunk.from()])
                        {
                            finish(chunk.batch(), i, TierStatus.IO_ERROR);
                        }
                    }
                }
                finally
                {
                    try
                    {
                        unregisterSlices();
                    }
                    finally
                    {
                        completeDeferred(chunk);
                    }
                }
            }
        }

        /**
         * Records a read's or write's outcome; {@link #completeDeferred} hands it to the engine once the
         * chunk is done with the key's memory, slices registered for it unregistered included: a key's
         * segment belongs to the engine again the moment the key completes.
         */
        private void finish(final TierBatch batch, final int index, final TierStatus status)
        {
            handled[index - chunkFrom] = true;
            deferred[index - chunkFrom] = status;
        }

        private void completeDeferred(final Chunk chunk)
        {
            for (int i = chunk.from(); i < chunk.to(); i++)
            {
                final TierStatus status = deferred[i - chunk.from()];
                if (status != null)
                {
                    deferred[i - chunk.from()] = null;
                    chunk.batch().complete(i, status);
                }
            }
        }

        /** Writes key {@code index} of the batch into array slot {@code slot}. */
        private void setKey(final int slot, final TierBatch batch, final int index)
        {
            PageKey.writeHex(batch.keyHigh(index), batch.keyLow(index), hex, 0);
            MemorySegment.copy(hex, 0, keyText, ValueLayout.JAVA_BYTE, (long)slot * keyStride + prefix.length, PageKey.HEX_LENGTH);
        }

        private MemorySegment key(final int slot)
        {
            return keyPointers.getAtIndex(ValueLayout.ADDRESS, slot);
        }

        private byte[] keyBytes(final int slot)
        {
            final byte[] bytes = new byte[prefix.length + PageKey.HEX_LENGTH];
            MemorySegment.copy(keyText, ValueLayout.JAVA_BYTE, (long)slot * keyStride, bytes, 0, bytes.length);
            return bytes;
        }

        private void exists(final Chunk chunk)
        {
            final TierBatch batch = chunk.batch();
            final int count = chunk.to() - chunk.from();
            for (int slot = 0; slot < count; slot++)
            {
                setKey(slot, batch, chunk.from() + slot);
            }
            final int rc = store_c_h.mooncake_store_batch_is_exist(handle, keyPointers, count, results);
            for (int slot = 0; slot < count; slot++)
            {
                final int index = chunk.from() + slot;
                if (rc != 0)
                {
                    finish(batch, index, MooncakeErrors.failure(rc));
                    continue;
                }
                final int answer = results.getAtIndex(ValueLayout.JAVA_INT, slot);
                finish(batch, index, answer == 1 ? TierStatus.OK : answer == 0 ? TierStatus.NOT_FOUND : MooncakeErrors.failure(answer));
            }
            if (rc != 0)
            {
                logger.log(System.Logger.Level.WARNING, "tier {0}: batch_is_exist failed with {1}", name, MooncakeErrors.name(rc));
            }
        }

        private void read(final Chunk chunk)
        {
            final TierBatch batch = chunk.batch();
            int count = 0;
            for (int index = chunk.from(); index < chunk.to(); index++)
            {
                final MemorySegment segment = batch.segment(index);
                if (segment.byteSize() != objectSize && !readsWhole(batch, index, segment))
                {
                    continue; // completed: missing, or an object of another size
                }
                setKey(count, batch, index);
                bufferPointers.setAtIndex(ValueLayout.ADDRESS, count, segment);
                sizes.setAtIndex(ValueLayout.JAVA_LONG, count, segment.byteSize());
                ensureRegistered(segment);
                slots[count++] = index;
            }
            if (count == 0)
            {
                return;
            }
            long mask = 0;
            for (int slot = 0; slot < count; slot++)
            {
                mask |= stripeBit(batch.keyHigh(slots[slot]), batch.keyLow(slots[slot]));
            }
            final int rc;
            final boolean outlivedLease;
            lockStripes(mask, false);
            try
            {
                final long start = System.nanoTime();
                rc = store_c_h.mooncake_store_batch_get_into(handle, keyPointers, bufferPointers, sizes, count, results);
                outlivedLease = System.nanoTime() - start >= settings.leaseTtl.toNanos();
            }
            finally
            {
                unlockStripes(mask, false);
            }
            for (int slot = 0; slot < count; slot++)
            {
                final int index = slots[slot];
                if (rc != 0)
                {
                    finish(batch, index, MooncakeErrors.failure(rc));
                    continue;
                }
                final long got = results.getAtIndex(ValueLayout.JAVA_LONG, slot);
                final long expected = sizes.getAtIndex(ValueLayout.JAVA_LONG, slot);
                if (got == expected)
                {
                    if (outlivedLease)
                    {
                        stats.leaseExpiredReads.incrementAndGet();
                        finish(batch, index, TierStatus.NOT_FOUND);
                    }
                    else
                    {
                        finish(batch, index, TierStatus.OK);
                    }
                }
                else if (got >= 0)
                {
                    finish(batch, index, TierStatus.CORRUPT); // a smaller object: not a whole page
                }
                else if (MooncakeErrors.isMiss(got))
                {
                    finish(batch, index, TierStatus.NOT_FOUND);
                }
                else if (got == MooncakeErrors.INVALID_PARAMS)
                {
                    // Also what a buffer too small for the object gets: ask the object's size to tell.
                    finish(batch, index, sizeStatus(store_c_h.mooncake_store_get_size(handle, key(slot)), expected, TierStatus.IO_ERROR));
                }
                else
                {
                    finish(batch, index, MooncakeErrors.failure(got));
                }
            }
            if (rc != 0)
            {
                logger.log(System.Logger.Level.WARNING, "tier {0}: batch_get_into failed with {1}", name, MooncakeErrors.name(rc));
            }
        }

        /**
         * A segment of a size other than the tier's object size: the object is read only if it has
         * exactly that size, so a mismatch is CORRUPT and never a partial read.
         *
         * @return whether the key should be read; when false it is completed
         */
        private boolean readsWhole(final TierBatch batch, final int index, final MemorySegment segment)
        {
            setKey(scratch, batch, index);
            final long size = store_c_h.mooncake_store_get_size(handle, key(scratch));
            final TierStatus status = sizeStatus(size, segment.byteSize(), null);
            if (status == null)
            {
                return true;
            }
            finish(batch, index, status);
            return false;
        }

        /** @return the status a key of that stored size gets for a segment of {@code expected} bytes, or {@code same} when equal */
        private TierStatus sizeStatus(final long size, final long expected, final TierStatus same)
        {
            if (size == expected)
            {
                return same;
            }
            if (size >= 0)
            {
                return TierStatus.CORRUPT;
            }
            return MooncakeErrors.isMiss(size) ? TierStatus.NOT_FOUND : MooncakeErrors.failure(size);
        }

        private void write(final Chunk chunk)
        {
            final TierBatch batch = chunk.batch();
            final int count = chunk.to() - chunk.from();
            for (int slot = 0; slot < count; slot++)
            {
                final int index = chunk.from() + slot;
                setKey(slot, batch, index);
                slots[slot] = index;
                attempts[slot] = 0;
            }
            // Mooncake keeps a key's first value: find the keys that are there so they can be removed first.
            final int probe = store_c_h.mooncake_store_batch_is_exist(handle, keyPointers, count, results);
            long mask = 0;
            for (int slot = 0; slot < count && settings.replaceExisting; slot++)
            {
                if (probe != 0 || results.getAtIndex(ValueLayout.JAVA_INT, slot) != 0)
                {
                    mask |= stripeBit(batch.keyHigh(slots[slot]), batch.keyLow(slots[slot]));
                }
            }
            // Held from the removal to the put, so this tier's gets never copy a key while it is replaced.
            lockStripes(mask, true);
            try
            {
                writeLocked(batch, count, probe);
            }
            finally
            {
                unlockStripes(mask, true);
            }
        }

        private void writeLocked(final TierBatch batch, final int count, final int probe)
        {
            int pending = 0;
            for (int slot = 0; slot < count; slot++)
            {
                final int index = slots[slot];
                final int answer = probe == 0 ? results.getAtIndex(ValueLayout.JAVA_INT, slot) : probe;
                existed[slot] = answer == 1;
                if (answer < 0)
                {
                    logger.log(System.Logger.Level.WARNING, "tier {0}: probing a key before its write failed with {1}", name,
                        MooncakeErrors.name(answer));
                    finish(batch, index, MooncakeErrors.failure(answer));
                    continue;
                }
                if (existed[slot] && !settings.replaceExisting)
                {
                    // Equal keys are equal bytes (docs/keys.md): the stored copy serves as well as ours would.
                    stats.keptExisting.incrementAndGet();
                    finish(batch, index, TierStatus.OK);
                    continue;
                }
                if (existed[slot])
                {
                    final TierStatus removed = removeForReplace(slot);
                    if (removed != null)
                    {
                        finish(batch, index, removed);
                        continue;
                    }
                }
                compact(slot, pending++, batch.segment(index), true);
            }
            putWithRetries(batch, pending);
        }

        /** Moves the key in {@code slot} to {@code to} (to <= slot), with its buffer, registered unless it already is. */
        private void compact(final int slot, final int to, final MemorySegment segment, final boolean register)
        {
            if (slot != to)
            {
                MemorySegment.copy(keyText, (long)slot * keyStride, keyText, (long)to * keyStride, keyStride);
                slots[to] = slots[slot];
                existed[to] = existed[slot];
                attempts[to] = attempts[slot];
            }
            bufferPointers.setAtIndex(ValueLayout.ADDRESS, to, segment);
            sizes.setAtIndex(ValueLayout.JAVA_LONG, to, segment.byteSize());
            if (register)
            {
                ensureRegistered(segment);
            }
        }

        /**
         * Removes a present key before its write: without force first, forced if a lease holds it
         * (a writer must not wait out a remote reader's lease).
         *
         * @return null when it is gone, else the failure the write completes with
         */
        private TierStatus removeForReplace(final int slot)
        {
            int rc = store_c_h.mooncake_store_remove(handle, key(slot), 0);
            boolean forced = false;
            if (rc == MooncakeErrors.OBJECT_HAS_LEASE)
            {
                stats.leaseRefusals.incrementAndGet();
                rc = store_c_h.mooncake_store_remove(handle, key(slot), 1); // the caller holds the stripe
                forced = true;
            }
            if (rc == 0 || MooncakeErrors.isMiss(rc))
            {
                if (rc == 0)
                {
                    stats.replacedBeforeWrite.incrementAndGet();
                    if (forced)
                    {
                        stats.forcedRemovals.incrementAndGet();
                    }
                }
                else
                {
                    existed[slot] = false; // removed by someone else meanwhile: the put adds an object
                }
                return null;
            }
            logger.log(System.Logger.Level.WARNING, "tier {0}: removing a key to replace it failed with {1}; the write fails",
                name, MooncakeErrors.name(rc));
            return MooncakeErrors.failure(rc);
        }

        /** Puts the first {@code count} slots, retrying the refused ones with doubling backoff. */
        private void putWithRetries(final TierBatch batch, final int initialCount)
        {
            int count = initialCount;
            long backoff = settings.writeBackoff.toNanos();
            while (count > 0)
            {
                final int rc = store_c_h.mooncake_store_batch_put_from(handle, keyPointers, bufferPointers, sizes, count, replicateConfig, results);
                int retry = 0;
                for (int slot = 0; slot < count; slot++)
                {
                    final int index = slots[slot];
                    final int result = rc == 0 ? results.getAtIndex(ValueLayout.JAVA_INT, slot) : rc;
                    if (result == 0)
                    {
                        if (!existed[slot])
                        {
                            objects.incrementAndGet();
                        }
                        finish(batch, index, TierStatus.OK);
                        continue;
                    }
                    final boolean full = MooncakeErrors.isFull(result);
                    final boolean raced = result == MooncakeErrors.OBJECT_ALREADY_EXISTS;
                    if (full)
                    {
                        stats.fullRefusals.incrementAndGet();
                    }
                    if ((full || raced) && attempts[slot] < settings.writeRetries && !closing)
                    {
                        if (raced)
                        {
                            final TierStatus removed = removeForReplace(slot);
                            if (removed != null)
                            {
                                finish(batch, index, removed);
                                continue;
                            }
                        }
                        attempts[slot]++;
                        compact(slot, retry++, batch.segment(index), false);
                        continue;
                    }
                    if (full)
                    {
                        stats.noSpace.incrementAndGet();
                        logger.log(System.Logger.Level.WARNING, "tier {0}: the store is full ({1}) after {2} attempt(s); the write is NO_SPACE",
                            name, MooncakeErrors.name(result), attempts[slot] + 1);
                        finish(batch, index, TierStatus.NO_SPACE);
                    }
                    else
                    {
                        logger.log(System.Logger.Level.WARNING, "tier {0}: put failed with {1}", name, MooncakeErrors.name(result));
                        finish(batch, index, closing && raced ? TierStatus.CLOSED : MooncakeErrors.failure(result));
                    }
                }
                count = retry;
                if (count > 0)
                {
                    // The master evicts at its high watermark: give it time to make room.
                    LockSupportSleep.sleepNanos(backoff);
                    backoff = Math.min(backoff * 2, TimeUnit.SECONDS.toNanos(2));
                }
            }
        }

        private void remove(final Chunk chunk)
        {
            final TierBatch batch = chunk.batch();
            for (int index = chunk.from(); index < chunk.to(); index++)
            {
                setKey(scratch, batch, index);
                final boolean force = settings.leaseWait.isZero();
                final int rc = store_c_h.mooncake_store_remove(handle, key(scratch), 0);
                if (rc == MooncakeErrors.OBJECT_HAS_LEASE)
                {
                    stats.leaseRefusals.incrementAndGet();
                    if (force)
                    {
                        handled[index - chunkFrom] = true;
                        completeRemoval(batch, index, forceRemove(key(scratch), batch.keyHigh(index), batch.keyLow(index)), true);
                    }
                    else
                    {
                        final long backoff = Math.max(settings.writeBackoff.toNanos(), TimeUnit.MILLISECONDS.toNanos(50));
                        handled[index - chunkFrom] = true;
                        scheduleLeasedRemoval(new LeasedRemoval(batch, index, batch.keyHigh(index), batch.keyLow(index), keyBytes(scratch), System.nanoTime() + settings.leaseWait.toNanos(), backoff));
                    }
                    continue;
                }
                handled[index - chunkFrom] = true;
                completeRemoval(batch, index, rc, false);
            }
        }

        /** Registers a slice outside the pool for this chunk, so RDMA transports can move it. */
        private void ensureRegistered(final MemorySegment segment)
        {
            if (hostRegistered && isInside(hostMemory, segment))
            {
                return;
            }
            final int rc = store.register(segment);
            if (rc == 0)
            {
                registeredSlices.add(segment);
            }
            else if (registrationWarned.compareAndSet(false, true))
            {
                // Over TCP Mooncake copies from and into unregistered memory too; an RDMA transport would fail the transfer.
                logger.log(System.Logger.Level.INFO, "tier {0}: registering a {1}-byte slice failed with {2}; using it unregistered", name,
                    segment.byteSize(), MooncakeErrors.name(rc));
            }
        }

        private void unregisterSlices()
        {
            for (final MemorySegment slice : registeredSlices)
            {
                store.unregister(slice);
            }
            registeredSlices.clear();
        }
    }

    /** @return the bit of the key's stripe, for masks of the stripes a chunk locks */
    private static long stripeBit(final long keyHigh, final long keyLow)
    {
        final long mixed = (keyHigh ^ Long.rotateLeft(keyLow, 29)) * 0x9E3779B97F4A7C15L;
        return 1L << (mixed >>> 58);
    }

    /** Locks in ascending stripe order, the only order anyone takes several in, so no two chunks deadlock. */
    private void lockStripes(final long mask, final boolean exclusive)
    {
        for (long m = mask; m != 0; m &= m - 1)
        {
            final ReentrantReadWriteLock lock = stripes[Long.numberOfTrailingZeros(m)];
            if (exclusive)
            {
                lock.writeLock().lock();
            }
            else
            {
                lock.readLock().lock();
            }
        }
    }

    private void unlockStripes(final long mask, final boolean exclusive)
    {
        for (long m = mask; m != 0; m &= m - 1)
        {
            final ReentrantReadWriteLock lock = stripes[Long.numberOfTrailingZeros(m)];
            if (exclusive)
            {
                lock.writeLock().unlock();
            }
            else
            {
                lock.readLock().unlock();
            }
        }
    }

    /** A forced removal, under its stripe's write lock so no get of this tier is copying the object. */
    private int forceRemove(final MemorySegment key, final long keyHigh, final long keyLow)
    {
        final long bit = stripeBit(keyHigh, keyLow);
        lockStripes(bit, true);
        try
        {
            return store_c_h.mooncake_store_remove(handle, key, 1);
        }
        finally
        {
            unlockStripes(bit, true);
        }
    }

    private static boolean isInside(final MemorySegment region, final MemorySegment slice)
    {
        final long start = region.address();
        return slice.address() >= start && slice.address() + slice.byteSize() <= start + region.byteSize();
    }

    private static String opName(final int op)
    {
        return switch (op)
        {
            case EXISTS -> "exists";
            case READ -> "read";
            case WRITE -> "write";
            default -> "remove";
        };
    }

    /** Sleeps without throwing: backoff between put attempts, cut short by nothing but time. */
    private static final class LockSupportSleep
    {
        static void sleepNanos(final long nanos)
        {
            final long deadline = System.nanoTime() + nanos;
            long left = nanos;
            while (left > 0)
            {
                java.util.concurrent.locks.LockSupport.parkNanos(left);
                left = deadline - System.nanoTime();
            }
        }
    }
}
