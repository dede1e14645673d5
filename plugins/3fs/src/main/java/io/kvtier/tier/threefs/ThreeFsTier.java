package io.kvtier.tier.threefs;

import io.kvtier.nativeaccess.libc.LibC;
import io.kvtier.spi.ConfigValues;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierCapability;
import io.kvtier.spi.TierContext;
import io.kvtier.spi.TierStatus;
import io.kvtier.spi.TierUsage;
import io.kvtier.spi.TierWaterLevels;
import io.kvtier.tier.support.FileIndex;
import io.kvtier.tier.support.PathLayout;
import io.kvtier.tier.support.StartupScan;
import io.kvtier.tier.support.TierWorkers;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import static io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_usrbio_h.hf3fs_reg_fd;

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
    private static final int VICTIMS_PER_ROUND = 64;

    private final String name;
    private final TierContext context;
    private final ThreeFsSettings settings;
    private final ThreeFsFiles files;
    private final PathLayout layout;
    private final String mount;
    private final String library;
    private final System.Logger logger;
    private final FileIndex index;
    private final PoolRegions regions;
    private Set<TierCapability> capabilities;
    private final ThreeFsRingWorker reader;
    private final ThreeFsRingWorker writer;
    private final TierWorkers readThread;
    private final TierWorkers writeThread;
    private final TierWorkers metaThread;
    private final Object closeLock = new Object();
    private boolean released;

    private ThreeFsTier(final ThreeFsSettings settings, final TierContext context, final LibC libc, final String mount, final String library)
    {
        this.name = settings.tierName;
        this.context = context;
        this.settings = settings;
        this.mount = mount;
        this.library = library;
        this.logger = context.logger();
        this.files = new ThreeFsFiles(settings, context, mount);
        this.layout = files.layout;
        this.index = files.index;
        regions = new PoolRegions(mount, logger, name);
        reader = new ThreeFsRingWorker(files, libc, regions, true);
        writer = new ThreeFsRingWorker(files, libc, regions, false);
        // One thread each, in submission order: a read never waits behind a backup, nor a probe behind either.
        readThread = new TierWorkers("3fs tier " + name, "kvtier-3fs-" + name + "-read", List.of(reader), QUEUE_CAPACITY, false, logger);
        writeThread = new TierWorkers("3fs tier " + name, "kvtier-3fs-" + name + "-write", List.of(writer), QUEUE_CAPACITY, false, logger);
        metaThread = new TierWorkers("3fs tier " + name, "kvtier-3fs-" + name + "-meta", List.of(new ThreeFsMetaWorker(files)), QUEUE_CAPACITY,
            false, logger);
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
                evicted += files.evictChosen(victims);
            }
        }
        index.startEvictionIfAboveHighWater();
        index.continueEviction(victims);
        evicted += files.evictChosen(victims);
        reader.ring = files.newRing(true);
        writer.ring = files.newRing(false);
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
        readThread.start();
        writeThread.start();
        metaThread.start();
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
        metaThread.submit(TierWorkers.EXISTS, batch);
    }

    @Override
    public void read(final TierBatch batch)
    {
        readThread.submit(TierWorkers.READ, batch);
    }

    @Override
    public void write(final TierBatch batch)
    {
        writeThread.submit(TierWorkers.WRITE, batch);
    }

    @Override
    public void remove(final TierBatch batch)
    {
        metaThread.submit(TierWorkers.REMOVE, batch);
    }

    @Override
    public TierUsage usage()
    {
        synchronized (index)
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
        synchronized (index)
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

    @Override
    public void close()
    {
        synchronized (closeLock)
        {
            if (released)
            {
                return;
            }
            // All three stop taking work before any is waited for; what they hold queued completes CLOSED.
            final TierWorkers[] all = {readThread, writeThread, metaThread};
            for (final TierWorkers workers : all)
            {
                workers.beginClose();
            }
            final Duration wait = settings.timeout.plus(settings.drainTimeout).plusSeconds(5);
            final boolean ringsStopped = readThread.awaitStopped(wait) & writeThread.awaitStopped(wait);
            metaThread.awaitStopped(wait);
            if (!ringsStopped)
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
        }
    }

    private void release()
    {
        for (final ThreeFsRingWorker worker : new ThreeFsRingWorker[] {reader, writer})
        {
            if (worker.ring != null)
            {
                worker.ring.destroy();
            }
        }
        regions.close();
        files.indexArena.close();
    }

}
