package io.kvtier.bench.workload;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

class ThreadsCpuTest
{
    @Test
    void shouldGroupThreadsByTheNamesTheKernelKeeps()
    {
        assertThat(ThreadsCpu.groupOf("kvtier-pipeline")).isEqualTo(ThreadsCpu.ENGINE);
        assertThat(ThreadsCpu.groupOf("kvtier-tier-l3")).isEqualTo(ThreadsCpu.TIER_CALLS);
        assertThat(ThreadsCpu.groupOf("kvtier-posix-l3")).as("a tier's I/O worker, its name cut at 15 bytes").isEqualTo(ThreadsCpu.OTHER_KVTIER);
        assertThat(ThreadsCpu.groupOf("kvtier-pool-gro")).isEqualTo(ThreadsCpu.OTHER_KVTIER);
        assertThat(ThreadsCpu.groupOf("iou-wrk-4242")).isEqualTo(ThreadsCpu.KERNEL_IO);
        assertThat(ThreadsCpu.groupOf("C2 CompilerThre")).isEqualTo(ThreadsCpu.JIT);
        assertThat(ThreadsCpu.groupOf("C1 CompilerThre")).isEqualTo(ThreadsCpu.JIT);
        assertThat(ThreadsCpu.groupOf("GC Thread#0")).isEqualTo(ThreadsCpu.GC);
        assertThat(ThreadsCpu.groupOf("G1 Refine#0")).isEqualTo(ThreadsCpu.GC);
        assertThat(ThreadsCpu.groupOf("java")).isEqualTo(ThreadsCpu.OTHER);
        assertThat(ThreadsCpu.groupOf("kvtier-client-0")).as("kvtier's own, though a demo counts its clients apart")
            .isEqualTo(ThreadsCpu.OTHER_KVTIER);
    }

    @Test
    void shouldReadTheOnCpuNanosecondsOfASchedstatLine()
    {
        // on-CPU ns, run-queue wait ns, time slices
        assertThat(ThreadsCpu.onCpuNanos("123456789 4242 17\n")).isEqualTo(123_456_789L);
    }

    @Test
    void shouldCountTheCpuAThreadUsedBetweenTwoSnapshotsInItsGroup() throws Exception
    {
        Assumptions.assumeTrue(Files.isDirectory(Path.of("/proc/self/task")), "no /proc/self/task here: the snapshots read nothing");
        final ThreadsCpu before = ThreadsCpu.now();
        assertThat(before.isKnown()).isTrue();
        final AtomicLong burned = new AtomicLong();
        // Burns until the JVM counts 300 ms of its CPU, however long a loaded host makes that take: the snapshot must then
        // find it in the engine's group, after the thread has stopped but before it ends (schedstat and the JVM's clock
        // differ by scheduler-tick accounting only).
        final java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        final java.util.concurrent.CountDownLatch burnt = new java.util.concurrent.CountDownLatch(1);
        final Thread thread = Thread.ofPlatform().name("kvtier-pipeline").start(() ->
        {
            final var threads = ManagementFactory.getThreadMXBean();
            long x = 1;
            while (threads.getCurrentThreadCpuTime() < 300_000_000L)
            {
                for (int i = 0; i < 100_000; i++)
                {
                    x = x * 6364136223846793005L + 1442695040888963407L;
                }
            }
            burned.set(threads.getCurrentThreadCpuTime() + (x & 1));
            burnt.countDown();
            try
            {
                release.await();
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        });
        try
        {
            burnt.await();
            final Map<String, Long> used = ThreadsCpu.now().since(before);
            assertThat(used.keySet()).containsExactly(ThreadsCpu.ENGINE, ThreadsCpu.TIER_CALLS, ThreadsCpu.OTHER_KVTIER, ThreadsCpu.KERNEL_IO,
                ThreadsCpu.JIT, ThreadsCpu.GC, ThreadsCpu.OTHER);
            assertThat(used.get(ThreadsCpu.ENGINE)).as("the engine group, against the %d ns the thread burned", burned.get())
                .isBetween(280_000_000L, burned.get() + 20_000_000L);
        }
        finally
        {
            release.countDown();
            thread.join();
        }
    }
}
