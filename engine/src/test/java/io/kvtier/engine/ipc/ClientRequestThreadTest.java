package io.kvtier.engine.ipc;

import io.kvtier.engine.pool.Counters;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.engine.status.ThreadWatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * An idle sealer or device thread (a {@link ClientRequestThread} with no request) stays asleep: it wakes no more
 * often than its park bound allows, counted by the kernel's count of the thread's voluntary context switches, and
 * a stop still ends it, since stopping interrupts the park rather than waiting it out. With the queue's
 * former 1 ms bound such a thread woke about a thousand times a second, taking a core from the engine thread or
 * from a spinning client each time.
 */
class ClientRequestThreadTest
{
    private static final Path TASKS = Path.of("/proc/self/task");

    /** A thread that never gets a request. */
    private static final class Idle extends ClientRequestThread
    {
        Idle(final String name, final ThreadWatch watch)
        {
            super(name, 2, watch);
            start();
        }

        @Override
        void serve(final RemoteClient client)
        {
            throw new AssertionError("no request was offered");
        }
    }

    @Test
    void shouldStayAsleepWhileIdleAndStillEndAtOnceWhenStopped(@TempDir final Path directory) throws Exception
    {
        assumeTrue(Files.isDirectory(TASKS), "no /proc/self/task here: the kernel's per-thread counts are Linux's");
        // Short enough for /proc's 15-character comm, and no other test's.
        final String name = "crt-idle-" + (System.nanoTime() & 0xFFFF);
        try (PagePool pool = PagePool.create(directory.resolve("pool"), 4096, 4, 64, 2, Duration.ofSeconds(30)))
        {
            final Idle idle = new Idle(name, new ThreadWatch(new Counters(pool.counters()), TimeUnit.SECONDS.toNanos(60)));
            try
            {
                final Path task = awaitTask(name);
                // Past its start and its first spin, parked in the queue's take: a fixed 50 ms here let a loaded host
                // count the start-up's own switches (a thread not yet scheduled, class loading) against the idle thread.
                awaitParkedInTake(name);
                final long before = voluntarySwitches(task);
                final long start = System.nanoTime();
                Thread.sleep(400);
                final long switches = voluntarySwitches(task) - before;
                final long elapsed = System.nanoTime() - start;
                // One wake-up per bound elapsed, and a few to spare; 1 ms parks would have made hundreds.
                assertThat(switches).as("voluntary context switches of the idle thread in %d ms", elapsed / 1_000_000)
                    .isLessThanOrEqualTo(elapsed / ClientRequestThread.IDLE_PARK_NANOS + 3);
            }
            finally
            {
                idle.stop();
            }
            assertThat(idle.alive()).as("the stop ended it and joined it").isFalse();
            // The kernel reaps the thread's task a moment after the JVM's join returns, so its /proc entry may linger.
            for (int i = 0; i < 500 && taskNamed(name) != null; i++)
            {
                Thread.sleep(10);
            }
            assertThat(taskNamed(name)).as("the stopped thread's task is gone").isNull();
        }
    }

    private static Path awaitTask(final String name) throws IOException, InterruptedException
    {
        for (int i = 0; i < 1_000; i++)
        {
            final Path task = taskNamed(name);
            if (task != null)
            {
                return task;
            }
            Thread.sleep(10);
        }
        throw new AssertionError("no thread named " + name + " appeared in " + TASKS + " within 10 s");
    }

    private static void awaitParkedInTake(final String name) throws InterruptedException
    {
        final Thread thread = Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals(name)).findFirst()
            .orElseThrow(() -> new AssertionError("no thread named " + name));
        for (int i = 0; i < 1_000; i++)
        {
            if (thread.getState() == Thread.State.TIMED_WAITING
                && Stream.of(thread.getStackTrace()).anyMatch(frame -> frame.getMethodName().equals("take")
                    && frame.getClassName().equals(io.kvtier.collections.ParkingQueue.class.getName())))
            {
                return;
            }
            Thread.sleep(10);
        }
        throw new AssertionError(name + " did not park in its queue's take within 10 s");
    }

    private static Path taskNamed(final String name) throws IOException
    {
        try (Stream<Path> tasks = Files.list(TASKS))
        {
            return tasks.filter(task ->
            {
                try
                {
                    return Files.readString(task.resolve("comm")).strip().equals(name);
                }
                catch (final IOException gone)
                {
                    return false;
                }
            }).findFirst().orElse(null);
        }
    }

    private static long voluntarySwitches(final Path task) throws IOException
    {
        for (final String line : Files.readAllLines(task.resolve("status")))
        {
            if (line.startsWith("voluntary_ctxt_switches:"))
            {
                return Long.parseLong(line.substring(line.indexOf(':') + 1).strip());
            }
        }
        throw new AssertionError(task + "/status has no voluntary_ctxt_switches line");
    }
}
