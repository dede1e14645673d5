package io.kvtier.bench.jmh;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * What one read of the clock costs the engine thread, which reads it on its duty cycles and for its requests
 * ({@code docs/PERFORMANCE.md}, IPC round trips, round twelve): {@link System#nanoTime()} against, in the same run,
 * a read of a volatile field, the least a cycle that looks at anything shared pays.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ClockReadBenchmark
{
    private volatile long word = 42;

    /** @return the system's monotonic clock, as the engine reads it */
    @Benchmark
    public long nanoTime()
    {
        return System.nanoTime();
    }

    /** @return a volatile field: the baseline */
    @Benchmark
    public long baselineVolatileRead()
    {
        return word;
    }
}
