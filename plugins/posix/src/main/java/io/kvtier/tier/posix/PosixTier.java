package io.kvtier.tier.posix;

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
import io.kvtier.spi.TierWaterLevels;
import io.kvtier.tier.support.FileIndex;
import io.kvtier.tier.support.IoErrorLog;
import io.kvtier.tier.support.PathLayout;
import io.kvtier.tier.support.SlabTransport;
import io.kvtier.tier.support.StartupScan;
import io.kvtier.tier.support.TierWorkers;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

/**
 * An L3 tier storing each page as a file under a directory: local NVMe, or a shared filesystem
 * several nodes use at once. See the module's README for the layout and the crash-safety argument.
 *
 * <h2>Threads</h2>
 * Operations return at once: the caller (the engine's pipeline thread) only takes a preallocated
 * job, fills it in and queues it, once per worker that will share the batch ({@link TierWorkers}). The
 * {@code io-threads} workers ({@link PosixWorker}) claim the batch's keys through the job's cursor, do the file I/O and complete each key:
 * one key at a time, or, for reads and writes, as many as the store moves with one submission
 * ({@link FileStore#readBatchSize}, {@link FileStore#writeBatchSize}; 8 with io_uring). With
 * {@link LibC} the steady state allocates nothing per key: the pool slice is the I/O buffer, and
 * paths are built in each worker's native buffers.
 *
 * <p>{@code exists} on a directory that is this tier's alone ({@code shared = false}) does no I/O and
 * is not queued: the caller's thread answers each key from the {@link FileIndex} and completes it
 * before the call returns. A shared directory's probes go to the workers, which {@code stat} the file.
 *
 * <p>Jobs reach the workers in two lanes: reads and probes in the urgent lane, writes and
 * removes in the bulk lane. A worker takes urgent jobs first, and between the claims of a bulk job it
 * serves any urgent job that arrived, so a read waits for at most the claim each worker is on (one
 * key, or with io_uring up to 8 written together). Jobs are pooled, and an
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
    private static final int QUEUE_CAPACITY = 4096;
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(30);

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
    private final Object indexLock;
    private final PosixPages pages;
    private final DirectIo directIo;
    private final boolean usesLibc;
    private final IoPath ioPath;
    private final String ioDescription;
    private boolean fixedBuffers;
    private final String ioFallback;
    private final Set<TierCapability> capabilities;
    /** The extents and slots of {@code layout = slab}, or null for the files layout. */
    private final Slab slab;
    /** Another tier's transports for the slab's bytes, or null. */
    private final SlabTransport.Factory transports;
    private final PosixWorker[] workers;
    private final TierWorkers threads;
    private final FanoutDirectories fanout;
    private final Thread fanoutThread;
    private final Object closeLock = new Object();
    private boolean released;

    private PosixTier(final TierConfig config, final PosixSettings settings, final TierContext context, final Optional<LibC> libc,
                      final String fallbackReason, final Supplier<UringAvailability> uringAvailability, final SlabTransport.Factory transports)
    {
        this.name = config.tierName();
        this.context = context;
        this.settings = settings;
        this.objectSize = context.objectSize();
        this.logger = context.logger();
        this.errors = new IoErrorLog(logger, 1, TimeUnit.SECONDS);
        this.transports = transports;
        this.layout = new PathLayout(settings.dir, settings.fanoutLevels);
        // The I/O path as configured, or the next one down, with the reason, when it cannot run here.
        IoPath path = settings.io;
        String why = "configured: " + config.qualified(PosixSettings.IO) + "=" + settings.io.settingValue;
        if (path != IoPath.CHANNEL && libc.isEmpty())
        {
            why = settings.io.settingValue + " needs LibC, which is unavailable: " + fallbackReason;
            path = IoPath.CHANNEL;
        }
        if (transports != null)
        {
            // Another tier's transport moves the slab's bytes (the 3FS tier's USRBIO): no ring here.
            why = "the slab's bytes move through " + transports.describe();
            path = IoPath.LIBC;
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
        final boolean slabLayout = settings.layout == PageLayout.SLAB;
        if (settings.layoutReason != null)
        {
            logger.log(System.Logger.Level.INFO, "posix tier " + name + ": layout=" + (slabLayout ? "slab" : "files") + ", as "
                + config.qualified(PosixSettings.LAYOUT) + " is not set: " + settings.layoutReason);
        }
        if (settings.ioReason != null)
        {
            logger.log(System.Logger.Level.INFO, "posix tier " + name + ": io=" + settings.io.settingValue + ", as "
                + config.qualified(PosixSettings.IO) + " is not set: " + settings.ioReason);
        }
        if (slabLayout && path == IoPath.CHANNEL)
        {
            throw config.invalid(PosixSettings.LAYOUT, "slab", "files here: the slab layout needs LibC (" + config.qualified(PosixSettings.IO)
                + "=uring or libc), and this tier runs io=channel (" + why + ")", null);
        }

        arena = Arena.ofShared();
        final Uring[] rings = new Uring[settings.ioThreads];
        Slab madeSlab = null;
        PosixWorker[] madeWorkers = null;
        try
        {
            index = new FileIndex(arena, settings.indexEntries, settings.capacity, settings.highWaterBytes(), settings.lowWaterBytes());
            if (slabLayout)
            {
                // Beyond the index's frames: the writes in flight (a rewrite holds its old slot and its new one) and slots readers still hold.
                final int maxSlots = settings.indexEntries + 2 * settings.ioThreads * SlabFileStore.RING_PAGES + 64;
                final Slab.ExtentSize extentSize = Slab.extentSize(settings.dir, objectSize, settings.extentSize, filesystemBytes(settings.dir));
                if (!extentSize.why().isEmpty())
                {
                    logger.log(System.Logger.Level.INFO, "posix tier " + name + ": slab extents of " + extentSize.bytes() + " bytes, not "
                        + config.qualified(PosixSettings.EXTENT_SIZE) + " (" + settings.extentSize + "): " + extentSize.why());
                }
                madeSlab = new Slab(name, libc.get(), settings.dir, objectSize, extentSize.bytes(), maxSlots, directIo, settings.fsync,
                    settings.extentPreallocate, arena, logger, errors);
            }
            slab = madeSlab;
            pages = new PosixPages(name, settings, layout, context, errors, index);
            indexLock = pages.indexLock;
            final int ringEntries = slabLayout ? SlabFileStore.RING_ENTRIES : UringFileStore.RING_ENTRIES;
            if (path == IoPath.URING)
            {
                try
                {
                    for (int i = 0; i < rings.length; i++)
                    {
                        rings[i] = Uring.open(ringEntries);
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
                fixedBuffers = registerTransferMemory(rings, context, config.qualified(PosixSettings.FIXED_BUFFERS_MAX));
            }
            if (path != settings.io && transports == null)
            {
                logger.log(System.Logger.Level.WARNING, "posix tier " + name + ": " + config.qualified(PosixSettings.IO) + "="
                    + settings.io.settingValue + " cannot be used (" + why + "); falling back to io=" + path.settingValue);
            }
            this.ioPath = path;
            this.ioFallback = path == settings.io ? "" : "fell back from " + settings.io.settingValue + ": " + why;
            this.usesLibc = path != IoPath.CHANNEL;
            this.ioDescription = transports != null ? transports.describe() : switch (path)
            {
                case URING -> "uring (one ring of " + ringEntries + " entries per I/O thread, " + fixedBuffers + ")";
                case LIBC -> "libc (pread/pwrite from the pool slice, zero-copy)";
                case CHANNEL -> "channel (FileChannel)";
            } + (ioFallback.isEmpty() ? "" : "; " + ioFallback);
            workers = new PosixWorker[settings.ioThreads];
            madeWorkers = workers;
            for (int i = 0; i < workers.length; i++)
            {
                workers[i] = new PosixWorker(pages, slabLayout
                    ? new SlabFileStore(name, slab, libc.get(), transports != null ? transports.open(i)
                        : path == IoPath.URING ? new UringSlabTransport(rings[i], libc.get()) : null, directIo, settings.fsync,
                        arena, context.transferMemory(), errors)
                    : switch (path)
                    {
                        case URING -> new UringFileStore(libc.get(), rings[i], layout, arena, settings.fsync, directIo, errors);
                        case LIBC -> new LibcFileStore(libc.get(), layout, arena, settings.fsync, directIo, errors);
                        case CHANNEL -> new ChannelFileStore(layout, settings.fsync, errors);
                    });
            }
            StartupScan scan = null;
            Slab.ScanReport slabScan = null;
            try
            {
                if (slabLayout)
                {
                    slabScan = slab.scan();
                }
                else
                {
                    scan = StartupScan.scan(layout, settings.tmpMaxAge, Instant.now(), logger);
                }
            }
            catch (final IOException ex)
            {
                throw config.invalid(PosixSettings.DIR, settings.dir.toString(), "a readable directory, but scanning it failed: "
                    + PosixSettings.describe(ex), ex);
            }
            catch (final IllegalStateException ex)
            {
                throw config.invalid(PosixSettings.DIR, settings.dir.toString(), "a directory no other process uses with "
                    + config.qualified(PosixSettings.LAYOUT) + "=slab, but " + ex.getMessage(), ex);
            }
            final int evictedAtStart = adopt(slabLayout ? slabScan.pages() : scan.pages());

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
            if (usesLibc && !slabLayout && settings.spareTempFiles > 0)
            {
                made = new SpareTempFiles(libc.get(), settings.dir, settings.spareTempFiles, settings.tmpMaxAge, arena, name, logger);
                for (final PosixWorker worker : workers)
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
            fanout = slabLayout ? null : new FanoutDirectories(layout, libc, logger, name);
            if (fanout != null && fanout.needed())
            {
                fanoutThread = new Thread(fanout, "kvtier-posix-" + name + "-mkdir");
                fanoutThread.setDaemon(true);
            }
            else
            {
                fanoutThread = null;
            }

            // One consumer index per worker, so each parks in a slot of its own.
            threads = new TierWorkers("posix tier " + name, "kvtier-posix-" + name + "-io", List.of(workers), QUEUE_CAPACITY, true, logger);
            final String found = slabLayout
                ? "slab of " + slab.slotsPerExtent + " slots of " + ConfigValues.formatSize(slab.slotBytes) + " per extent, at most "
                    + slab.maxExtents + " extents; found " + slabScan.extents() + " extents holding " + slabScan.pages().size() + " frames ("
                    + ConfigValues.formatSize(index.usedBytes()) + " kept, " + evictedAtStart + " evicted to fit the capacity), cleared "
                    + slabScan.staleFrames() + " older frames of rewritten keys and " + slabScan.tornFrames() + " torn ones, deleted "
                    + slabScan.extentsDeleted() + " extents of another geometry"
                : "spare temp files: " + (spares == null ? "none" : settings.spareTempFiles + " kept ready")
                    + "; found " + scan.pages().size() + " page files from earlier runs or other nodes (" + ConfigValues.formatSize(index.usedBytes())
                    + " kept, " + evictedAtStart + " evicted to fit the capacity)"
                    + ", deleted " + scan.deletedTemps() + " temp files older than " + settings.tmpMaxAge
                    + ", kept " + scan.youngTemps() + " younger ones, ignored " + scan.foreignFiles() + " other files";
            logger.log(System.Logger.Level.INFO, "posix tier " + name + " ready: " + settings
                + "; io path: " + ioDescription
                + "; direct-io " + directNote
                + "; " + found);
            if (settings.isBounded() && settings.capacity / objectSize > settings.indexEntries)
            {
                logger.log(System.Logger.Level.WARNING, config.qualified(PosixSettings.CAPACITY) + " holds " + settings.capacity / objectSize
                    + " objects but the index tracks " + settings.indexEntries + ": the tier keeps at most that many; raise "
                    + config.qualified(PosixSettings.INDEX_ENTRIES) + " to use the whole capacity");
            }
            threads.start();
            if (slab != null)
            {
                slab.startGrower("kvtier-posix-" + name + "-extents");
            }
            if (fanoutThread != null)
            {
                fanoutThread.start();
            }
        }
        catch (final RuntimeException | Error ex)
        {
            closeAll(rings);
            if (transports != null)
            {
                for (final PosixWorker worker : madeWorkers == null ? new PosixWorker[0] : madeWorkers)
                {
                    if (worker != null)
                    {
                        worker.store.close();
                    }
                }
                transports.close();
            }
            if (madeSlab != null)
            {
                madeSlab.close();
            }
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
     * keep moving bytes straight from the pool slices, unregistered, and the reason is logged. A pool
     * larger than {@code fixed-buffers-max} is not registered: pinning it all would hold the engine's start.
     *
     * @param rings    the I/O threads' rings
     * @param context  the engine's side, which offers the memory
     * @param limitKey the qualified name of {@code fixed-buffers-max}, for the description
     * @return how the rings address page memory, for the tier's description
     */
    private String registerTransferMemory(final Uring[] rings, final TierContext context, final String limitKey)
    {
        final java.util.Optional<MemorySegment> offered = context.transferMemory();
        if (offered.isEmpty())
        {
            return "page I/O from the pool slices, not fixed buffers: the engine offered no transfer memory";
        }
        final MemorySegment region = offered.get();
        if (region.byteSize() > settings.fixedBuffersMax)
        {
            return "page I/O from the pool slices, not fixed buffers: the engine's " + (region.byteSize() >> 20) + " MiB of transfer memory is"
                + " more than " + limitKey + " (" + (settings.fixedBuffersMax >> 20) + " MiB), and"
                + " registering pins all of it before the engine serves";
        }
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

    /** @return the size of the filesystem holding {@code dir}, or 0 when it cannot be had */
    private static long filesystemBytes(final java.nio.file.Path dir)
    {
        try
        {
            return java.nio.file.Files.getFileStore(dir).getTotalSpace();
        }
        catch (final java.io.IOException ex)
        {
            return 0;
        }
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
        return new PosixTier(config, settings, context, libc, fallbackReason, uringAvailability, null);
    }

    /**
     * Creates a tier with the slab layout whose I/O threads move bytes through another tier's transports (the 3FS tier's
     * USRBIO); {@code fsync} and everything else are as configured. The transports are closed with the tier, or here when
     * it fails to start.
     *
     * @param config     the tier's settings, for error messages
     * @param settings   the validated settings, {@code layout = slab}
     * @param context    the engine's side
     * @param libc       the libc front: extents, headers and tombstones still go through it
     * @param transports each I/O thread's transport
     * @return the running tier
     */
    static PosixTier openSlab(final TierConfig config, final PosixSettings settings, final TierContext context, final LibC libc,
                              final SlabTransport.Factory transports)
    {
        return new PosixTier(config, settings, context, Optional.of(libc), "", Uring::availability, transports);
    }

    private int adopt(final List<StartupScan.Page> found)
    {
        // Runs before the workers start, on the creating thread, with the first worker's store and buffers.
        final PosixWorker seeder = workers[0];
        int evicted = 0;
        for (final StartupScan.Page page : found)
        {
            while (!index.adopt(page.key().high(), page.key().low(), page.bytes()))
            {
                if (!index.chooseOneVictim(seeder.victims()))
                {
                    // A page file stays on disk, uncounted; a slab frame would hold its slot for good, so it is cleared.
                    if (slab != null)
                    {
                        seeder.store.unlink(page.key().high(), page.key().low());
                    }
                    break;
                }
                evicted += seeder.evictChosen();
            }
        }
        index.startEvictionIfAboveHighWater();
        index.continueEviction(seeder.victims());
        evicted += seeder.evictChosen();
        if (index.overflowed())
        {
            reportOverflow();
        }
        return evicted;
    }

    private void reportOverflow()
    {
        pages.reportOverflow();
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
            threads.submit(TierWorkers.EXISTS, batch);
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
            // Entered around each lookup, never around a completion: a completion callback may close the
            // tier, and close() waits for what entered (so the index it frees is not in use).
            if (!threads.enter())
            {
                status = TierStatus.CLOSED;
            }
            else
            {
                try
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
                finally
                {
                    threads.leave();
                }
            }
            // null: the index overflowed since the first key; a key it does not hold is a miss, never wrong bytes.
            complete(batch, i, status == null ? TierStatus.NOT_FOUND : status);
        }
        return true;
    }

    @Override
    public void read(final TierBatch batch)
    {
        threads.submit(TierWorkers.READ, batch);
    }

    @Override
    public void write(final TierBatch batch)
    {
        threads.submit(TierWorkers.WRITE, batch);
    }

    @Override
    public void remove(final TierBatch batch)
    {
        threads.submit(TierWorkers.REMOVE, batch);
    }

    @Override
    public TierUsage usage()
    {
        synchronized (indexLock)
        {
            return new TierUsage(index.usedBytes(), settings.capacity, index.objects());
        }
    }

    /** The numbers of {@link #usage()}, without its record: the engine reads them a few times a second. */
    @Override
    public void reportUsage(final TierUsage.Consumer consumer)
    {
        final long used;
        final long objects;
        synchronized (indexLock)
        {
            used = index.usedBytes();
            objects = index.objects();
        }
        consumer.accept(used, settings.capacity, objects);
    }

    /** Its own capacity's levels, when it has a capacity (and so evicts by itself). */
    @Override
    public Optional<TierWaterLevels> waterLevels()
    {
        return settings.isBounded() ? Optional.of(new TierWaterLevels(settings.evictHigh, settings.evictLow)) : Optional.empty();
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
            if (fanoutThread != null)
            {
                fanout.stop();
            }
            final long deadline = System.nanoTime() + CLOSE_TIMEOUT.toNanos();
            // From a completion callback the calling worker is not waited for: it finishes its key, then
            // completes the rest CLOSED without touching the native buffers, and meets its poison pill.
            final boolean stopped = threads.close(CLOSE_TIMEOUT);
            boolean interrupted = false;
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
                for (final PosixWorker worker : workers)
                {
                    worker.store.close();
                }
                if (transports != null)
                {
                    transports.close();
                }
                if (slab != null)
                {
                    slab.close();
                }
                arena.close();
                logger.log(System.Logger.Level.DEBUG, "posix tier " + name + " closed");
            }
            // Else a worker stuck in a hung filesystem call still uses its path buffers: they are left to it.
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
        return threads.threads();
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
        for (final PosixWorker worker : workers)
        {
            if (worker.store instanceof UringFileStore uring)
            {
                operations += uring.fixedBufferOperations();
            }
            else if (worker.store instanceof SlabFileStore slabStore)
            {
                operations += slabStore.fixedBufferOperations();
            }
        }
        return operations;
    }

    /** @return slab header writes submitted with a ring (one for each run of consecutive slots in a claim), over every worker; for tests */
    long slabHeaderWrites()
    {
        return sumOverSlabStores(SlabFileStore::headerWrites);
    }

    /** @return tombstone writes for evicted slots (one for each run of neighbouring slots in a round), over every worker; for tests */
    long slabTombstoneWrites()
    {
        return sumOverSlabStores(SlabFileStore::tombstoneWrites);
    }

    private long sumOverSlabStores(final ToLongFunction<SlabFileStore> count)
    {
        long sum = 0;
        for (final PosixWorker worker : workers)
        {
            if (worker.store instanceof SlabFileStore slabStore)
            {
                sum += count.applyAsLong(slabStore);
            }
        }
        return sum;
    }

    /** @return the I/O path first (with the reason of any fallback), then O_DIRECT and the directory: what {@code kvtier stat} shows */
    @Override
    public String describe()
    {
        // Short, with the fallback's reason before the rest: the pool keeps only the first 188 bytes.
        return "io=" + (transports != null ? transports.ioName() : ioPath.settingValue + (ioFallback.isEmpty() ? "" : " (" + ioFallback + ")"))
            + (ioPath == IoPath.URING ? (fixedBuffers ? " fixed buffers" : " unregistered buffers") : "")
            + ", direct-io " + (directIo.active() ? "on" : "off") + (slab == null ? ", layout=files" : ", layout=slab") + ", dir=" + settings.dir;
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
        for (final PosixWorker worker : workers)
        {
            made += worker.store.directoriesMade();
        }
        return made;
    }

    /** @return the slab of {@code layout = slab}, or null; for tests */
    Slab slab()
    {
        return slab;
    }

    /** @return the start-up creation of fan-out directories (null with {@code layout = slab}), for tests */
    FanoutDirectories fanout()
    {
        return fanout;
    }
}
