package io.kvtier.tier.threefs;

import io.kvtier.nativeaccess.libc.LibC;
import io.kvtier.spi.ConfigValues;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierCapability;
import io.kvtier.spi.TierContext;
import io.kvtier.spi.TierStatus;
import io.kvtier.spi.TierUsage;
import io.kvtier.tier.posix.FileIndex;
import io.kvtier.tier.posix.PathLayout;
import io.kvtier.tier.posix.StartupScan;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static io.kvtier.nativeaccess.hf3fs.bindings.hf3fs_usrbio_h.hf3fs_dereg_fd;
import static io.kvtier.nativeaccess.hf3fs.bindings.hf3fs_usrbio_h.hf3fs_reg_fd;

/**
 * The 3FS tier on USRBIO: page files on the mount in the POSIX tier's layout, their bytes moved by the 3FS
 * client through two rings, one for reads and one for writes, each driven by a thread of its own so that a
 * read never waits behind a backup. See docs/plugins/3fs.md for the layout and the crash-safety argument.
 *
 * <h2>A batch on a ring</h2>
 * The ring's thread takes a batch and works through it in chunks of at most {@code entries} pages: for
 * each page it opens the file (reads: the page; writes: a fresh temp file next to it), registers the
 * descriptor ({@code hf3fs_reg_fd}, whose failure is a positive errno) and prepares one I/O
 * ({@code hf3fs_prep_io}) between the file and the page's memory: the pool itself when it is wrapped as an
 * iov ({@link PoolRegions}), else the ring's staging iov with a copy. It submits the chunk once and waits
 * with an absolute deadline ({@code timeout} from the submit). Each completion settles its own page: all
 * bytes is OK, fewer is a failed page (never partial data served), {@code -errno} is the error. A write
 * that completed is closed and renamed over the page's name; any other is unlinked.
 *
 * <h2>Timeouts</h2>
 * Pages still in flight at the deadline complete {@link TierStatus#TIMEOUT}, but only once their I/O has
 * come back (or {@code drain-timeout} passed): until then the 3FS client may still write into their memory,
 * which the engine reuses the moment a key completes. A ring whose I/Os outlive the drain too is abandoned
 * (never destroyed, never reused) and replaced, so the tier stays usable; that is logged as an error.
 *
 * <h2>Probes, removes, capacity</h2>
 * {@code exists} and {@code remove} are metadata calls on the mount, done by a third thread with a
 * {@code stat} or an {@code unlink}: other nodes write and delete pages in the same directory, so no local
 * answer would do. Capacity and eviction count what this instance saw (its start-up scan and its own
 * writes), as the POSIX tier does, in its allocation-free {@link FileIndex}: a write reserves its key's
 * entry (so the file is not evicted while written), a commit follows the rename under the key's stripe
 * lock, and an eviction unlinks a file only if no write committed the key again since it was chosen.
 */
final class ThreeFsTier implements StorageTier
{
    private static final int QUEUE_CAPACITY = 4096;
    private static final int STRIPES = 64;
    private static final long LOG_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final int VICTIMS_PER_ROUND = 64;
    private static final int MAX_RESERVE_ATTEMPTS = 16;
    private static final TierBatch POISON = new TierBatch()
    {
        @Override
        public int size()
        {
            return 0;
        }

        @Override
        public long keyHigh(final int index)
        {
            throw new IndexOutOfBoundsException(index);
        }

        @Override
        public long keyLow(final int index)
        {
            throw new IndexOutOfBoundsException(index);
        }

        @Override
        public MemorySegment segment(final int index)
        {
            throw new IndexOutOfBoundsException(index);
        }

        @Override
        public void complete(final int index, final TierStatus status)
        {
            throw new IndexOutOfBoundsException(index);
        }
    };

    private final String name;
    private final TierContext context;
    private final ThreeFsSettings settings;
    private final PathLayout layout;
    private final long tempToken = java.util.concurrent.ThreadLocalRandom.current().nextLong();
    private final java.util.concurrent.atomic.AtomicInteger tempCounter = new java.util.concurrent.atomic.AtomicInteger();
    private final LibC libc;
    private final String mount;
    private final String library;
    private final System.Logger logger;
    private final long objectSize;
    private final Arena indexArena = Arena.ofShared();
    private final FileIndex index;
    private final FileIndex.Eviction eviction = this::evict;
    private final Object[] stripes = new Object[STRIPES];
    private final PoolRegions regions;
    private Set<TierCapability> capabilities;
    private final RingWorker reader;
    private final RingWorker writer;
    private final MetaWorker meta;
    private final AtomicInteger submitting = new AtomicInteger();
    private final AtomicBoolean overflowReported = new AtomicBoolean();
    private final AtomicLong lastErrorLogNanos = new AtomicLong(System.nanoTime() - LOG_INTERVAL_NANOS);
    private final Object closeLock = new Object();
    private volatile boolean closed;
    private boolean released;

    private ThreeFsTier(final ThreeFsSettings settings, final TierContext context, final LibC libc, final String mount, final String library)
    {
        this.name = settings.tierName;
        this.context = context;
        this.settings = settings;
        this.libc = libc;
        this.mount = mount;
        this.library = library;
        this.logger = context.logger();
        this.objectSize = context.objectSize();
        this.layout = new PathLayout(settings.dir, settings.fanoutLevels);
        this.index = new FileIndex(indexArena, FileIndex.defaultEntries(settings.capacity, objectSize, settings.entries), settings.capacity,
            settings.highWaterBytes(), settings.lowWaterBytes());
        for (int i = 0; i < STRIPES; i++)
        {
            stripes[i] = new Object();
        }
        regions = new PoolRegions(mount, logger, name);
        reader = new RingWorker(true);
        writer = new RingWorker(false);
        meta = new MetaWorker();
    }

    /**
     * Scans the directory, creates the rings and starts the threads.
     *
     * @param settings the validated settings
     * @param context  the engine's side
     * @param libc     the libc front, for descriptors and renames
     * @param mount    the 3FS mount point holding the directory
     * @param library  the USRBIO library bound, for the log
     * @return the running tier
     */
    static ThreeFsTier open(final ThreeFsSettings settings, final TierContext context, final LibC libc, final String mount, final String library)
    {
        final ThreeFsTier tier = new ThreeFsTier(settings, context, libc, mount, library);
        try
        {
            tier.start();
        }
        catch (final RuntimeException | Error ex)
        {
            tier.release();
            throw ex;
        }
        return tier;
    }

    private void start()
    {
        final StartupScan scan;
        try
        {
            scan = StartupScan.scan(layout, settings.tmpMaxAge, Instant.now(), logger);
        }
        catch (final IOException ex)
        {
            throw settings.invalid(ThreeFsSettings.DIR, settings.dir.toString(), "a readable directory, but scanning it failed: " + ex);
        }
        final FileIndex.Victims victims = new FileIndex.Victims(VICTIMS_PER_ROUND);
        int evicted = 0;
        for (final StartupScan.Page page : scan.pages())
        {
            // Oldest first, so they seed the LRU order; a full index makes room by evicting the oldest.
            while (!index.adopt(page.key().high(), page.key().low(), page.bytes()))
            {
                if (!index.chooseOneVictim(victims))
                {
                    break;
                }
                evicted += evictChosen(victims);
            }
        }
        index.startEvictionIfAboveHighWater();
        index.continueEviction(victims);
        evicted += evictChosen(victims);
        reader.ring = newRing(true);
        writer.ring = newRing(false);
        // The engine's page frames, which every slice lies in: wrapped now rather than on the first page.
        final boolean zeroCopy = context.transferMemory().map(regions::iovOf).isPresent();
        final EnumSet<TierCapability> declared = EnumSet.of(TierCapability.PERSISTENT, TierCapability.SHARED);
        if (settings.isBounded())
        {
            declared.add(TierCapability.SELF_EVICTING);
        }
        if (zeroCopy)
        {
            declared.add(TierCapability.ZERO_COPY);
        }
        // Set before the threads start, which publishes it to them and to callers of the running tier.
        capabilities = Collections.unmodifiableSet(declared);
        logger.log(System.Logger.Level.INFO, "3fs tier " + name + " ready: " + settings + "; io=USRBIO through " + library + " on mount " + mount
            + " (read and write rings of " + settings.entries + " entries; " + (zeroCopy ? "the engine's page frames wrapped: zero copy"
                : "no page frames offered or wrappable: pages are staged with a copy") + ")"
            + "; found " + scan.pages().size() + " page files from earlier runs or other nodes (" + ConfigValues.formatSize(index.usedBytes())
            + " kept, " + evicted + " evicted to fit the capacity), deleted " + scan.deletedTemps() + " temp files older than "
            + settings.tmpMaxAge + ", kept " + scan.youngTemps() + " younger ones");
        reader.thread.start();
        writer.thread.start();
        meta.thread.start();
    }

    private UsrbioRing newRing(final boolean forRead)
    {
        return UsrbioRing.create(mount, settings.entries, forRead, settings.ioDepth, (int)Math.min(Integer.MAX_VALUE, settings.timeout.toMillis()),
            objectSize);
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

    @Override
    public void exists(final TierBatch batch)
    {
        submit(meta.queue, batch, MetaWorker.EXISTS);
    }

    @Override
    public void read(final TierBatch batch)
    {
        submit(reader.queue, batch, 0);
    }

    @Override
    public void write(final TierBatch batch)
    {
        submit(writer.queue, batch, 0);
    }

    @Override
    public void remove(final TierBatch batch)
    {
        submit(meta.queue, batch, MetaWorker.REMOVE);
    }

    private void submit(final BlockingQueue<Object> queue, final TierBatch batch, final int operation)
    {
        if (batch.size() == 0)
        {
            return;
        }
        boolean accepted = false;
        boolean wasClosed;
        // Counted while queueing, never while completing: a completion callback may close the tier.
        submitting.incrementAndGet();
        try
        {
            wasClosed = closed;
            if (!wasClosed)
            {
                accepted = queue.offer(operation == 0 ? batch : new MetaJob(batch, operation));
            }
        }
        finally
        {
            submitting.decrementAndGet();
        }
        if (!accepted)
        {
            completeAll(batch, 0, wasClosed ? TierStatus.CLOSED : TierStatus.REJECTED);
        }
    }

    private static void completeAll(final TierBatch batch, final int from, final TierStatus status)
    {
        // Read once: after the last completion the batch is the engine's, which may already reuse it for another.
        final int size = batch.size();
        for (int i = from; i < size; i++)
        {
            batch.complete(i, status);
        }
    }

    @Override
    public TierUsage usage()
    {
        synchronized (index)
        {
            return new TierUsage(index.usedBytes(), settings.capacity, index.objects());
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
            while (submitting.get() != 0)
            {
                Thread.onSpinWait();
            }
            boolean interrupted = false;
            for (final Worker worker : new Worker[] {reader, writer, meta})
            {
                // put, not add: a full queue drains (its worker completes what it takes CLOSED now), so this returns.
                while (true)
                {
                    try
                    {
                        worker.queue.put(POISON);
                        break;
                    }
                    catch (final InterruptedException ex)
                    {
                        interrupted = true;
                    }
                }
            }
            final long waitMillis = settings.timeout.plus(settings.drainTimeout).toMillis() + 5_000;
            for (final Worker worker : new Worker[] {reader, writer, meta})
            {
                try
                {
                    worker.thread.join(waitMillis);
                }
                catch (final InterruptedException ex)
                {
                    interrupted = true;
                }
                // Whatever was queued behind the poison, or left by a worker that did not stop in time.
                for (Object queued = worker.queue.poll(); queued != null; queued = worker.queue.poll())
                {
                    if (queued != POISON)
                    {
                        completeAll(queued instanceof MetaJob job ? job.batch : (TierBatch)queued, 0, TierStatus.CLOSED);
                    }
                }
            }
            if (reader.thread.isAlive() || writer.thread.isAlive())
            {
                logger.log(System.Logger.Level.WARNING, "3fs tier " + name + ": a ring thread is still busy after close (hung 3FS client?);"
                    + " its rings are left alive");
            }
            else
            {
                release();
            }
            released = true;
            logger.log(System.Logger.Level.DEBUG, "3fs tier " + name + " closed");
            if (interrupted)
            {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void release()
    {
        for (final RingWorker worker : new RingWorker[] {reader, writer})
        {
            if (worker.ring != null)
            {
                worker.ring.destroy();
            }
        }
        regions.close();
        indexArena.close();
    }

    private void reportOverflow()
    {
        if (overflowReported.compareAndSet(false, true))
        {
            logger.log(System.Logger.Level.WARNING, "3fs tier " + name + ": more pages than its index of "
                + FileIndex.UNBOUNDED_DEFAULT_ENTRIES + " entries tracks: the rest are counted in bytes only and usage reports objects as unknown");
        }
    }

    private Object stripe(final long keyHigh, final long keyLow)
    {
        return stripes[(int)((keyHigh ^ keyLow) & (STRIPES - 1))];
    }

    private boolean shouldLogError()
    {
        final long now = System.nanoTime();
        final long last = lastErrorLogNanos.get();
        return now - last >= LOG_INTERVAL_NANOS && lastErrorLogNanos.compareAndSet(last, now);
    }

    private TierStatus failed(final TierStatus status, final String what)
    {
        if (shouldLogError())
        {
            logger.log(System.Logger.Level.WARNING, "3fs tier " + name + ": " + what + " -> " + status + " (at most one such line a second)");
        }
        return status;
    }

    private TierStatus errnoStatus(final int errno, final String what)
    {
        return switch (errno)
        {
            case Errno.ENOENT -> TierStatus.NOT_FOUND;
            case Errno.ENOSPC, Errno.EDQUOT -> failed(TierStatus.NO_SPACE, what + ": " + Errno.describe(errno));
            case Errno.ETIMEDOUT -> failed(TierStatus.TIMEOUT, what + ": " + Errno.describe(errno));
            default -> failed(TierStatus.IO_ERROR, what + ": " + Errno.describe(errno));
        };
    }

    /**
     * Unlinks the files the index chose for eviction, reports each, and keeps going while an eviction
     * round needs more.
     *
     * @param victims files the index chose
     * @return how many were evicted
     */
    private int evictChosen(final FileIndex.Victims victims)
    {
        return FileIndex.evictChosen(index, index, victims, eviction);
    }

    /** Unlinks an evicted page's file, unless a write committed the key again since it was chosen. */
    private boolean evict(final int id, final long keyHigh, final long keyLow)
    {
        synchronized (stripe(keyHigh, keyLow))
        {
            synchronized (index)
            {
                if (!index.beginEviction(id))
                {
                    return false;
                }
            }
            final Path page = layout.pagePath(keyHigh, keyLow);
            try
            {
                Files.deleteIfExists(page);
            }
            catch (final IOException ex)
            {
                failed(TierStatus.IO_ERROR, "evicting " + page + ": " + ex);
            }
            synchronized (index)
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
            logger.log(System.Logger.Level.ERROR, "3fs tier " + name + ": objectRemoved callback failed", ex);
        }
        return true;
    }

    /** @return the commit number of the key's file in the index, 0 for none; taken before looking, for {@link #forgetIfHeld} */
    private int commitOf(final long keyHigh, final long keyLow)
    {
        synchronized (index)
        {
            return index.commitOf(keyHigh, keyLow);
        }
    }

    /** The file was found missing: drop the index's entry, unless the key was written again since {@code commit} was taken. */
    private void forgetIfHeld(final long keyHigh, final long keyLow, final int commit)
    {
        synchronized (stripe(keyHigh, keyLow))
        {
            synchronized (index)
            {
                index.forget(keyHigh, keyLow, commit);
            }
        }
    }

    /** A queue and the thread that serves it. */
    private abstract class Worker implements Runnable
    {
        final BlockingQueue<Object> queue = new ArrayBlockingQueue<>(QUEUE_CAPACITY);
        final Thread thread;

        Worker(final String role)
        {
            thread = new Thread(this, "kvtier-3fs-" + name + "-" + role);
            thread.setDaemon(true);
        }

        @Override
        public void run()
        {
            while (true)
            {
                final Object job;
                try
                {
                    job = queue.take();
                }
                catch (final InterruptedException ex)
                {
                    // Only close() stops a worker, with the poison pill.
                    continue;
                }
                if (job == POISON)
                {
                    return;
                }
                serve(job);
            }
        }

        abstract void serve(Object job);
    }

    /** An exists or remove batch. */
    private record MetaJob(TierBatch batch, int operation)
    {
    }

    /** Probes and removes: a stat or an unlink on the mount per key. */
    private final class MetaWorker extends Worker
    {
        static final int EXISTS = 1;
        static final int REMOVE = 2;

        MetaWorker()
        {
            super("meta");
        }

        @Override
        void serve(final Object job)
        {
            final MetaJob metaJob = (MetaJob)job;
            final TierBatch batch = metaJob.batch;
            final int size = batch.size();
            for (int i = 0; i < size; i++)
            {
                TierStatus status;
                try
                {
                    status = closed ? TierStatus.CLOSED
                        : metaJob.operation == EXISTS ? probe(batch.keyHigh(i), batch.keyLow(i)) : remove(batch.keyHigh(i), batch.keyLow(i));
                }
                catch (final RuntimeException ex)
                {
                    status = failed(TierStatus.IO_ERROR, "unexpected failure: " + ex);
                }
                batch.complete(i, status);
            }
        }

        private TierStatus probe(final long keyHigh, final long keyLow)
        {
            final Path page = layout.pagePath(keyHigh, keyLow);
            final int commit = commitOf(keyHigh, keyLow);
            try
            {
                final long size = Files.readAttributes(page, BasicFileAttributes.class).size();
                return size == objectSize ? TierStatus.OK : TierStatus.CORRUPT;
            }
            catch (final NoSuchFileException ex)
            {
                forgetIfHeld(keyHigh, keyLow, commit);
                return TierStatus.NOT_FOUND;
            }
            catch (final IOException ex)
            {
                return failed(TierStatus.IO_ERROR, "stat " + page + ": " + ex);
            }
        }

        private TierStatus remove(final long keyHigh, final long keyLow)
        {
            final Path page = layout.pagePath(keyHigh, keyLow);
            synchronized (stripe(keyHigh, keyLow))
            {
                try
                {
                    final boolean deleted = Files.deleteIfExists(page);
                    synchronized (index)
                    {
                        index.removed(keyHigh, keyLow, deleted, objectSize);
                    }
                    return deleted ? TierStatus.OK : TierStatus.NOT_FOUND;
                }
                catch (final IOException ex)
                {
                    return failed(TierStatus.IO_ERROR, "unlink " + page + ": " + ex);
                }
            }
        }
    }

    /** One ring's thread: reads or writes, a chunk of at most {@code entries} pages at a time. */
    private final class RingWorker extends Worker
    {
        private final boolean forRead;
        private final int entries = settings.entries;
        private final int[] batchIndex = new int[entries];
        private final long[] keyHigh = new long[entries];
        private final long[] keyLow = new long[entries];
        private final MemorySegment[] segment = new MemorySegment[entries];
        private final MemorySegment[] staged = new MemorySegment[entries];
        private final int[] fd = new int[entries];
        private final boolean[] registered = new boolean[entries];
        private final boolean[] inFlight = new boolean[entries];
        private final boolean[] reserved = new boolean[entries];
        private final TierStatus[] status = new TierStatus[entries];
        private final Path[] page = new Path[entries];
        private final Path[] temp = new Path[entries];
        private final int[] tickets = new int[entries];
        private final FileIndex.Victims victims = new FileIndex.Victims(VICTIMS_PER_ROUND);
        private UsrbioRing ring;
        private int pending;

        RingWorker(final boolean forRead)
        {
            super(forRead ? "read" : "write");
            this.forRead = forRead;
        }

        @Override
        void serve(final Object job)
        {
            final TierBatch batch = (TierBatch)job;
            final int size = batch.size();
            for (int from = 0; from < size; from += entries)
            {
                if (closed)
                {
                    completeAll(batch, from, TierStatus.CLOSED);
                    return;
                }
                final int count = Math.min(entries, size - from);
                try (Arena arena = Arena.ofConfined())
                {
                    chunk(batch, from, count, arena);
                }
            }
        }

        private void chunk(final TierBatch batch, final int from, final int count, final Arena arena)
        {
            pending = 0;
            for (int k = 0; k < count; k++)
            {
                final int i = from + k;
                batchIndex[k] = i;
                keyHigh[k] = batch.keyHigh(i);
                keyLow[k] = batch.keyLow(i);
                segment[k] = batch.segment(i);
                staged[k] = null;
                fd[k] = -1;
                registered[k] = false;
                inFlight[k] = false;
                reserved[k] = false;
                status[k] = null;
                page[k] = layout.pagePath(keyHigh[k], keyLow[k]);
                temp[k] = null;
                try
                {
                    if (forRead)
                    {
                        openForRead(k, arena);
                    }
                    else
                    {
                        openForWrite(k, arena);
                    }
                    if (status[k] == null)
                    {
                        prepare(k);
                    }
                }
                catch (final RuntimeException ex)
                {
                    status[k] = failed(TierStatus.IO_ERROR, "preparing " + page[k] + ": " + ex);
                }
            }
            if (pending > 0)
            {
                final int rc = ring.submit();
                if (rc < 0)
                {
                    // A hint only: the client's worker also polls the ring, so the I/Os may still run; wait for them.
                    failed(TierStatus.IO_ERROR, "hf3fs_submit_ios: " + Errno.describe(-rc) + "; waiting for the prepared I/Os anyway");
                }
                awaitCompletions();
            }
            for (int k = 0; k < count; k++)
            {
                finish(batch, k, arena);
            }
        }

        private void openForRead(final int k, final Arena arena)
        {
            final int commit = commitOf(keyHigh[k], keyLow[k]);
            final int f = libc.open(arena.allocateFrom(page[k].toString()), LibC.O_RDONLY | LibC.O_CLOEXEC, 0);
            if (f < 0)
            {
                status[k] = errnoStatus(-f, "open " + page[k]);
                if (status[k] == TierStatus.NOT_FOUND)
                {
                    forgetIfHeld(keyHigh[k], keyLow[k], commit);
                }
                return;
            }
            fd[k] = f;
            final long size = libc.size(f);
            if (size < 0)
            {
                status[k] = errnoStatus((int)-size, "size of " + page[k]);
            }
            else if (size != segment[k].byteSize())
            {
                status[k] = TierStatus.CORRUPT;
            }
        }

        private void openForWrite(final int k, final Arena arena)
        {
            final long len = segment[k].byteSize();
            if (len > objectSize)
            {
                status[k] = failed(TierStatus.REJECTED, "a segment of " + len + " bytes, above the object size " + objectSize);
                return;
            }
            int ticket = FileIndex.RETRY;
            for (int attempt = 0; ticket == FileIndex.RETRY && attempt < MAX_RESERVE_ATTEMPTS; attempt++)
            {
                synchronized (index)
                {
                    ticket = index.reserveWrite(keyHigh[k], keyLow[k], len, victims);
                }
                evictChosen(victims);
            }
            if (ticket == FileIndex.RETRY || ticket == FileIndex.NO_SPACE)
            {
                status[k] = TierStatus.NO_SPACE;
                return;
            }
            if (ticket == FileIndex.UNTRACKED)
            {
                reportOverflow();
            }
            tickets[k] = ticket;
            reserved[k] = true;
            temp[k] = PathLayout.tempPath(page[k], tempToken, tempCounter.getAndIncrement());
            final MemorySegment path = arena.allocateFrom(temp[k].toString());
            final int flags = LibC.O_WRONLY | LibC.O_CREAT | LibC.O_EXCL | LibC.O_CLOEXEC;
            int f = libc.open(path, flags, 0644);
            if (f == -Errno.ENOENT)
            {
                // The fan-out directory is made by the first write into it, here or on another node.
                try
                {
                    Files.createDirectories(page[k].getParent());
                }
                catch (final IOException ex)
                {
                    status[k] = failed(TierStatus.IO_ERROR, "mkdir " + page[k].getParent() + ": " + ex);
                    return;
                }
                f = libc.open(path, flags, 0644);
            }
            if (f < 0)
            {
                status[k] = errnoStatus(-f, "create " + temp[k]);
                temp[k] = null;
                return;
            }
            fd[k] = f;
        }

        private void prepare(final int k)
        {
            final int rc = hf3fs_reg_fd(fd[k], 0L);
            if (rc > 0)
            {
                // A positive errno: EBADF when the file is not on 3FS.
                status[k] = failed(TierStatus.IO_ERROR, "hf3fs_reg_fd " + (forRead ? page[k] : temp[k]) + ": " + Errno.describe(rc));
                return;
            }
            registered[k] = true;
            final long len = segment[k].byteSize();
            MemorySegment iov = regions.iovOf(segment[k]);
            MemorySegment ptr = segment[k];
            if (iov == null)
            {
                if (len > objectSize)
                {
                    status[k] = TierStatus.CORRUPT;
                    return;
                }
                ptr = ring.stagingSlot(k, len);
                iov = ring.stagingIov();
                staged[k] = ptr;
                if (!forRead)
                {
                    MemorySegment.copy(segment[k], 0, ptr, 0, len);
                }
            }
            final int index = ring.prepare(iov, ptr, fd[k], len, k);
            if (index < 0)
            {
                status[k] = failed(TierStatus.IO_ERROR, "hf3fs_prep_io " + (forRead ? page[k] : temp[k]) + ": " + Errno.describe(-index));
                return;
            }
            inFlight[k] = true;
            pending++;
        }

        private void awaitCompletions()
        {
            final Instant deadline = Instant.now().plus(settings.timeout);
            while (pending > 0)
            {
                final int got = ring.waitFor(pending, deadline);
                if (got < 0)
                {
                    markInFlight(failed(TierStatus.IO_ERROR, "hf3fs_wait_for_ios: " + Errno.describe(-got)));
                    drain();
                    return;
                }
                reap(got);
                if (pending > 0 && !Instant.now().isBefore(deadline))
                {
                    markInFlight(failed(TierStatus.TIMEOUT, pending + " I/Os not completed within " + settings.qualified(ThreeFsSettings.TIMEOUT)
                        + "=" + settings.timeout));
                    drain();
                    return;
                }
            }
        }

        private void markInFlight(final TierStatus outcome)
        {
            for (int k = 0; k < entries; k++)
            {
                if (inFlight[k] && status[k] == null)
                {
                    status[k] = outcome;
                }
            }
        }

        /** Waits for I/Os whose outcome is already decided, so their memory is no longer the client's. */
        private void drain()
        {
            final Instant deadline = Instant.now().plus(settings.drainTimeout);
            while (pending > 0 && Instant.now().isBefore(deadline))
            {
                final int got = ring.waitFor(pending, deadline);
                if (got < 0)
                {
                    break;
                }
                reap(got);
            }
            if (pending > 0)
            {
                logger.log(System.Logger.Level.ERROR, "3fs tier " + name + ": " + pending + " " + (forRead ? "read" : "write")
                    + " I/Os still not back " + settings.drainTimeout + " after their timeout; abandoning that ring and its registered files"
                    + " (never reused) and making a new one. " + (forRead ? "If they complete, they write into pool memory the engine has reused." : ""));
                ring.abandon();
                ring = newRing(forRead);
                for (int k = 0; k < entries; k++)
                {
                    if (inFlight[k])
                    {
                        // The client may still use the descriptor: neither deregister nor close it.
                        inFlight[k] = false;
                        registered[k] = false;
                        fd[k] = -1;
                    }
                }
                pending = 0;
            }
        }

        private void reap(final int got)
        {
            for (int j = 0; j < got; j++)
            {
                final MemorySegment cqe = ring.cqe(j);
                final int k = (int)io.kvtier.nativeaccess.hf3fs.bindings.hf3fs_cqe.userdata(cqe).address();
                if (k < 0 || k >= entries || !inFlight[k])
                {
                    continue;
                }
                inFlight[k] = false;
                pending--;
                if (status[k] != null)
                {
                    continue;
                }
                final long result = io.kvtier.nativeaccess.hf3fs.bindings.hf3fs_cqe.result(cqe);
                final long len = segment[k].byteSize();
                if (result == len)
                {
                    status[k] = TierStatus.OK;
                }
                else if (result >= 0)
                {
                    status[k] = failed(TierStatus.IO_ERROR, "short " + (forRead ? "read of " + page[k] : "write of " + temp[k]) + ": "
                        + result + " of " + len + " bytes");
                }
                else
                {
                    status[k] = errnoStatus((int)-result, (forRead ? "read " + page[k] : "write " + temp[k]));
                    if (forRead && status[k] == TierStatus.NOT_FOUND)
                    {
                        status[k] = TierStatus.IO_ERROR;
                    }
                }
            }
        }

        private void finish(final TierBatch batch, final int k, final Arena arena)
        {
            if (registered[k])
            {
                hf3fs_dereg_fd(fd[k]);
            }
            int closeRc = 0;
            if (fd[k] >= 0)
            {
                closeRc = libc.close(fd[k]);
            }
            TierStatus outcome = status[k] == null ? TierStatus.IO_ERROR : status[k];
            if (forRead)
            {
                if (outcome == TierStatus.OK)
                {
                    if (staged[k] != null)
                    {
                        MemorySegment.copy(staged[k], 0, segment[k], 0, segment[k].byteSize());
                    }
                    synchronized (index)
                    {
                        index.touch(keyHigh[k], keyLow[k]);
                    }
                }
            }
            else
            {
                outcome = publish(k, outcome, closeRc, arena);
            }
            segment[k] = null;
            staged[k] = null;
            batch.complete(batchIndex[k], outcome);
        }

        /** Renames a completed write over the page's name, or cleans up after a failed one. */
        private TierStatus publish(final int k, final TierStatus written, final int closeRc, final Arena arena)
        {
            TierStatus outcome = written;
            if (outcome == TierStatus.OK && closeRc < 0)
            {
                // Network filesystems report write errors at close.
                outcome = errnoStatus(-closeRc, "close " + temp[k]);
            }
            final long len = segment[k].byteSize();
            boolean committed = false;
            if (outcome == TierStatus.OK)
            {
                synchronized (stripe(keyHigh[k], keyLow[k]))
                {
                    final int rc = libc.rename(arena.allocateFrom(temp[k].toString()), arena.allocateFrom(page[k].toString()));
                    if (rc == 0)
                    {
                        synchronized (index)
                        {
                            index.commitWrite(tickets[k], len, true, victims);
                        }
                        committed = true;
                    }
                    else
                    {
                        outcome = errnoStatus(-rc, "rename " + temp[k] + " to " + page[k]);
                        if (outcome == TierStatus.NOT_FOUND)
                        {
                            outcome = TierStatus.IO_ERROR;
                        }
                    }
                }
            }
            if (!committed)
            {
                if (temp[k] != null)
                {
                    libc.unlink(arena.allocateFrom(temp[k].toString()));
                }
                if (reserved[k])
                {
                    synchronized (index)
                    {
                        index.commitWrite(tickets[k], len, false, victims);
                    }
                }
            }
            evictChosen(victims);
            return outcome;
        }
    }
}
