package io.kvtier.bench.ipc;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * The background load of {@code kvtier bench ipc}'s loaded case: one busy core's worth. A JVM of its
 * own whose main thread runs a loop of integer arithmetic on a local variable for as long as it lives:
 * never a sleep, a yield, a system call or a store to memory another thread reads, so it is always
 * runnable and competes for a core as any busy process on an inference host would. A second thread
 * blocks reading stdin and ends the process when the parent closes it or dies, so the load never
 * outlives the bench.
 */
public final class BackgroundLoad
{
    /** What the load prints once its loop runs, for the parent to wait for. */
    static final String READY = "kvtier-load-spinning";
    /** What {@code kvtier bench ipc} reports as its load. */
    public static final String DESCRIPTION = "one child JVM whose one thread spins on integer arithmetic (always runnable, no syscalls), started by the bench";

    private static final long START_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(60);

    private static volatile long sink;

    private BackgroundLoad()
    {
    }

    /**
     * @param args none
     */
    public static void main(final String[] args)
    {
        final Thread watcher = Thread.ofPlatform().daemon(true).name("kvtier-load-stdin").start(() ->
        {
            try
            {
                while (System.in.read() >= 0)
                {
                    // anything the parent writes is ignored: only the end of stdin matters
                }
            }
            catch (final IOException ex)
            {
                // the parent's end is gone: as good as EOF
            }
            Runtime.getRuntime().halt(0);
        });
        System.out.println(READY);
        System.out.flush();
        long x = 0x9E3779B97F4A7C15L;
        while (watcher.isAlive())
        {
            for (int i = 0; i < 1 << 20; i++)
            {
                x ^= x << 13;
                x ^= x >>> 7;
                x ^= x << 17;
            }
            sink = x;
        }
    }

    /**
     * Starts the load and waits until it spins.
     *
     * @return the load's process; {@link #stop} it
     * @throws IOException if it cannot be started or does not start spinning
     */
    public static Process start() throws IOException
    {
        final Process load = JavaProcesses.start(BackgroundLoad.class);
        final long deadline = System.nanoTime() + START_TIMEOUT_NANOS;
        final StringBuilder line = new StringBuilder();
        int c;
        while ((c = load.getInputStream().read()) >= 0 && c != '\n')
        {
            line.append((char)c);
            if (System.nanoTime() - deadline > 0)
            {
                break;
            }
        }
        if (!line.toString().trim().equals(READY))
        {
            stop(load);
            throw new IOException("the background load did not start (it printed \"" + line + "\", exit code "
                + (load.isAlive() ? "none yet" : load.exitValue()) + ")");
        }
        return load;
    }

    /**
     * Ends the load: closes its stdin, then kills it if it is still there.
     *
     * @param load the load's process, or null
     */
    public static void stop(final Process load)
    {
        if (load == null)
        {
            return;
        }
        try
        {
            load.getOutputStream().close();
            if (!load.waitFor(5, TimeUnit.SECONDS))
            {
                load.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        }
        catch (final IOException ex)
        {
            load.destroyForcibly();
        }
        catch (final InterruptedException ex)
        {
            load.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
