package io.kvtier.bench.workload;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The on-CPU time of this process's threads, from {@code /proc/self/task/TID/schedstat} (nanoseconds), in groups a demo
 * reader can weigh against the clients' own: the engine thread, the tiers' call threads, the other kvtier threads (the
 * tiers' I/O workers, pool growth, re-verification), the kernel's io_uring workers that run on this process's behalf,
 * the JIT compilers, the garbage collector and VM thread, and the rest. Two snapshots, before and after a run, give
 * what each group used in it. A thread that ended between the two (an io_uring worker that went idle, say) is not
 * counted: the figures are lower bounds, and a run's clients, which end before its second snapshot, count their own
 * time as they end ({@link #addCurrentThread}).
 */
public final class ThreadsCpu
{
    /** The engine thread. */
    public static final String ENGINE = "engine_thread";
    /** The tiers' call threads. */
    public static final String TIER_CALLS = "tier_call_threads";
    /** Every other thread kvtier named. */
    public static final String OTHER_KVTIER = "other_kvtier_threads";
    /** The kernel's io_uring workers. */
    public static final String KERNEL_IO = "kernel_io_uring_workers";
    /** The JIT compilers. */
    public static final String JIT = "jit_compilers";
    /** The garbage collector and the VM thread. */
    public static final String GC = "gc_and_vm";
    /** Everything else. */
    public static final String OTHER = "other";
    private static final String[] GROUPS = {ENGINE, TIER_CALLS, OTHER_KVTIER, KERNEL_IO, JIT, GC, OTHER};

    private static final Path TASKS = Path.of("/proc/self/task");
    private static final ThreadMXBean JVM_THREADS = ManagementFactory.getThreadMXBean();

    /** Per thread id, its group and on-CPU nanoseconds; empty where /proc cannot be read. */
    private final Map<Long, Sample> threads;

    private record Sample(String group, long nanos)
    {
    }

    private ThreadsCpu(final Map<Long, Sample> threads)
    {
        this.threads = threads;
    }

    /**
     * Adds the calling thread's CPU time, user and system, to a sum that stays -1 once any thread could not tell: for a
     * client thread about to end.
     *
     * @param sum the sum, 0 to begin with
     */
    public static void addCurrentThread(final AtomicLong sum)
    {
        final long nanos = JVM_THREADS.isCurrentThreadCpuTimeSupported() ? JVM_THREADS.getCurrentThreadCpuTime() : -1;
        sum.accumulateAndGet(nanos, (total, more) -> total < 0 || more < 0 ? -1 : total + more);
    }

    /** @return the threads' CPU now; empty (every group 0) where /proc is not there */
    public static ThreadsCpu now()
    {
        final Map<Long, Sample> threads = new HashMap<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS))
        {
            for (final Path task : tasks)
            {
                try
                {
                    // The kernel keeps a thread's first 15 bytes of name.
                    final String name = Files.readString(task.resolve("comm")).strip();
                    final long nanos = onCpuNanos(Files.readString(task.resolve("schedstat")));
                    threads.put(Long.parseLong(task.getFileName().toString()), new Sample(groupOf(name), nanos));
                }
                catch (final IOException | RuntimeException ex)
                {
                    // The thread ended while it was read: it is left out, as one that ended between snapshots is.
                }
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            return new ThreadsCpu(Map.of());
        }
        return new ThreadsCpu(threads);
    }

    /** @return whether the snapshot read any thread (false where /proc is missing) */
    public boolean isKnown()
    {
        return !threads.isEmpty();
    }

    /**
     * @param group one of this class's groups
     * @return the on-CPU nanoseconds of the group's threads alive now, since each started
     */
    public long nanos(final String group)
    {
        long sum = 0;
        for (final Sample sample : threads.values())
        {
            sum += sample.group.equals(group) ? sample.nanos : 0;
        }
        return sum;
    }

    /**
     * @param before a snapshot taken earlier
     * @return per group, in the report's order, the CPU nanoseconds its threads used since {@code before}
     */
    public Map<String, Long> since(final ThreadsCpu before)
    {
        final Map<String, Long> used = new LinkedHashMap<>();
        for (final String group : GROUPS)
        {
            used.put(group, 0L);
        }
        threads.forEach((id, sample) ->
        {
            final Sample earlier = before.threads.get(id);
            used.merge(sample.group, Math.max(0, sample.nanos - (earlier == null ? 0 : earlier.nanos)), Long::sum);
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
        // HotSpot names its compilers "C1 CompilerThread0" and "C2 CompilerThread0".
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
     * @param schedstat a {@code /proc/PID/task/TID/schedstat} line: on-CPU nanoseconds, run-queue wait nanoseconds, time slices
     * @return its first field
     */
    static long onCpuNanos(final String schedstat)
    {
        final String line = schedstat.strip();
        final int space = line.indexOf(' ');
        return Long.parseLong(space < 0 ? line : line.substring(0, space));
    }
}
