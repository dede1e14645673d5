package io.kvtier.tier.posix;

import io.kvtier.nativeaccess.libc.LibC;
import io.kvtier.tier.support.PathLayout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Empty temp files made ahead of the writes that will fill them, by a thread of their own.
 *
 * <p>Why: creating a file costs what writing a page does on some filesystems. On the build
 * machines' ext4, creating a file takes about 450 µs, against 7 µs to open one that exists, while a
 * 256 KiB write takes 550 µs. Every write of the tier used to create its temp file on the I/O thread.
 * A write that takes a spare opens it without O_CREAT, writes, closes and renames it over its page
 * exactly as before. The creation then happens here, in the slack a shallow queue leaves, and not
 * while the write waits. It moves the cost and does not remove it: a writer that already keeps every
 * core busy gains nothing.
 *
 * <p>Spares sit in the tier's root as {@code .kvtier-spare.<token><counter>.tmp}. The random token is
 * this instance's, so two engines sharing a directory never take each other's. Spares are temp files
 * by name: a spare left by an engine that died is deleted by the next start-up scan once it is older
 * than {@code tmp-max-age}, like any dead writer's temp file. So that such a scan never deletes a
 * spare this instance still holds, a spare older than half of {@code tmp-max-age} is unlinked rather
 * than used. A spare gone for any other reason fails its open with ENOENT, and the write makes its
 * temp file the usual way. What is left at close is unlinked.
 *
 * <p>{@link #take} is called by the I/O threads, allocates nothing, and holds this object's monitor
 * for a few field updates.
 */
final class SpareTempFiles implements AutoCloseable
{
    /** How a spare's name starts, in the tier's root. */
    static final String PREFIX = ".kvtier-spare.";
    private static final int FILE_MODE = 0644;
    private static final long BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final LibC libc;
    private final byte[] prefix;
    private final long maxAgeNanos;
    private final long[] counters;
    private final long[] born;
    private final System.Logger logger;
    private final String tierName;
    private final Thread refiller;
    private final MemorySegment refillPath;
    private int head;
    private int count;
    private long nextCounter;
    private boolean running = true;
    private boolean failureLogged;

    /**
     * @param libc      the libc front
     * @param root      the tier's directory
     * @param target    how many spares to keep ready
     * @param tmpMaxAge the tier's {@code tmp-max-age}
     * @param arena     where the refill thread's path buffer comes from
     * @param tierName  for the thread's name and logs
     * @param logger    where a failure to make spares is said, once
     */
    SpareTempFiles(final LibC libc, final Path root, final int target, final java.time.Duration tmpMaxAge, final Arena arena, final String tierName,
                   final System.Logger logger)
    {
        this.libc = libc;
        this.prefix = (root.toString() + "/" + PREFIX + String.format("%016x", ThreadLocalRandom.current().nextLong()))
            .getBytes(StandardCharsets.UTF_8);
        this.maxAgeNanos = tmpMaxAge.toNanos() / 2;
        this.counters = new long[target];
        this.born = new long[target];
        this.logger = logger;
        this.tierName = tierName;
        this.refillPath = arena.allocate(pathBytes());
        this.refiller = Thread.ofPlatform().daemon(true).name("kvtier-posix-spares-" + tierName).unstarted(this::refill);
        refiller.start();
    }

    /** @return bytes a path buffer needs for a spare's name and its NUL */
    int pathBytes()
    {
        return prefix.length + 8 + PathLayout.TEMP_SUFFIX.length() + 1;
    }

    /**
     * Takes a spare, writing its path into {@code path}.
     *
     * @param path a buffer of at least {@link #pathBytes()} bytes
     * @return whether there was one young enough; if not, the caller makes its temp file itself
     */
    boolean take(final MemorySegment path)
    {
        final long counter;
        final long bornNanos;
        synchronized (this)
        {
            if (count == 0)
            {
                notifyAll();
                return false;
            }
            counter = counters[head];
            bornNanos = born[head];
            head = (head + 1) % counters.length;
            count--;
            notifyAll();
        }
        writePath(path, counter);
        if (System.nanoTime() - bornNanos > maxAgeNanos)
        {
            // Old enough that a start-up scan elsewhere may take it for a dead writer's: not worth the race.
            libc.unlink(path);
            return false;
        }
        return true;
    }

    private void refill()
    {
        while (true)
        {
            final long counter;
            synchronized (this)
            {
                while (running && count == counters.length)
                {
                    try
                    {
                        wait();
                    }
                    catch (final InterruptedException ex)
                    {
                        return;
                    }
                }
                if (!running)
                {
                    return;
                }
                counter = nextCounter++;
            }
            writePath(refillPath, counter);
            final int fd = libc.open(refillPath, LibC.O_WRONLY | LibC.O_CREAT | LibC.O_EXCL | LibC.O_CLOEXEC, FILE_MODE);
            if (fd == -LibC.EEXIST)
            {
                continue; // a name of a counter that wrapped, still in use: take the next
            }
            if (fd < 0)
            {
                if (!failureLogged)
                {
                    failureLogged = true;
                    logger.log(System.Logger.Level.WARNING, "posix tier " + tierName + ": cannot make spare temp files (errno " + -fd
                        + "); writes make their own");
                }
                synchronized (this)
                {
                    try
                    {
                        wait(TimeUnit.NANOSECONDS.toMillis(BACKOFF_NANOS));
                    }
                    catch (final InterruptedException ex)
                    {
                        return;
                    }
                }
                continue;
            }
            libc.close(fd);
            synchronized (this)
            {
                if (!running)
                {
                    libc.unlink(refillPath);
                    return;
                }
                final int tail = (head + count) % counters.length;
                counters[tail] = counter;
                born[tail] = System.nanoTime();
                count++;
            }
        }
    }

    /** Writes {@code <prefix><counter as 8 hex digits>.tmp} and a NUL. */
    private void writePath(final MemorySegment path, final long counter)
    {
        MemorySegment.copy(prefix, 0, path, ValueLayout.JAVA_BYTE, 0, prefix.length);
        long at = prefix.length;
        for (int shift = 28; shift >= 0; shift -= 4)
        {
            path.set(ValueLayout.JAVA_BYTE, at++, (byte)Character.forDigit((int)(counter >>> shift) & 0xF, 16));
        }
        for (int i = 0; i < PathLayout.TEMP_SUFFIX.length(); i++)
        {
            path.set(ValueLayout.JAVA_BYTE, at++, (byte)PathLayout.TEMP_SUFFIX.charAt(i));
        }
        path.set(ValueLayout.JAVA_BYTE, at, (byte)0);
    }

    /** @return spares ready now */
    synchronized int ready()
    {
        return count;
    }

    /** Stops making spares and unlinks those not taken. */
    @Override
    public void close()
    {
        synchronized (this)
        {
            running = false;
            notifyAll();
        }
        try
        {
            refiller.join(TimeUnit.SECONDS.toMillis(5));
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        synchronized (this)
        {
            while (count > 0)
            {
                writePath(refillPath, counters[head]);
                libc.unlink(refillPath);
                head = (head + 1) % counters.length;
                count--;
            }
        }
    }
}
