package io.kvtier.bench.workload;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * The CPU time of the calling thread, for the clients of a run to add up as they end: what the workload's own
 * byte work cost, with their waits for the engine (spins and yields count, sleeps do not), beside what the
 * engine's threads cost.
 */
public final class ThreadCpu
{
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private ThreadCpu()
    {
    }

    /** @return the calling thread's CPU time, user and system, in nanoseconds; -1 where the JVM cannot tell */
    public static long currentThreadNanos()
    {
        return THREADS.isCurrentThreadCpuTimeSupported() ? THREADS.getCurrentThreadCpuTime() : -1;
    }
}
