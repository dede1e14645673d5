package io.kvtier.tier.posix;

import io.kvtier.nativeaccess.libc.LibC;
import io.kvtier.tier.support.PathLayout;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Creates the fan-out directories when the tier starts, so the write path does not: the first one or
 * two levels (256 and 65,536 directories) all of them, on a thread of their own so that start is not
 * delayed (creating 65,792 directories takes about 2 s of kernel time on ext4 and 0.5 s on tmpfs).
 * The third level, 16.7M directories, is left to the writes: each leaf is made by the first write into
 * it, with one {@code mkdir}, and never again.
 *
 * <p>Once every directory exists, a marker file {@code .kvtier-fanout-<levels>} is written in the
 * tier's directory, and later starts (on this node or another sharing the directory) skip the work.
 * The tier never deletes a fan-out directory; should one go missing anyway, the write that finds it
 * missing makes it again. Until the thread is done, writes into a directory it has not reached yet
 * make that directory themselves, exactly as a write into a missing leaf does.
 */
final class FanoutDirectories implements Runnable
{
    /** Name prefix of the marker file; the level count follows. */
    static final String MARKER_PREFIX = PathLayout.FANOUT_MARKER_PREFIX;
    /** Levels created at start; deeper ones are created by the first write into each leaf. */
    static final int EAGER_LEVELS = 2;

    private static final int DIRECTORY_MODE = 0755;
    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

    private final PathLayout layout;
    private final Optional<LibC> libc;
    private final System.Logger logger;
    private final String tierName;
    private final CountDownLatch finished = new CountDownLatch(1);
    private volatile boolean stopRequested;
    private volatile boolean complete;
    private volatile int created;

    /**
     * @param layout   where pages live
     * @param libc     mkdir through libc when present, else through NIO
     * @param logger   where the outcome is logged
     * @param tierName the tier's name, for the log
     */
    FanoutDirectories(final PathLayout layout, final Optional<LibC> libc, final System.Logger logger, final String tierName)
    {
        this.layout = layout;
        this.libc = libc;
        this.logger = logger;
        this.tierName = tierName;
    }

    /**
     * @param layout where pages live
     * @return the marker that says every directory created at start exists
     */
    static Path marker(final PathLayout layout)
    {
        return layout.fanoutMarker();
    }

    /**
     * @param fileName a file name found in the tier's directory
     * @return whether it is a fan-out marker
     */
    static boolean isMarker(final String fileName)
    {
        return PathLayout.isFanoutMarker(fileName);
    }

    /**
     * @param levels fan-out levels
     * @return how many directories are created at start
     */
    static int eagerDirectories(final int levels)
    {
        int total = 0;
        int perLevel = 1;
        for (int level = 1; level <= Math.min(levels, EAGER_LEVELS); level++)
        {
            perLevel *= 256;
            total += perLevel;
        }
        return total;
    }

    /** @return whether there is anything to create: fan-out levels and no marker from an earlier start */
    boolean needed()
    {
        return layout.levels() > 0 && !Files.exists(marker(layout));
    }

    /** Asks the thread to stop after the directory it is making; {@link #run} then leaves no marker. */
    void stop()
    {
        stopRequested = true;
    }

    /**
     * @param timeout how long to wait
     * @return whether {@link #run} ended within it
     * @throws InterruptedException if interrupted while waiting
     */
    boolean await(final Duration timeout) throws InterruptedException
    {
        return finished.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** @return whether every directory was created (or found) and the marker written */
    boolean complete()
    {
        return complete;
    }

    /** @return directories this run created (not counting those that already existed) */
    int created()
    {
        return created;
    }

    @Override
    public void run()
    {
        final long start = System.nanoTime();
        try (Arena arena = Arena.ofConfined())
        {
            final byte[] prefix = layout.dir().toString().getBytes(StandardCharsets.UTF_8);
            final byte[] path = new byte[prefix.length + 3 * EAGER_LEVELS];
            System.arraycopy(prefix, 0, path, 0, prefix.length);
            final MemorySegment nativePath = libc.isPresent() ? arena.allocate(path.length + 1) : null;
            final int eager = Math.min(layout.levels(), EAGER_LEVELS);
            for (int first = 0; first < 256 && !stopRequested; first++)
            {
                putLevel(path, prefix.length, first);
                makeDirectory(path, prefix.length + 3, nativePath);
                for (int second = 0; eager > 1 && second < 256 && !stopRequested; second++)
                {
                    putLevel(path, prefix.length + 3, second);
                    makeDirectory(path, prefix.length + 6, nativePath);
                }
            }
            if (stopRequested)
            {
                return;
            }
            try
            {
                Files.createFile(marker(layout));
            }
            catch (final FileAlreadyExistsException ex)
            {
                // Another node sharing the directory finished first.
            }
            complete = true;
            logger.log(System.Logger.Level.INFO, "posix tier " + tierName + ": fan-out directories ready (" + created + " created, "
                + (eagerDirectories(layout.levels()) - created) + " already there) in "
                + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) + " ms"
                + (layout.levels() > EAGER_LEVELS ? "; level-3 directories are made by the first write into each" : ""));
        }
        catch (final IOException ex)
        {
            logger.log(System.Logger.Level.WARNING, "posix tier " + tierName + ": creating the fan-out directories under " + layout.dir()
                + " failed after " + created + ": " + PosixSettings.describe(ex) + "; writes create the missing ones on first use");
        }
        finally
        {
            finished.countDown();
        }
    }

    private static void putLevel(final byte[] path, final int at, final int value)
    {
        path[at] = '/';
        path[at + 1] = HEX[value >>> 4];
        path[at + 2] = HEX[value & 0xF];
    }

    private void makeDirectory(final byte[] path, final int length, final MemorySegment nativePath) throws IOException
    {
        if (nativePath != null)
        {
            LibC.putCString(nativePath, 0, path, length);
            final int rc = libc.get().mkdir(nativePath, DIRECTORY_MODE);
            if (rc == 0)
            {
                created++;
            }
            else if (rc != -LibC.EEXIST)
            {
                throw new IOException("mkdir " + new String(path, 0, length, StandardCharsets.UTF_8) + ": " + libc.get().strerror(rc));
            }
            return;
        }
        final Path directory = Path.of(new String(path, 0, length, StandardCharsets.UTF_8));
        if (!Files.isDirectory(directory))
        {
            try
            {
                Files.createDirectory(directory);
                created++;
            }
            catch (final FileAlreadyExistsException ex)
            {
                // Made meanwhile by a write or by another node.
            }
        }
    }
}
