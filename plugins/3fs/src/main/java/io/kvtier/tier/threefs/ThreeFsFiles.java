package io.kvtier.tier.threefs;

import io.kvtier.spi.TierContext;
import io.kvtier.spi.TierStatus;
import io.kvtier.tier.support.Errno;
import io.kvtier.tier.support.FileIndex;
import io.kvtier.tier.support.PathLayout;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a 3FS tier's threads share: the page files' layout and {@link FileIndex} (monitor: the index
 * itself), the stripe locks of the keys' namespace changes, eviction, temp file names, the rings'
 * factory and the rate-limited log of failures with their mapping to a {@link TierStatus}.
 */
final class ThreeFsFiles
{
    private static final int STRIPES = 64;
    private static final long LOG_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

    final String name;
    final ThreeFsSettings settings;
    final PathLayout layout;
    final long objectSize;
    final System.Logger logger;
    final Arena indexArena = Arena.ofShared();
    final FileIndex index;
    private final TierContext context;
    private final String mount;
    private final FileIndex.Eviction eviction = this::evict;
    private final Object[] stripes = new Object[STRIPES];
    private final long tempToken = ThreadLocalRandom.current().nextLong();
    private final AtomicInteger tempCounter = new AtomicInteger();
    private final AtomicBoolean overflowReported = new AtomicBoolean();
    private final AtomicLong lastErrorLogNanos = new AtomicLong(System.nanoTime() - LOG_INTERVAL_NANOS);

    /**
     * @param settings the validated settings
     * @param context  the engine's side
     * @param mount    the 3FS mount point holding the directory
     */
    ThreeFsFiles(final ThreeFsSettings settings, final TierContext context, final String mount)
    {
        this.name = settings.tierName;
        this.settings = settings;
        this.context = context;
        this.mount = mount;
        this.logger = context.logger();
        this.objectSize = context.objectSize();
        this.layout = new PathLayout(settings.dir, settings.fanoutLevels);
        this.index = new FileIndex(indexArena, FileIndex.defaultEntries(settings.capacity, objectSize, settings.entries), settings.capacity,
            settings.highWaterBytes(), settings.lowWaterBytes());
        for (int i = 0; i < STRIPES; i++)
        {
            stripes[i] = new Object();
        }
    }

    /**
     * @param forRead a read ring, else a write ring
     * @return a new ring on the mount
     */
    UsrbioRing newRing(final boolean forRead)
    {
        return UsrbioRing.create(mount, settings.entries, forRead, settings.ioDepth, (int)Math.min(Integer.MAX_VALUE, settings.timeout.toMillis()),
            objectSize);
    }

    /**
     * @param page a page's path
     * @return a fresh temp file name next to it, unique to this tier instance
     */
    Path tempPath(final Path page)
    {
        return PathLayout.tempPath(page, tempToken, tempCounter.getAndIncrement());
    }

    void reportOverflow()
    {
        if (overflowReported.compareAndSet(false, true))
        {
            logger.log(System.Logger.Level.WARNING, "3fs tier " + name + ": more pages than its index of "
                + FileIndex.UNBOUNDED_DEFAULT_ENTRIES + " entries tracks: the rest are counted in bytes only and usage reports objects as unknown");
        }
    }

    Object stripe(final long keyHigh, final long keyLow)
    {
        return stripes[(int)((keyHigh ^ keyLow) & (STRIPES - 1))];
    }

    private boolean shouldLogError()
    {
        final long now = System.nanoTime();
        final long last = lastErrorLogNanos.get();
        return now - last >= LOG_INTERVAL_NANOS && lastErrorLogNanos.compareAndSet(last, now);
    }

    TierStatus failed(final TierStatus status, final String what)
    {
        if (shouldLogError())
        {
            logger.log(System.Logger.Level.WARNING, "3fs tier " + name + ": " + what + " -> " + status + " (at most one such line a second)");
        }
        return status;
    }

    TierStatus errnoStatus(final int errno, final String what)
    {
        return switch (errno)
        {
            case Errno.ENOENT -> TierStatus.NOT_FOUND;
            case Errno.ENOSPC, Errno.EDQUOT -> failed(TierStatus.NO_SPACE, what + ": " + ErrnoText.describe(errno));
            case Errno.ETIMEDOUT -> failed(TierStatus.TIMEOUT, what + ": " + ErrnoText.describe(errno));
            default -> failed(TierStatus.IO_ERROR, what + ": " + ErrnoText.describe(errno));
        };
    }

    /**
     * Unlinks the files the index chose for eviction, reports each, and keeps going while an eviction
     * round needs more.
     *
     * @param victims files the index chose
     * @return how many were evicted
     */
    int evictChosen(final FileIndex.Victims victims)
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
    int commitOf(final long keyHigh, final long keyLow)
    {
        synchronized (index)
        {
            return index.commitOf(keyHigh, keyLow);
        }
    }

    /** The file was found missing: drop the index's entry, unless the key was written again since {@code commit} was taken. */
    void forgetIfHeld(final long keyHigh, final long keyLow, final int commit)
    {
        synchronized (stripe(keyHigh, keyLow))
        {
            synchronized (index)
            {
                index.forget(keyHigh, keyLow, commit);
            }
        }
    }

}
