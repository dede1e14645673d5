package io.kvtier.tier.posix;

import io.kvtier.collections.ParkingQueue;
import io.kvtier.nativeaccess.libc.LibC;
import io.kvtier.nativeaccess.uring.DirectIoAlignment;
import io.kvtier.nativeaccess.uring.Uring;
import io.kvtier.nativeaccess.uring.UringAvailability;
import io.kvtier.nativeaccess.uring.UringException;
import io.kvtier.spi.ConfigValues;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierCapability;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierContext;
import io.kvtier.spi.TierStatus;
import io.kvtier.spi.TierUsage;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Instant;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * An L3 tier storing each page as a file under a directory: local NVMe, or a shared filesystem
 * several nodes use at once. See the module's README for the layout and the crash-safety argument.
 *
 * <h2>Threads</h2>
 * Operations return at once: the caller (the engine's pipeline thread) only takes a preallocated
 * job, fills it in and queues it, once per worker that will share the batch. The {@code io-threads}
 * workers claim the batch's keys through the job's cursor, do the file I/O and complete each key:
 * one key at a time, or, for reads and writes, as many as the store moves with one submission
 * ({@link FileStore#readBatchSize}, {@link FileStore#writeBatchSize}; 8 with io_uring). With
 * {@link LibC} the steady state allocates nothing per key: the pool slice is the I/O buffer, and
 * paths are built in each worker's native buffers.
 *
 * <p>{@code exists} on a directory that is this tier's alone ({@code shared = false}) does no I/O and
 * is not queued: the caller's thread answers each key from the {@link FileIndex} and completes it
 * before the call returns. A shared directory's probes go to the workers, which {@code stat} the file.
 *
 * <p>Jobs reach the workers through {@link JobLanes}: reads and probes in the urgent lane, writes and
 * removes in the bulk lane. A worker takes urgent jobs first, and between the claims of a bulk job it
 * serves any urgent job that arrived, so a read waits for at most the claim each worker is on (one
 * key, or with io_uring up to 8 written together). Pooled jobs wait in a {@link ParkingQueue}. An
 * idle worker parks without allocating, where a {@code java.util.concurrent} blocking queue
 * allocates a wait node each time a worker blocks.
 *
 * <h2>Locks</h2>
 * Two kinds, always taken in this order and never two stripes at once:
 * <ul>
 *   <li>a stripe lock per key hash, held around the namespace changes of a key (the rename that
 *       publishes a write, the unlink of a remove or an eviction) together with their index update,
 *       so an eviction can never unlink a file that a newer write has just renamed into place;</li>
 *   <li>one index lock around the {@link FileIndex} bookkeeping. Its critical sections are a hash
 *       probe and a few array and list updates with no I/O, short next to the file operation each
 *       key does anyway, which is why a plain lock is fine on this L3 path. The caller's thread takes
 *       it too, once per key of a probe answered from the index: never held across a file operation,
 *       it keeps the engine's thread waiting for at most such a section.</li>
 * </ul>
 * Both are monitors ({@code synchronized} on plain objects), not {@code ReentrantLock}s: a contended
 * {@code ReentrantLock} allocates an AQS node per waiting thread on the Java heap, while a contended
 * monitor inflates to a native ObjectMonitor, so contention between workers allocates nothing on the
 * steady-state path. Nothing here needs what {@code ReentrantLock} adds (timed or interruptible
 * acquisition, conditions, fairness).
 */
public final class PosixTier implements StorageTier
{
    private static final int EXISTS = 0;
    private static final int READ = 1;
    private static final int WRITE = 2;
    private static final int REMOVE = 3;

    private static final int QUEUE_CAPACITY = 4096;
    private static final int JOB_POOL_SIZE = 256;
    private static final int STRIPES = 64;
    private static final int VICTIMS_PER_ROUND = 64;
    private static final int MAX_RESERVE_ATTEMPTS = 16;
    private static final long CLOSE_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(30);
    private static final Job POISON = new Job();

    private final String name;
    private final TierContext context;
    private final PosixSettings settings;
    private final PathLayout layout;
    private final long objectSize;
    private final System.Logger logger;
    private final IoErrorLog errors;
    private final Arena arena;
    /** Temp files made ahead of writes, or null (io=channel, or spare-temp-files=0). */
    private final SpareTempFiles spares;
    private final FileIndex index;
    private final Object indexLock = new Object();
    private final Object[] stripes = new Object[STRIPES];
    private final JobLanes<Job> lanes;
    private final ParkingQueue<Job> jobPool = new ParkingQueue<>(JOB_POOL_SIZE, 0);
    private final DirectIo directIo;
    private final boolean usesLibc;
    private final IoPath ioPath;
    private final String ioDescription;
    private boolean fixedBuffers;
    private final String ioFallback;
    private final Set<TierCapability> capabilities;
    private final Worker[] workers;
    private final Thread[] threads;
    private final FanoutDirectories fanout;
    private final Thread fanoutThread;
    private final AtomicInteger submitting = new AtomicInteger();
    private final AtomicBoolean overflowReported = new AtomicBoolean();
    private final Object closeLock = new Object();
    private volatile boolean closed;
    private boolean released;

    private PosixTier(final TierConfig config, final PosixSettings settings, final TierContext context, final Optional<LibC> libc,
                      final String fallbackReason, final Supplier<UringAvailability> uringAvailability)
    {
        this.name = config.tierName();
        this.context = context;
        this.settings = settings;
        this.objectSize = context.objectSize();
        this.logger = context.logger();
        this.errors = new IoErrorLog(logger, 1, TimeUnit.SECONDS);
        this.layout = new PathLayout(settings.dir, settings.fanoutLevels);
        for (int i = 0; i < STRIPES; i++)
        {
            stripes[i] = new Object();
        }
        for (int i = 0; i < JOB_POOL_SIZE; i++)
        {
            jobPool.offer(new Job());
        }
        // One consumer index per worker, so each parks in a slot of its own.
        lanes = new JobLanes<>(QUEUE_CAPACITY, settings.ioThreads);

        // The I/O path as configured, or the next one down, with the reason, when it cannot run here.
        IoPath path = settings.io;
        String why = "configured: " + config.qualified(PosixSettings.IO) + "=" + settings.io.settingValue;
        if (path != IoPath.CHANNEL && libc.isEmpty())
        {
            why = settings.io.settingValue + " needs LibC, which is unavailable: " + fallbackReason;
            path = IoPath.CHANNEL;
        }
        if (path == IoPath.URING)
        {
            final UringAvailability availability = uringAvailability.get();
            if (!availability.available())
            {
                why = "io_uring unavailable: " + availability.describe();
                path = IoPath.LIBC;
            }
        }

        String directNote = "off";
        boolean direct = false;
        DirectIoAlignment alignment = new DirectIoAlignment(DirectIo.ALIGNMENT, DirectIo.ALIGNMENT, false);
        if (settings.directIo)
        {
            if (libc.isEmpty())
            {
                directNote = "off (O_DIRECT needs LibC: " + fallbackReason + ")";
            }
            else
            {
                alignment = LibcFileStore.directIoAlignment(libc.get(), settings.dir);
                final Optional<String> refusal = LibcFileStore.probeDirectIo(libc.get(), settings.dir, alignment);
                direct = refusal.isEmpty();
                final String aligned = "memory " + alignment.memory() + ", offset " + alignment.offset()
                    + (alignment.fromKernel() ? " from statx" : " (default: statx reports no STATX_DIOALIGN here)");
                directNote = refusal.map(reason -> "off (" + reason + ")").orElse("on, aligned to " + aligned);
            }
            if (!direct)
            {
                logger.log(System.Logger.Level.WARNING, config.qualified(PosixSettings.DIRECT_IO) + "=true but direct I/O is "
                    + directNote + "; using buffered I/O");
            }
        }
        directIo = direct
            ? new DirectIo(true, Math.max(alignment.memory(), 1), Math.max(alignment.offset(), 1), logger)
            : new DirectIo(false, logger);

        arena = Arena.ofShared();
        final Uring[] rings = new Uring[settings.ioThreads];
        try
        {
            index = new FileIndex(arena, settings.indexEntries, settings.capacity, settings.highWaterBytes(), settings.lowWaterBytes());
            if (path == IoPath.URING)
            {
                try
                {
                    for (int i = 0; i < rings.length; i++)
                    {
                        rings[i] = Uring.open(UringFileStore.RING_ENTRIES);
                    }
                }
                catch (final UringException ex)
                {
                    closeAll(rings);
                    why = "setting up a ring per I/O thread failed: " + ex.getMessage() + " (raise ulimit -l if ENOMEM)";
                    path = IoPath.LIBC;
                }
            }
            String fixedBuffers = "";
            if (path == IoPath.URING)
            {
                fixedBuffers = registerTransferMemory(rings, context);
            }
            if (path != settings.io)
            {
                logger.log(System.Logger.Level.WARNING, "posix tier " + name + ": " + config.qualified(PosixSettings.IO) + "="
                    + settings.io.settingValue + " cannot be used (" + why + "); falling back to io=" + path.settingValue);
            }
            this.ioPath = path;
            this.ioFallback = path == settings.io ? "" : "fell back from " + settings.io.settingValue + ": " + why;
            this.usesLibc = path != IoPath.CHANNEL;
            this.ioDescription = switch (path)
            {
                case URING -> "uring (one ring of " + UringFileStore.RING_ENTRIES + " entries per I/O thread, " + fixedBuffers + ")";
                case LIBC -> "libc (pread/pwrite from the pool slice, zero-copy)";
                case CHANNEL -> "channel (FileChannel)";
            } + (ioFallback.isEmpty() ? "" : "; " + ioFallback);
            workers = new Worker[settings.ioThreads];
            for (int i = 0; i < workers.length; i++)
            {
                workers[i] = new Worker(i, switch (path)
                {
                    case URING -> new UringFileStore(libc.get(), rings[i], layout, arena, settings.fsync, directIo, errors);
                    case LIBC -> new LibcFileStore(libc.get(), layout, arena, settings.fsync, directIo, errors);
                    case CHANNEL -> new ChannelFileStore(layout, settings.fsync, errors);
                });
            }
            final StartupScan scan;
            try
            {
                scan = StartupScan.scan(layout, settings.tmpMaxAge, Instant.now(), logger);
            }
            catch (final IOException ex)
            {
                throw config.invalid(PosixSettings.DIR, settings.dir.toString(), "a readable directory, but scanning it failed: "
                    + PosixSettings.describe(ex), ex);
            }
            final int evictedAtStart = adopt(scan);

            final EnumSet<TierCapability> declared = EnumSet.of(TierCapability.PERSISTENT);
            if (settings.shared)
            {
                declared.add(TierCapability.SHARED);
            }
            if (settings.isBounded())
            {
                declared.add(TierCapability.SELF_EVICTING);
            }
            if (usesLibc)
            {
                declared.add(TierCapability.ZERO_COPY);
            }
            if (direct)
            {
                declared.add(TierCapability.DIRECT_IO);
            }
            capabilities = Collections.unmodifiableSet(declared);

            // After the scan, so that it never counts them among other writers' temp files.
            SpareTempFiles made = null;
            if (usesLibc && settings.spareTempFiles > 0)
            {
                made = new SpareTempFiles(libc.get(), settings.dir, settings.spareTempFiles, settings.tmpMaxAge, arena, name, logger);
                for (final Worker worker : workers)
                {
                    if (!((LibcFileStore)worker.store).useSpares(made))
                    {
                        made.close();
                        made = null;
                        break;
                    }
                }
            }
            spares = made;

            // After the scan, which then need not walk directories that are still empty.
            fanout = new FanoutDirectories(layout, libc, logger, name);
            if (fanout.needed())
            {
                fanoutThread = new Thread(fanout, "kvtier-posix-" + name + "-mkdir");
                fanoutThread.setDaemon(true);
            }
            else
            {
                fanoutThread = null;
            }

            threads = new Thread[workers.length];
            for (int i = 0; i < workers.length; i++)
            {
                threads[i] = new Thread(workers[i], "kvtier-posix-" + name + "-io-" + i);
                threads[i].setDaemon(true);
            }
            logger.log(System.Logger.Level.INFO, "posix tier " + name + " ready: " + settings
                + "; io path: " + ioDescription
                + "; spare temp files: " + (spares == null ? "none" : settings.spareTempFiles + " kept ready")
                + "; direct-io " + directNote
                + "; found " + scan.pages.size() + " page files from earlier runs or other nodes (" + ConfigValues.formatSize(index.usedBytes())
                + " kept, " + evictedAtStart + " evicted to fit the capacity)"
                + ", deleted " + scan.deletedTemps + " temp files older than " + settings.tmpMaxAge
                + ", kept " + scan.youngTemps + " younger ones, ignored " + scan.foreignFiles + " other files");
            if (settings.isBounded() && settings.capacity / objectSize > settings.indexEntries)
            {
                logger.log(System.Logger.Level.WARNING, config.qualified(PosixSettings.CAPACITY) + " holds " + settings.capacity / objectSize
                    + " objects but the index tracks " + settings.indexEntries + ": the tier keeps at most that many; raise "
                    + config.qualified(PosixSettings.INDEX_ENTRIES) + " to use the whole capacity");
            }
            for (final Thread thread : threads)
            {
                thread.start();
            }
            if (fanoutThread != null)
            {
                fanoutThread.start();
            }
        }
        catch (final RuntimeException | Error ex)
        {
            closeAll(rings);
            arena.close();
            throw ex;
        }
    }

    private static void closeAll(final Uring[] rings)
    {
        for (int i = 0; i < rings.length; i++)
        {
            if (rings[i] != null)
            {
                rings[i].close();
                rings[i] = null;
            }
        }
    }

    /** Registered buffers are at most 1 GiB each (the kernel's limit), so the region goes in frame-aligned chunks. */
    private static final long MAX_FIXED_BUFFER = 1L << 30;

    /**
     * Registers the memory the engine moves pages through (its pool frames) as fixed buffers of every
     * ring, so page reads and writes go as READ_FIXED/WRITE_FIXED and the kernel pins the pool once
     * instead of per transfer. Failing that (RLIMIT_MEMLOCK, a kernel refusing the mapping), the rings
     * keep moving bytes straight from the pool slices, unregistered, and the reason is logged.
     *
     * @return how the rings address page memory, for the tier's description
     */
    private String registerTransferMemory(final Uring[] rings, final TierContext context)
    {
        final java.util.Optional<MemorySegment> offered = context.transferMemory();
        if (offered.isEmpty())
        {
            return "page I/O from the pool slices, not fixed buffers: the engine offered no transfer memory";
        }
        final MemorySegment region = offered.get();
        final long chunk = Math.max(objectSize, MAX_FIXED_BUFFER / objectSize * objectSize);
        final int count = (int)((region.byteSize() + chunk - 1) / chunk);
        final MemorySegment[] buffers = new MemorySegment[count];
        for (int c = 0; c < count; c++)
        {
            buffers[c] = region.asSlice(c * chunk, Math.min(chunk, region.byteSize() - c * chunk));
        }
        for (final Uring ring : rings)
        {
            final int rc = ring.registerBuffers(buffers);
            if (rc < 0)
            {
                for (final Uring registered : rings)
                {
                    if (registered == ring)
                    {
                        break;
                    }
                    registered.unregisterBuffers();
                }
                final String why = "registering the " + (region.byteSize() >> 20) + " MiB of transfer memory as fixed buffers failed with errno "
                    + -rc + (rc == -12 ? " (ENOMEM: RLIMIT_MEMLOCK is below it; raise ulimit -l, or give the engine CAP_IPC_LOCK)" : "");
                logger.log(System.Logger.Level.WARNING, "posix tier " + name + ": " + why + "; page I/O goes from the pool slices unregistered");
                return "page I/O from the pool slices, not fixed buffers: " + why;
            }
        }
        fixedBuffers = true;
        return "fixed buffers: the " + (region.byteSize() >> 20) + " MiB of transfer memory in " + count + " registered buffer"
            + (count == 1 ? "" : "s") + " per ring, READ_FIXED/WRITE_FIXED";
    }

    /**
     * Creates a tier: validates the directory, scans it, starts the workers.
     *
     * @param config   the tier's settings, for error messages
     * @param settings the validated settings
     * @param context  the engine's side
     * @param libc           the libc front, or empty to use FileChannel
     * @param fallbackReason why libc is empty, for the log
     * @param uringAvailability whether io_uring can be used (a test hook makes it fail)
     * @return the running tier
     */
    static PosixTier open(final TierConfig config, final PosixSettings settings, final TierContext context, final Optional<LibC> libc,
                          final String fallbackReason, final Supplier<UringAvailability> uringAvailability)
    {
        return new PosixTier(config, settings, context, libc, fallbackReason, uringAvailability);
    }

    private int adopt(final StartupScan scan)
    {
        // Runs before the workers start, on the creating thread, with the first worker's store and buffers.
        final Worker seeder = workers[0];
        int evicted = 0;
        for (final StartupScan.Page page : scan.pages)
        {
            while (!index.adopt(page.key().high(), page.key().low(), page.bytes()))
            {
                if (!index.chooseOneVictim(seeder.victims))
                {
                    break;
                }
                evicted += seeder.evictChosen();
            }
        }
        index.startEvictionIfAboveHighWater();
        index.continueEviction(seeder.victims);
        evicted += seeder.evictChosen();
        if (index.overflowed())
        {
            reportOverflow();
        }
        return evicted;
    }

    private void reportOverflow()
    {
        if (overflowReported.compareAndSet(false, true))
        {
            logger.log(System.Logger.Level.WARNING, "more page files than tier." + name + "." + PosixSettings.INDEX_ENTRIES + " ("
                + settings.indexEntries + ") can track: the rest are counted in bytes only and usage reports objects as unknown;"
                + " raise tier." + name + "." + PosixSettings.INDEX_ENTRIES);
        }
    }

    @Override
    public String name()
    {
        return name;
    }

    @Override
    public Set<TierCapability> capabilities()
    {
        return capabilities;
    }

    /**
     * Not shared: answered from the index on the caller's thread, no I/O, every key completed before
     * this returns (unless the index overflowed and cannot tell; then as for a shared directory).
     * Shared: queued in the urgent lane; a worker {@code stat}s each file.
     */
    @Override
    public void exists(final TierBatch batch)
    {
        if (settings.shared || !answerFromIndex(batch))
        {
            submit(EXISTS, batch);
        }
    }

    /**
     * @param batch an exists batch
     * @return false, with nothing completed, when the index overflowed and the files must be asked
     */
    private boolean answerFromIndex(final TierBatch batch)
    {
        final int size = batch.size();
        for (int i = 0; i < size; i++)
        {
            final long keyHigh = batch.keyHigh(i);
            final long keyLow = batch.keyLow(i);
            TierStatus status;
            // Counted around each lookup, never around a completion: a completion callback may close the
            // tier, and close() waits for this count (so the index it frees is not in use).
            submitting.incrementAndGet();
            try
            {
                if (closed)
                {
                    status = TierStatus.CLOSED;
                }
                else
                {
                    synchronized (indexLock)
                    {
                        if (i == 0 && index.overflowed())
                        {
                            return false;
                        }
                        status = index.exists(keyHigh, keyLow, objectSize);
                    }
                }
            }
            finally
            {
                submitting.decrementAndGet();
            }
            // null: the index overflowed since the first key; a key it does not hold is a miss, never wrong bytes.
            complete(batch, i, status == null ? TierStatus.NOT_FOUND : status);
        }
        return true;
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
        synchronized (indexLock)
        {
            return new TierUsage(index.usedBytes(), settings.capacity, index.objects());
        }
    }

    private void submit(final int operation, final TierBatch batch)
    {
        final int size = batch.size();
        if (size == 0)
        {
            return;
        }
        // Counted before reading `closed`, so close() waits for this call and cannot miss its job.
        submitting.incrementAndGet();
        try
        {
            if (closed)
            {
                completeAll(batch, size, TierStatus.CLOSED);
                return;
            }
            Job job = jobPool.poll();
            if (job == null)
            {
                job = new Job();
            }
            final int share = Math.min(workers.length, size);
            job.prepare(operation, batch, size, share);
            if (!offer(job))
            {
                job.batch = null;
                jobPool.offer(job);
                if (errors.shouldLog())
                {
                    errors.log(System.Logger.Level.WARNING, "posix tier " + name + ": " + QUEUE_CAPACITY + " "
                        + (job.urgent ? "read and probe" : "write and remove") + " batches already queued; rejecting a batch of " + size + " keys");
                }
                completeAll(batch, size, TierStatus.REJECTED);
                return;
            }
            for (int i = 1; i < share; i++)
            {
                if (!offer(job))
                {
                    // Fewer workers share this batch; give back the holds nobody will take.
                    job.release(share - i, jobPool);
                    break;
                }
            }
        }
        finally
        {
            submitting.decrementAndGet();
        }
    }

    private boolean offer(final Job job)
    {
        return job.urgent ? lanes.offerUrgent(job) : lanes.offerBulk(job);
    }

    private void completeAll(final TierBatch batch, final int size, final TierStatus status)
    {
        for (int i = 0; i < size; i++)
        {
            complete(batch, i, status);
        }
    }

    private void complete(final TierBatch batch, final int index, final TierStatus status)
    {
        try
        {
            batch.complete(index, status);
        }
        catch (final RuntimeException ex)
        {
            if (errors.shouldLog())
            {
                errors.log(System.Logger.Level.ERROR, "posix tier " + name + ": the batch refused the completion of key " + index
                    + " as " + status + ": " + ex);
            }
        }
    }

    private Object stripe(final long keyHigh, final long keyLow)
    {
        // Keys are hashes: their low bits spread evenly.
        return stripes[(int)(keyLow ^ keyHigh) & (STRIPES - 1)];
    }

    /**
     * Stops accepting work (new keys complete CLOSED), lets the workers finish the key each is on and
     * complete the remaining queued keys CLOSED, stops them and frees the native buffers. Idempotent;
     * a second caller waits for the first.
     */
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
            while (submitting.get() != 0)
            {
                Thread.onSpinWait();
            }
            boolean interrupted = false;
            if (fanoutThread != null)
            {
                fanout.stop();
            }
            // The bulk lane is FIFO and a worker takes from it only when the urgent lane is empty: every
            // job queued before is taken before the first poison pill.
            final boolean onWorker = isWorkerThread();
            for (int i = 0; i < threads.length; i++)
            {
                while (!lanes.offerBulk(POISON))
                {
                    if (onWorker)
                    {
                        // close() from a completion callback with the queue full: this worker cannot drain
                        // it while it waits here, so it completes a queued job CLOSED itself to make room.
                        completeOneQueuedJobClosed();
                    }
                    else
                    {
                        // Full: the workers are completing queued keys CLOSED, which is quick.
                        Thread.yield();
                    }
                }
            }
            final long deadline = System.nanoTime() + CLOSE_TIMEOUT_NANOS;
            boolean stopped = true;
            for (final Thread thread : threads)
            {
                if (thread == Thread.currentThread())
                {
                    // close() from a completion callback: this worker finishes its key, then completes
                    // the rest CLOSED without touching the native buffers, and meets its poison pill.
                    continue;
                }
                while (thread.isAlive() && System.nanoTime() - deadline < 0)
                {
                    try
                    {
                        thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
                    }
                    catch (final InterruptedException ex)
                    {
                        interrupted = true;
                    }
                }
                stopped &= !thread.isAlive();
            }
            if (fanoutThread != null)
            {
                try
                {
                    // Between two mkdir calls it sees the stop request; only a hung filesystem delays it.
                    fanoutThread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
                }
                catch (final InterruptedException ex)
                {
                    interrupted = true;
                }
            }
            if (stopped)
            {
                if (spares != null)
                {
                    spares.close();
                }
                for (final Worker worker : workers)
                {
                    worker.store.close();
                }
                arena.close();
                logger.log(System.Logger.Level.DEBUG, "posix tier " + name + " closed");
            }
            else
            {
                // A worker stuck in a hung filesystem call still uses its path buffers: leave them to it.
                logger.log(System.Logger.Level.WARNING, "posix tier " + name + ": workers still busy "
                    + TimeUnit.NANOSECONDS.toSeconds(CLOSE_TIMEOUT_NANOS) + "s after close (hung filesystem?); their keys complete when the calls return");
            }
            released = true;
            if (interrupted)
            {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** @return the worker threads, for tests */
    List<Thread> workerThreads()
    {
        return List.of(threads);
    }

    /** @return whether O_DIRECT is in use, for tests */
    boolean directIoActive()
    {
        return directIo.active();
    }

    /** @return the I/O path the workers run, after any fallback */
    IoPath ioPath()
    {
        return ioPath;
    }

    /**
     * @return the I/O path and why, as the start-up log line says it: for example
     *         {@code libc (...); fell back from uring: io_uring unavailable: ...}
     */
    public String describeIo()
    {
        return ioDescription;
    }

    /** @return page transfers that went as READ_FIXED/WRITE_FIXED, over every worker's ring */
    long fixedBufferOperations()
    {
        long operations = 0;
        for (final Worker worker : workers)
        {
            if (worker.store instanceof UringFileStore uring)
            {
                operations += uring.fixedBufferOperations();
            }
        }
        return operations;
    }

    /** @return the I/O path first (with the reason of any fallback), then O_DIRECT and the directory: what {@code kvtier stat} shows */
    @Override
    public String describe()
    {
        // Short, with the fallback's reason before the rest: the pool keeps only the first 188 bytes.
        return "io=" + ioPath.settingValue + (ioFallback.isEmpty() ? "" : " (" + ioFallback + ")")
            + (ioPath == IoPath.URING ? (fixedBuffers ? " fixed buffers" : " unregistered buffers") : "")
            + ", direct-io " + (directIo.active() ? "on" : "off") + ", dir=" + settings.dir;
    }

    @Override
    public String toString()
    {
        return "posix tier " + name + " (" + settings.dir + ", io=" + ioDescription + ")";
    }

    /** @return whether I/O goes through LibC, for tests */
    boolean usesLibc()
    {
        return usesLibc;
    }

    /** @return where pages live, for tests */
    PathLayout layout()
    {
        return layout;
    }

    /** @return how many times a write had to make its directory, summed over the workers; for tests, once writes are complete */
    long directoriesMadeByWrites()
    {
        long made = 0;
        for (final Worker worker : workers)
        {
            made += worker.store.directoriesMade();
        }
        return made;
    }

    /** @return the start-up creation of fan-out directories, for tests */
    FanoutDirectories fanout()
    {
        return fanout;
    }

    /** A batch handed to the workers; reused through the job pool. */
    private static final class Job
    {
        private final AtomicInteger cursor = new AtomicInteger();
        private final AtomicInteger holders = new AtomicInteger();
        private int operation;
        private boolean urgent;
        private int size;
        private TierBatch batch;

        void prepare(final int operation, final TierBatch batch, final int size, final int holders)
        {
            this.operation = operation;
            this.urgent = operation == READ || operation == EXISTS;
            this.batch = batch;
            this.size = size;
            this.cursor.set(0);
            this.holders.set(holders);
        }

        /**
         * @param count holds to give back
         * @param pool  where the job goes when the last hold is given back
         */
        void release(final int count, final ParkingQueue<Job> pool)
        {
            if (holders.addAndGet(-count) == 0)
            {
                batch = null;
                pool.offer(this);
            }
        }
    }

    /** One I/O thread: its own file store, path buffers and eviction buffer. */
    private boolean isWorkerThread()
    {
        for (final Thread thread : threads)
        {
            if (thread == Thread.currentThread())
            {
                return true;
            }
        }
        return false;
    }

    private void completeOneQueuedJobClosed()
    {
        final Job job = lanes.poll();
        if (job == null || job == POISON)
        {
            if (job == POISON)
            {
                while (!lanes.offerBulk(POISON))
                {
                    Thread.onSpinWait();
                }
            }
            return;
        }
        for (int i = job.cursor.getAndIncrement(); i < job.size; i = job.cursor.getAndIncrement())
        {
            complete(job.batch, i, TierStatus.CLOSED);
        }
        job.release(1, jobPool);
    }

    private final class Worker implements Runnable
    {
        private final int consumerIndex;
        private final FileStore store;
        private final FileIndex.Victims victims = new FileIndex.Victims(VICTIMS_PER_ROUND);
        private final FileIndex.Eviction eviction = this::evict;
        private final int readBatch;
        private final long[] readHigh;
        private final long[] readLow;
        private final MemorySegment[] readDestinations;
        private final int[] readCommits;
        private final TierStatus[] readStatuses;
        private final int writeBatch;
        private final long[] writeHigh;
        private final long[] writeLow;
        private final MemorySegment[] writeSources;
        private final int[] writeTickets;
        private final int[] writeKeys;
        private final int[] writeDeferred;
        private final TierStatus[] writeStatuses;

        /**
         * @param consumerIndex the worker's index among the job queue's consumers
         * @param store         its file store
         */
        Worker(final int consumerIndex, final FileStore store)
        {
            this.consumerIndex = consumerIndex;
            this.store = store;
            readBatch = Math.max(1, store.readBatchSize());
            readHigh = new long[readBatch];
            readLow = new long[readBatch];
            readDestinations = new MemorySegment[readBatch];
            readCommits = new int[readBatch];
            readStatuses = new TierStatus[readBatch];
            writeBatch = Math.max(1, store.writeBatchSize());
            writeHigh = new long[writeBatch];
            writeLow = new long[writeBatch];
            writeSources = new MemorySegment[writeBatch];
            writeTickets = new int[writeBatch];
            writeKeys = new int[writeBatch];
            writeDeferred = new int[writeBatch];
            writeStatuses = new TierStatus[writeBatch];
        }

        /**
         * Claims keys one at a time, from the job it holds. After each key of a bulk job it looks at the
         * urgent lane: an urgent job found there is served first, and the bulk job, set aside meanwhile,
         * is resumed once the urgent lane is empty. One loop and one call of {@link #process}, not a
         * nested call per urgent job, so the JIT compiles the I/O path once.
         */
        @Override
        public void run()
        {
            Job job = null;
            Job setAside = null;
            while (true)
            {
                if (job == null)
                {
                    if (setAside != null)
                    {
                        job = lanes.pollUrgent();
                        if (job == null)
                        {
                            job = setAside;
                            setAside = null;
                        }
                    }
                    else
                    {
                        try
                        {
                            job = lanes.take(consumerIndex);
                        }
                        catch (final InterruptedException ex)
                        {
                            // Only close() stops a worker, with a poison pill (only ever in the bulk lane).
                            continue;
                        }
                        if (job == POISON)
                        {
                            return;
                        }
                    }
                }
                // Read and write jobs' keys go in claims of the store's batch sizes (one io_uring submission for all); others one by one.
                final int claim = job.operation == READ ? readBatch : job.operation == WRITE ? writeBatch : 1;
                final int i = claim == 1 ? job.cursor.getAndIncrement() : job.cursor.getAndAdd(claim);
                if (i >= job.size)
                {
                    job.release(1, jobPool);
                    job = null;
                    continue;
                }
                if (claim == 1)
                {
                    process(job.operation, job.batch, i);
                }
                else if (job.operation == READ)
                {
                    readClaimed(job.batch, i, Math.min(i + claim, job.size));
                }
                else
                {
                    writeClaimed(job.batch, i, Math.min(i + claim, job.size));
                }
                if (!job.urgent && setAside == null)
                {
                    final Job urgent = lanes.pollUrgent();
                    if (urgent != null)
                    {
                        setAside = job;
                        job = urgent;
                    }
                }
            }
        }

        private void process(final int operation, final TierBatch batch, final int i)
        {
            TierStatus status;
            try
            {
                status = closed ? TierStatus.CLOSED : switch (operation)
                {
                    case EXISTS -> probe(batch.keyHigh(i), batch.keyLow(i));
                    case READ -> read(batch.keyHigh(i), batch.keyLow(i), batch.segment(i));
                    case WRITE -> write(batch.keyHigh(i), batch.keyLow(i), batch.segment(i));
                    default -> remove(batch.keyHigh(i), batch.keyLow(i));
                };
            }
            catch (final RuntimeException ex)
            {
                status = TierStatus.IO_ERROR;
                if (errors.shouldLog())
                {
                    logger.log(System.Logger.Level.ERROR, "posix tier " + name + ": unexpected failure on key " + i + " -> IO_ERROR", ex);
                }
            }
            complete(batch, i, status);
        }

        /**
         * Reads the keys {@code [from, to)} of a batch through {@link FileStore#readPages}, with the index
         * bookkeeping of {@link #read} around each, and completes them.
         */
        private void readClaimed(final TierBatch batch, final int from, final int to)
        {
            final int count = to - from;
            try
            {
                if (closed)
                {
                    for (int k = 0; k < count; k++)
                    {
                        complete(batch, from + k, TierStatus.CLOSED);
                    }
                    return;
                }
                for (int k = 0; k < count; k++)
                {
                    readHigh[k] = batch.keyHigh(from + k);
                    readLow[k] = batch.keyLow(from + k);
                    readDestinations[k] = batch.segment(from + k);
                }
                synchronized (indexLock)
                {
                    for (int k = 0; k < count; k++)
                    {
                        readCommits[k] = index.commitOf(readHigh[k], readLow[k]);
                    }
                }
                store.readPages(readHigh, readLow, readDestinations, count, readStatuses);
            }
            catch (final RuntimeException ex)
            {
                for (int k = 0; k < count; k++)
                {
                    readStatuses[k] = readStatuses[k] == null ? TierStatus.IO_ERROR : readStatuses[k];
                }
                if (errors.shouldLog())
                {
                    logger.log(System.Logger.Level.ERROR, "posix tier " + name + ": unexpected failure reading keys " + from + " to "
                        + (to - 1) + " -> IO_ERROR", ex);
                }
            }
            for (int k = 0; k < count; k++)
            {
                final TierStatus status = readStatuses[k] == null ? TierStatus.IO_ERROR : readStatuses[k];
                if (status == TierStatus.OK)
                {
                    synchronized (indexLock)
                    {
                        index.touch(readHigh[k], readLow[k]);
                    }
                }
                else if (status == TierStatus.NOT_FOUND && readCommits[k] != 0)
                {
                    forget(readHigh[k], readLow[k], readCommits[k]);
                }
                readStatuses[k] = null;
                readDestinations[k] = null;
                complete(batch, from + k, status);
            }
        }

        /** A shared directory's probe (or one the overflowed index cannot answer): a stat of the file. */
        private TierStatus probe(final long keyHigh, final long keyLow)
        {
            final int commit;
            synchronized (indexLock)
            {
                if (!settings.shared)
                {
                    final TierStatus known = index.exists(keyHigh, keyLow, objectSize);
                    if (known != null)
                    {
                        return known;
                    }
                }
                commit = index.commitOf(keyHigh, keyLow);
            }
            final TierStatus status = store.exists(keyHigh, keyLow, objectSize);
            if (status == TierStatus.NOT_FOUND && commit != 0)
            {
                forget(keyHigh, keyLow, commit);
            }
            return status;
        }

        private TierStatus read(final long keyHigh, final long keyLow, final MemorySegment destination)
        {
            final int commit;
            synchronized (indexLock)
            {
                commit = index.commitOf(keyHigh, keyLow);
            }
            final TierStatus status = store.read(keyHigh, keyLow, destination);
            if (status == TierStatus.OK)
            {
                synchronized (indexLock)
                {
                    index.touch(keyHigh, keyLow);
                }
            }
            else if (status == TierStatus.NOT_FOUND && commit != 0)
            {
                forget(keyHigh, keyLow, commit);
            }
            return status;
        }

        /** The index held a file the filesystem does not: drop it, so probes stop answering OK for it. */
        private void forget(final long keyHigh, final long keyLow, final int commit)
        {
            final boolean forgotten;
            synchronized (stripe(keyHigh, keyLow))
            {
                synchronized (indexLock)
                {
                    forgotten = index.forget(keyHigh, keyLow, commit);
                }
            }
            if (forgotten && !settings.shared && errors.shouldLog())
            {
                errors.log(System.Logger.Level.WARNING, "posix tier " + name + ": page file " + layout.pagePath(keyHigh, keyLow)
                    + " was deleted by something other than this tier, though tier." + name + "." + PosixSettings.SHARED
                    + "=false says only it changes " + settings.dir + "; forgotten (probes answer from the index)");
            }
        }

        private TierStatus write(final long keyHigh, final long keyLow, final MemorySegment source)
        {
            final long bytes = source.byteSize();
            final int ticket = reserveWrite(keyHigh, keyLow, bytes);
            if (ticket == FileIndex.RETRY || ticket == FileIndex.NO_SPACE)
            {
                return TierStatus.NO_SPACE;
            }
            TierStatus status = TierStatus.IO_ERROR;
            try
            {
                status = store.writeTemp(0, keyHigh, keyLow, source);
            }
            finally
            {
                status = publishWrite(0, keyHigh, keyLow, bytes, ticket, status);
            }
            return status;
        }

        /**
         * Admits a write in the index, evicting what it chose to make room.
         *
         * @return a ticket for {@link #publishWrite}, or {@link FileIndex#NO_SPACE} or {@link FileIndex#RETRY} when it does not fit
         */
        private int reserveWrite(final long keyHigh, final long keyLow, final long bytes)
        {
            int ticket = FileIndex.RETRY;
            for (int attempt = 0; ticket == FileIndex.RETRY && attempt < MAX_RESERVE_ATTEMPTS; attempt++)
            {
                synchronized (indexLock)
                {
                    ticket = index.reserveWrite(keyHigh, keyLow, bytes, victims);
                }
                evictChosen();
            }
            if (ticket == FileIndex.UNTRACKED)
            {
                reportOverflow();
            }
            return ticket;
        }

        /**
         * Ends a reserved write: renames the slot's temp file into place under the key's stripe lock when
         * it was written, and commits the outcome to the index either way; a temp file not renamed is
         * deleted. Then evicts what the commit chose.
         *
         * @param written the status of the slot's temp file
         * @return the write's status
         */
        private TierStatus publishWrite(final int slot, final long keyHigh, final long keyLow, final long bytes, final int ticket,
                                        final TierStatus written)
        {
            TierStatus status = written;
            boolean committed = false;
            try
            {
                if (status == TierStatus.OK)
                {
                    synchronized (stripe(keyHigh, keyLow))
                    {
                        status = store.publishTemp(slot);
                        synchronized (indexLock)
                        {
                            index.commitWrite(ticket, bytes, status == TierStatus.OK, victims);
                            committed = true;
                        }
                    }
                }
            }
            finally
            {
                if (!committed)
                {
                    store.discardTemp(slot);
                    synchronized (indexLock)
                    {
                        index.commitWrite(ticket, bytes, false, victims);
                    }
                }
            }
            evictChosen();
            return status;
        }

        /**
         * Writes the keys {@code [from, to)} of a batch through {@link FileStore#writeTemps}, one temp
         * file per write slot, then publishes each as {@link #write} does, and completes them. A key the
         * index cannot admit while the others hold their reservations is written alone afterwards, when
         * they no longer count against the capacity, so it gets the answer a single write would.
         */
        private void writeClaimed(final TierBatch batch, final int from, final int to)
        {
            if (closed)
            {
                for (int i = from; i < to; i++)
                {
                    complete(batch, i, TierStatus.CLOSED);
                }
                return;
            }
            int staged = 0;
            int deferred = 0;
            for (int i = from; i < to; i++)
            {
                final long keyHigh = batch.keyHigh(i);
                final long keyLow = batch.keyLow(i);
                final MemorySegment source = batch.segment(i);
                final int ticket;
                try
                {
                    ticket = reserveWrite(keyHigh, keyLow, source.byteSize());
                }
                catch (final RuntimeException ex)
                {
                    unexpected(ex, i);
                    complete(batch, i, TierStatus.IO_ERROR);
                    continue;
                }
                if (ticket == FileIndex.RETRY || ticket == FileIndex.NO_SPACE)
                {
                    writeDeferred[deferred++] = i;
                    continue;
                }
                writeHigh[staged] = keyHigh;
                writeLow[staged] = keyLow;
                writeSources[staged] = source;
                writeTickets[staged] = ticket;
                writeKeys[staged] = i;
                staged++;
            }
            try
            {
                store.writeTemps(writeHigh, writeLow, writeSources, staged, writeStatuses);
            }
            catch (final RuntimeException ex)
            {
                // Temp files it left are not trusted: publishWrite deletes each.
                for (int s = 0; s < staged; s++)
                {
                    writeStatuses[s] = TierStatus.IO_ERROR;
                }
                unexpected(ex, from);
            }
            for (int s = 0; s < staged; s++)
            {
                TierStatus status = writeStatuses[s] == null ? TierStatus.IO_ERROR : writeStatuses[s];
                try
                {
                    status = publishWrite(s, writeHigh[s], writeLow[s], writeSources[s].byteSize(), writeTickets[s], status);
                }
                catch (final RuntimeException ex)
                {
                    status = TierStatus.IO_ERROR;
                    unexpected(ex, writeKeys[s]);
                }
                writeStatuses[s] = null;
                writeSources[s] = null;
                complete(batch, writeKeys[s], status);
            }
            for (int d = 0; d < deferred; d++)
            {
                process(WRITE, batch, writeDeferred[d]);
            }
        }

        private void unexpected(final RuntimeException ex, final int key)
        {
            if (errors.shouldLog())
            {
                logger.log(System.Logger.Level.ERROR, "posix tier " + name + ": unexpected failure on key " + key + " -> IO_ERROR", ex);
            }
        }

        private TierStatus remove(final long keyHigh, final long keyLow)
        {
            synchronized (stripe(keyHigh, keyLow))
            {
                final TierStatus status = store.unlink(keyHigh, keyLow);
                if (status == TierStatus.OK || status == TierStatus.NOT_FOUND)
                {
                    synchronized (indexLock)
                    {
                        index.removed(keyHigh, keyLow, status == TierStatus.OK, objectSize);
                    }
                }
                return status;
            }
        }

        /**
         * Unlinks the files the index chose, reports each to the engine, and keeps going while an
         * eviction round needs more.
         *
         * @return how many files were evicted
         */
        int evictChosen()
        {
            return FileIndex.evictChosen(index, indexLock, victims, eviction);
        }

        private boolean evict(final int id, final long keyHigh, final long keyLow)
        {
            synchronized (stripe(keyHigh, keyLow))
            {
                synchronized (indexLock)
                {
                    if (!index.beginEviction(id))
                    {
                        return false;
                    }
                }
                // NOT_FOUND is fine (another node removed it); other errors are logged by the store.
                store.unlink(keyHigh, keyLow);
                synchronized (indexLock)
                {
                    index.endEviction(id);
                }
            }
            try
            {
                context.objectRemoved(keyHigh, keyLow);
            }
            catch (final RuntimeException ex)
            {
                if (errors.shouldLog())
                {
                    logger.log(System.Logger.Level.ERROR, "posix tier " + name + ": objectRemoved callback failed", ex);
                }
            }
            return true;
        }
    }
}
