package io.kvtier.cli;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The CPU time of this process's threads, from {@code /proc/self/task}, in groups a demo reader can weigh against
 * the clients' own: the engine thread, the tiers' call threads, the other kvtier threads (the tiers' I/O workers,
 * pool growth, re-verification), the kernel's io_uring workers that run on this process's behalf, the JIT compilers,
 * the garbage collector, and the rest. Two snapshots, before and after a run, give what each group used in it.
 * A thread that ended between the two (an io_uring worker that went idle, say) is not counted: the figures are
 * lower bounds. The kernel counts in clock ticks, 10 ms on common kernels.
 */
final class ThreadsCpu
{
    /** The groups, in the order they are reported. */
    static final String ENGINE = "engine_thread";
    static final String TIER_CALLS = "tier_call_threads";
    static final String OTHER_KVTIER = "other_kvtier_threads";
    static final String KERNEL_IO = "kernel_io_uring_workers";
    static final String JIT = "jit_compilers";
    static final String GC = "gc_and_vm";
    static final String OTHER = "other";
    private static final String[] GROUPS = {ENGINE, TIER_CALLS, OTHER_KVTIER, KERNEL_IO, JIT, GC, OTHER};

    private static final Path TASKS = Path.of("/proc/self/task");
    /** USER_HZ, which /proc reports times in: 100 on every Linux architecture kvtier runs on. */
    private static final long NANOS_PER_TICK = 10_000_000L;

    /** Per thread id, its group and CPU ticks; empty where /proc cannot be read. */
    private final Map<Long, Sample> threads;

    private record Sample(String group, long ticks)
    {
    }

    private ThreadsCpu(final Map<Long, Sample> threads)
    {
        this.threads = threads;
    }

    /** @return the threads' CPU now; empty (every group 0) where /proc is not there */
    static ThreadsCpu now()
    {
        final Map<Long, Sample> threads = new HashMap<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS))
        {
            for (final Path task : tasks)
            {
                try
                {
                    final String name = Files.readString(task.resolve("comm")).strip();
                    final long ticks = ticks(Files.readString(task.resolve("stat")));
                    threads.put(Long.parseLong(task.getFileName().toString()), new Sample(groupOf(name), ticks));
                }
                catch (final IOException | RuntimeException ex)
                {
                    // The thread ended while it was read: it is left out, as one that ended between snapshots is.
                }
            }
        }
        catch (final IOException ex)
        {
            return new ThreadsCpu(Map.of());
        }
        return new ThreadsCpu(threads);
    }

    /** @return whether the snapshot read any thread (false where /proc is missing) */
    boolean isKnown()
    {
        return !threads.isEmpty();
    }

    /**
     * @param before a snapshot taken earlier
     * @return per group, in the report's order, the CPU nanoseconds its threads used since {@code before}
     */
    Map<String, Long> since(final ThreadsCpu before)
    {
        final Map<String, Long> used = new LinkedHashMap<>();
        for (final String group : GROUPS)
        {
            used.put(group, 0L);
        }
        threads.forEach((id, sample) ->
        {
            final Sample earlier = before.threads.get(id);
            final long ticks = sample.ticks - (earlier == null ? 0 : earlier.ticks);
            used.merge(sample.group, Math.max(0, ticks) * NANOS_PER_TICK, Long::sum);
        });
        return used;
    }

    /**
     * @param name a thread's name as the kernel keeps it (its first 15 bytes)
     * @return its group
     */
    static String groupOf(final String name)
    {
        if (name.startsWith("kvtier-pipeline"))
        {
            return ENGINE;
        }
        if (name.startsWith("kvtier-tier-"))
        {
            return TIER_CALLS;
        }
        if (name.startsWith("kvtier-"))
        {
            return OTHER_KVTIER;
        }
        if (name.startsWith("iou-wrk-") || name.startsWith("iou-sqp-"))
        {
            return KERNEL_IO;
        }
        final String lower = name.toLowerCase(Locale.ROOT);
        if (lower.startsWith("c1 compiler") || lower.startsWith("c2 compiler"))
        {
            return JIT;
        }
        if (lower.startsWith("gc thread") || lower.startsWith("g1 ") || lower.startsWith("vm thread"))
        {
            return GC;
        }
        return OTHER;
    }

    /**
     * @param stat a {@code /proc/PID/task/TID/stat} line
     * @return its utime plus stime, in clock ticks
     */
    static long ticks(final String stat)
    {
        // The name, in parentheses, may hold spaces and parentheses: the fields are counted after its last ')'.
        final String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        // After the name, the state is field 3 of the line; utime is field 14 and stime field 15.
        return Long.parseLong(fields[14 - 3]) + Long.parseLong(fields[15 - 3]);
    }
}
