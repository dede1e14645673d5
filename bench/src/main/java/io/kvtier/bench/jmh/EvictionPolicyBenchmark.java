package io.kvtier.bench.jmh;

import io.kvtier.engine.eviction.EvictionPolicies;
import io.kvtier.engine.eviction.EvictionPolicy;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.TimeUnit;

/**
 * An eviction policy alone, on the calls an acquire of 64 pooled pages makes on the engine thread: 64 hits, each
 * page's parent the page before it, in a pool of {@code pages} pages (4,096 is the pool of {@link LookupBenchmark}).
 * One operation re-reads one chain of 64 pages, the next of {@code chains} each time. With {@code chains = 1} the
 * chain is the one {@link LookupBenchmark} acquires, whose head the adaptive policy's miniatures sample (a pool of
 * 4,096 pages samples one chain in two, of 65,536 one in 32): its worst case, every hit replayed in four
 * miniatures. With 64 chains the share sampled is about the pool's.
 *
 * <p>{@link #hits} is what a request waits for on an engine thread that never has a moment to spare: the work a
 * policy puts off comes back onto requests when its records are full. {@link #hitsAfterIdleTime} is what it waits
 * for when the engine thread had time before it (the put-off work done before each operation, outside its time, as
 * an engine thread does it between requests). {@link #hitsThenMaintenance} adds the work put off to the operation,
 * done to the end each time: all the CPU the policy spends. LRU, which puts nothing off, is the baseline of all
 * three, in the same run.
 *
 * <p>{@link #hits} and {@link #hitsThenMaintenance} also report the CPU time their thread spent
 * ({@code cpuNanos}, summed over the measured iterations) and the operations it did ({@code operations}): their
 * quotient is the CPU time per operation, which a host whose other work takes the core away inflates far less than
 * the wall-clock score (a busy host gives the same figures for both sides of an interleaved comparison, where the
 * scores' errors exceed them).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xmx1g"})
public class EvictionPolicyBenchmark
{
    private static final int CHAIN = 64;

    /** The policy over its pool, with the chains it holds: a state of its own, so that {@link IdleTime} reaches it. */
    @State(Scope.Thread)
    public static class Pool
    {
        /** The pool's pages. */
        @Param({"4096", "65536"})
        int pages;

        /** The policy, as {@code policy.eviction} names it. */
        @Param({"adaptive", "lru"})
        String policy;

        /** How many chains of 64 pages the operations take in turn. */
        @Param({"1", "64"})
        int chains;

        private EvictionPolicy eviction;
        private int next;

        /** Builds the policy and makes every chain resident, nothing left put off. */
        @Setup
        public void setUp()
        {
            if (chains < 1 || chains * CHAIN > pages)
            {
                throw new IllegalArgumentException("chains=" + chains + " must be between 1 and " + pages / CHAIN);
            }
            eviction = EvictionPolicies.forName(policy, pages);
            for (int c = 0; c < chains; c++)
            {
                for (int i = 0; i < CHAIN; i++)
                {
                    // LookupBenchmark's keys for chain 0, so that its key hashes (high ^ low) are the engine's there.
                    final long high = 0x6B65790000000000L | ((long)c << 16) | i;
                    final long low = i * 0x9E3779B97F4A7C15L;
                    eviction.onInsert(c * CHAIN + i, i == 0 ? EvictionPolicy.NONE : c * CHAIN + i - 1, high ^ low);
                }
            }
            drain();
            requireAllResident();
        }

        /** Checks that every chain is still resident. */
        @TearDown
        public void tearDown()
        {
            drain();
            requireAllResident();
        }

        /** @return the last page hit: the calls one acquire of a chain of 64 pooled pages makes */
        int hits()
        {
            final int first = next * CHAIN;
            next = next + 1 == chains ? 0 : next + 1;
            int parent = EvictionPolicy.NONE;
            for (int page = first; page < first + CHAIN; page++)
            {
                eviction.onAccess(page, parent);
                parent = page;
            }
            return parent;
        }

        /** Does all the work the policy left for later: an unbounded budget leaves nothing. */
        void drain()
        {
            eviction.maintain(Integer.MAX_VALUE);
        }

        private void requireAllResident()
        {
            int walked = 0;
            for (int page = eviction.first(); page != EvictionPolicy.NONE; page = eviction.next(page))
            {
                walked++;
            }
            if (walked != chains * CHAIN)
            {
                throw new IllegalStateException("the " + policy + " policy walks " + walked + " pages; " + chains * CHAIN + " are resident");
            }
        }
    }

    /**
     * The engine thread's idle time before a request: whatever the policy put off is done before each invocation of
     * {@link #hitsAfterIdleTime}, outside its time (a state of its own, so that the other benchmarks get none). It holds
     * the pool that benchmark hits, since JMH hands a fixture a {@link Pool} of its own rather than the benchmark's.
     */
    @State(Scope.Thread)
    public static class IdleTime
    {
        private Pool pool;

        /**
         * @param policy the policy over its pool, set up
         */
        @Setup
        public void attach(final Pool policy)
        {
            pool = policy;
        }

        /** Lets the policy do everything it put off. */
        @Setup(Level.Invocation)
        public void idle()
        {
            pool.drain();
        }
    }

    /**
     * The CPU time the benchmark's thread spends in each measured iteration, and the operations it does: JMH reports
     * both summed over the iterations.
     */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class CpuTime
    {
        private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

        /** Nanoseconds of this thread's CPU time in the iteration. */
        public long cpuNanos;

        /** Operations in the iteration. */
        public long operations;

        private long start;

        /** Starts the iteration's count. */
        @Setup(Level.Iteration)
        public void begin()
        {
            cpuNanos = 0;
            operations = 0;
            start = THREADS.getCurrentThreadCpuTime();
        }

        /** Ends it: the fixture runs on the benchmark's thread, after its last operation. */
        @TearDown(Level.Iteration)
        public void end()
        {
            cpuNanos = THREADS.getCurrentThreadCpuTime() - start;
        }
    }

    /**
     * @param pool the policy
     * @param cpu  counts the CPU time and operations
     * @return the last page hit: the calls one acquire of a chain of 64 pooled pages makes
     */
    @Benchmark
    public int hits(final Pool pool, final CpuTime cpu)
    {
        cpu.operations++;
        return pool.hits();
    }

    /**
     * @param idleTime the policy, given idle time before each invocation
     * @return the last page hit: the calls one acquire makes, after idle time in which the policy did what it put off
     */
    @Benchmark
    public int hitsAfterIdleTime(final IdleTime idleTime)
    {
        return idleTime.pool.hits();
    }

    /**
     * @param pool the policy
     * @param cpu  counts the CPU time and operations
     * @return the last page hit, after the policy did all the work it left for later
     */
    @Benchmark
    public int hitsThenMaintenance(final Pool pool, final CpuTime cpu)
    {
        cpu.operations++;
        final int last = pool.hits();
        pool.drain();
        return last;
    }
}
