package io.kvtier.bench.jmh;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.BenchmarkList;
import org.openjdk.jmh.runner.BenchmarkListEntry;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.format.OutputFormatFactory;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.VerboseMode;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Runs every JMH benchmark of this package once, in this JVM, through JMH's own runner, so that a
 * benchmark whose setup is broken, or whose operation no longer does what it claims (each checks its
 * result and throws), fails the build instead of a later measurement. The benchmarks come from the
 * {@code BenchmarkList} that JMH's annotation processor generated, the list {@code benchmarks.jar} runs.
 *
 * <p>One invocation each (single-shot mode, no warm-up, no fork) and the first value of every
 * {@code @Param}, except those of {@link #overrides()}: the trace of {@link ReplayBenchmark} is a small
 * generated one, so the test needs nothing beside the checkout. No figure is looked at.
 */
class BenchmarksRunOnceTest
{
    /**
     * Another session's JMH run holds JMH's lock for its whole run: wait for it rather than force it, but
     * give up, with JMH's own message, well before surefire's 10-minute limit kills the fork unexplained.
     */
    private static final long LOCK_WAIT_NANOS = TimeUnit.MINUTES.toNanos(5);
    private static final String LOCK_HELD = "Unable to acquire the JMH lock";
    private static final String PACKAGE = BenchmarksRunOnceTest.class.getPackageName() + ".";

    @TempDir
    static Path dir;

    private static Path trace;
    /** Over all the runs of the class, so that the wait stays bounded however often the lock is taken. */
    private static long lockWaitedNanos;

    @BeforeAll
    static void writeTrace() throws IOException
    {
        // 300 requests over 7 shared prefixes of 10 blocks, each with 5 blocks of its own: hits and misses
        // at every capacity, and evictions at the smallest (1e5 tokens is 195 blocks).
        final String text = IntStream.range(0, 300)
            .mapToObj(r ->
            {
                final String ids = Stream.concat(
                        IntStream.range(0, 10).mapToObj(k -> String.valueOf(r % 7 * 100 + k)),
                        IntStream.range(0, 5).mapToObj(k -> String.valueOf(1000 + r * 5 + k)))
                    .collect(Collectors.joining(", ", "[", "]"));
                return "{\"timestamp\": " + r + ", \"input_length\": " + 15 * 512 + ", \"output_length\": 1, \"hash_ids\": " + ids + "}";
            })
            .collect(Collectors.joining("\n", "", "\n"));
        trace = Files.writeString(dir.resolve("trace.jsonl"), text);
    }

    private static List<BenchmarkListEntry> benchmarks()
    {
        return BenchmarkList.defaultList().getAll(OutputFormatFactory.createFormatInstance(System.out, VerboseMode.SILENT), List.of()).stream()
            .filter(entry -> entry.getUsername().startsWith(PACKAGE))
            .sorted()
            .toList();
    }

    /**
     * Parameters that differ from a benchmark's first value: the generated trace, and tmpfs for a benchmark
     * whose files go under a {@code root} directory (the POSIX tier's write benchmark), where making and
     * removing its 65,792 fan-out directories takes a second instead of 10 to 20 s on a disk, per method.
     */
    private static Map<String, String> overrides()
    {
        return Map.of("trace", trace.toString(), "root", "/dev/shm");
    }

    /** Options that run one benchmark (a method, or a group of methods) exactly once, in this JVM. */
    private static ChainedOptionsBuilder once(final BenchmarkListEntry benchmark, final Map<String, String> overrides)
    {
        final ChainedOptionsBuilder options = new OptionsBuilder()
            .include("^" + Pattern.quote(benchmark.getUsername()) + "$")
            .forks(0)
            .mode(Mode.SingleShotTime)
            .warmupIterations(0)
            .measurementIterations(1)
            .measurementBatchSize(1)
            .shouldFailOnError(true)
            .verbosity(VerboseMode.SILENT);
        if (benchmark.getParams().hasValue())
        {
            for (final Map.Entry<String, String[]> param : benchmark.getParams().get().entrySet())
            {
                final String value = overrides.getOrDefault(param.getKey(), param.getValue().length > 0 ? param.getValue()[0] : null);
                if (value != null)
                {
                    options.param(param.getKey(), value);
                }
            }
        }
        return options;
    }

    private static void run(final ChainedOptionsBuilder options) throws RunnerException
    {
        while (true)
        {
            try
            {
                final Collection<RunResult> results = new Runner(options.build()).run();
                // Not a figure: only that the run found its benchmark and completed an operation.
                assertThat(results).as("results of one run").hasSize(1);
                assertThat(results.iterator().next().getPrimaryResult().getStatistics().getN()).as("operations measured").isPositive();
                return;
            }
            catch (final RunnerException ex)
            {
                if (ex.getMessage() == null || !ex.getMessage().contains(LOCK_HELD) || lockWaitedNanos > LOCK_WAIT_NANOS)
                {
                    throw ex;
                }
                final long start = System.nanoTime();
                LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(1));
                lockWaitedNanos += System.nanoTime() - start;
            }
        }
    }

    /** Runs it, and on failure says which benchmark failed and what it threw. */
    private static void runOnce(final BenchmarkListEntry benchmark, final Map<String, String> overrides)
    {
        try
        {
            run(once(benchmark, overrides));
        }
        catch (final RunnerException ex)
        {
            throw new AssertionError(name(benchmark) + " failed: " + thrownByBenchmark(ex), ex);
        }
    }

    private static String name(final BenchmarkListEntry benchmark)
    {
        return benchmark.getUsername().substring(PACKAGE.length());
    }

    /** JMH reports what a benchmark threw as a cause or a suppressed exception of its own exceptions. */
    private static Throwable thrownByBenchmark(final Throwable thrown)
    {
        final ArrayDeque<Throwable> pending = new ArrayDeque<>(List.of(thrown));
        while (!pending.isEmpty())
        {
            final Throwable next = pending.poll();
            if (!next.getClass().getName().startsWith("org.openjdk.jmh."))
            {
                return next;
            }
            pending.addAll(List.of(next.getSuppressed()));
            if (next.getCause() != null)
            {
                pending.add(next.getCause());
            }
        }
        return thrown;
    }

    @Test
    void shouldFindTheBenchmarksOfThisPackage()
    {
        assertThat(benchmarks()).extracting(BenchmarkListEntry::getUserClassQName)
            .contains(LookupBenchmark.class.getName(), LoadBenchmark.class.getName(), ReplayBenchmark.class.getName(),
                CommitInterferenceBenchmark.class.getName());
    }

    @TestFactory
    Stream<DynamicTest> shouldRunEveryBenchmarkOnceWithoutFailingItsChecks()
    {
        return benchmarks().stream()
            .map(benchmark -> DynamicTest.dynamicTest(name(benchmark), () -> runOnce(benchmark, overrides())));
    }

    @Test
    void shouldFailWhenABenchmarkFails()
    {
        final BenchmarkListEntry parse = benchmarks().stream()
            .filter(entry -> entry.getUsername().equals(ReplayBenchmark.class.getName() + ".parse"))
            .findFirst().orElseThrow();
        // A setup that throws stands for any failure inside the run: what matters is that it reaches the test.
        final Path missing = dir.resolve("no-such-trace.jsonl");
        assertThatThrownBy(() -> runOnce(parse, Map.of("trace", missing.toString())))
            .isInstanceOf(AssertionError.class)
            .hasMessageStartingWith("ReplayBenchmark.parse failed: ")
            .hasMessageContaining(missing.toString());
    }
}
