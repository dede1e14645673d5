package io.kvtier.bench.ipc;

import io.kvtier.nativeaccess.libc.Futex;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The floor under an IPC round trip: this process writes a sequence number into a shared word, a
 * second JVM ({@link PingPongEcho}) sees it and writes it back into another, and this process sees
 * that. No protocol, no records, no futex: only two processes and two cache lines, each side spinning
 * and then yielding. {@code kvtier bench ipc} reports the protocol's round trips beside it.
 */
public final class PingPongBaseline
{
    /** Longest round trip the histograms record (longer ones are clamped): 10 s. */
    public static final long HIGHEST_TRACKABLE_NANOS = TimeUnit.SECONDS.toNanos(10);

    /** The echo's argument for the wake-up baseline. */
    static final String FUTEX_MODE = "futex";
    /** The longest one futex wait of the wake-up baseline lasts (a lost wake-up costs this, and shows). */
    static final long FUTEX_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private static final long START_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(60);

    private PingPongBaseline()
    {
    }

    /**
     * Starts the echo process, waits until it answers, pings {@code warmups} times unrecorded and
     * {@code iterations} times recorded, then stops it.
     *
     * @param directory  where to create the shared file (/dev/shm, or a temporary directory)
     * @param warmups    unrecorded round trips first, for both JITs
     * @param iterations recorded round trips
     * @return the recorded round trips' latencies in nanoseconds
     * @throws IOException          if the file or the process cannot be made
     * @throws InterruptedException if interrupted while waiting for the echo to end
     */
    public static Histogram measure(final Path directory, final int warmups, final int iterations) throws IOException, InterruptedException
    {
        if (warmups < 0 || iterations < 1)
        {
            throw new IllegalArgumentException("warmups=" + warmups + " must be >= 0 and iterations=" + iterations + " >= 1");
        }
        final Path path = directory.resolve("kvtier-pingpong-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
        final Histogram histogram = new Histogram(HIGHEST_TRACKABLE_NANOS, 3);
        Process echo = null;
        try (PingPongFile file = PingPongFile.map(path, true))
        {
            file.writeRelease(PingPongFile.PONG, PingPongFile.STOP);
            echo = JavaProcesses.start(PingPongEcho.class, path.toString());
            awaitEcho(file, echo);
            long sequence = 0;
            for (int i = 0; i < warmups + iterations; i++)
            {
                sequence++;
                final long start = System.nanoTime();
                file.writeRelease(PingPongFile.PING, sequence);
                int idle = 0;
                while (file.readAcquire(PingPongFile.PONG) != sequence)
                {
                    SpinThenYield.idle(idle++);
                    if ((idle & 0xFFFFF) == 0 && !echo.isAlive())
                    {
                        throw new IOException("the echo process ended with exit code " + echo.exitValue() + " mid-run");
                    }
                }
                final long rtt = System.nanoTime() - start;
                if (i >= warmups)
                {
                    histogram.recordValue(Math.min(rtt, HIGHEST_TRACKABLE_NANOS));
                }
            }
            file.writeRelease(PingPongFile.PING, PingPongFile.STOP);
            if (!echo.waitFor(30, TimeUnit.SECONDS))
            {
                throw new IOException("the echo process did not stop");
            }
            return histogram;
        }
        finally
        {
            if (echo != null && echo.isAlive())
            {
                echo.destroyForcibly();
            }
            Files.deleteIfExists(path);
        }
    }

    /**
     * The cost of a wake-up, as a baseline: the same ping-pong, each side sleeping on a futex word between
     * its turns and woken by the other's {@code FUTEX_WAKE}, so that every round trip is two wake-ups of a
     * sleeping process (and their system calls). Empty, with the reason, where there is no futex.
     *
     * @param directory  where to create the shared file
     * @param warmups    unrecorded round trips first
     * @param iterations recorded round trips
     * @return the recorded round trips' latencies in nanoseconds
     * @throws IOException          if the file or the process cannot be made, or there is no futex here
     * @throws InterruptedException if interrupted while waiting for the echo to end
     */
    public static Histogram measureWakeUps(final Path directory, final int warmups, final int iterations) throws IOException, InterruptedException
    {
        if (warmups < 0 || iterations < 1)
        {
            throw new IllegalArgumentException("warmups=" + warmups + " must be >= 0 and iterations=" + iterations + " >= 1");
        }
        final Futex futex = Futex.instance().orElseThrow(() -> new IOException("no futex in this JVM (native access is off, or the"
            + " architecture has no SYS_futex number)"));
        final Path path = directory.resolve("kvtier-pingpong-futex-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
        final Histogram histogram = new Histogram(HIGHEST_TRACKABLE_NANOS, 3);
        Process echo = null;
        try (PingPongFile file = PingPongFile.map(path, true))
        {
            final MemorySegment ping = file.word(PingPongFile.FUTEX_PING);
            final MemorySegment pong = file.word(PingPongFile.FUTEX_PONG);
            file.writeIntRelease(PingPongFile.FUTEX_PONG, (int)PingPongFile.STOP);
            echo = JavaProcesses.start(PingPongEcho.class, path.toString(), FUTEX_MODE);
            final long deadline = System.nanoTime() + START_TIMEOUT_NANOS;
            while (file.readIntAcquire(PingPongFile.FUTEX_PONG) != 0)
            {
                checkStarting(echo, deadline);
                Thread.sleep(1);
            }
            int sequence = 0;
            for (int i = 0; i < warmups + iterations; i++)
            {
                sequence++;
                final long start = System.nanoTime();
                file.writeIntRelease(PingPongFile.FUTEX_PING, sequence);
                futex.wakeShared(ping, 1);
                int waits = 0;
                while (file.readIntAcquire(PingPongFile.FUTEX_PONG) != sequence)
                {
                    futex.waitShared(pong, sequence - 1, FUTEX_WAIT_NANOS);
                    if (++waits % 100 == 0 && !echo.isAlive())
                    {
                        throw new IOException("the echo process ended with exit code " + echo.exitValue() + " mid-run");
                    }
                }
                final long rtt = System.nanoTime() - start;
                if (i >= warmups)
                {
                    histogram.recordValue(Math.min(rtt, HIGHEST_TRACKABLE_NANOS));
                }
            }
            file.writeIntRelease(PingPongFile.FUTEX_PING, (int)PingPongFile.STOP);
            futex.wakeShared(ping, 1);
            if (!echo.waitFor(30, TimeUnit.SECONDS))
            {
                throw new IOException("the echo process did not stop");
            }
            return histogram;
        }
        finally
        {
            if (echo != null && echo.isAlive())
            {
                echo.destroyForcibly();
            }
            Files.deleteIfExists(path);
        }
    }

    private static void checkStarting(final Process echo, final long deadline) throws IOException
    {
        if (!echo.isAlive())
        {
            throw new IOException("the echo process ended with exit code " + echo.exitValue() + " before it answered");
        }
        if (System.nanoTime() > deadline)
        {
            throw new IOException("the echo process did not answer within 60 s");
        }
    }

    private static void awaitEcho(final PingPongFile file, final Process echo) throws IOException, InterruptedException
    {
        final long deadline = System.nanoTime() + START_TIMEOUT_NANOS;
        while (file.readAcquire(PingPongFile.PONG) != 0)
        {
            if (!echo.isAlive())
            {
                throw new IOException("the echo process ended with exit code " + echo.exitValue() + " before it answered");
            }
            if (System.nanoTime() > deadline)
            {
                throw new IOException("the echo process did not answer within 60 s");
            }
            Thread.sleep(1);
        }
    }
}
