package io.kvtier.cli;

import io.kvtier.bench.workload.WorkloadReport;
import io.kvtier.engine.config.ConfigException;
import io.kvtier.engine.pool.PoolOwnedException;
import io.kvtier.spi.TierConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The exit codes the README documents that only a failure produces: 1, 5 and 130. */
class ExitCodesTest
{
    /** A command that throws what it is given, as a command whose engine, tier or file failed would. */
    @CommandLine.Command(name = "explode")
    static final class Explode implements Callable<Integer>
    {
        private final Exception failure;

        Explode(final Exception failure)
        {
            this.failure = failure;
        }

        @Override
        public Integer call() throws Exception
        {
            throw failure;
        }
    }

    private static CliFixture.Result explode(final Exception failure)
    {
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final CommandLine commandLine = Main.commandLine(new PrintWriter(out, true), new PrintWriter(err, true));
        commandLine.addSubcommand("explode", new Explode(failure));
        commandLine.getSubcommands().get("explode").setErr(new PrintWriter(err, true));
        final int code = commandLine.execute("explode");
        return new CliFixture.Result(code, out.toString(), err.toString());
    }

    @Test
    void shouldExitWithOneOnAnUnexpectedFailure()
    {
        final CliFixture.Result result = explode(new IllegalStateException("an engine bug, say"));
        assertThat(result.exitCode()).isEqualTo(ExitCode.FAILURE);
        assertThat(result.err()).startsWith("kvtier: failed: java.lang.IllegalStateException: an engine bug, say")
            .as("an unexpected failure shows where it happened").contains("\tat io.kvtier.cli.ExitCodesTest.");
    }

    @Test
    void shouldMapEachExpectedFailureToItsExitCodeAndOneLine()
    {
        final CliFixture.Result config = explode(new ConfigException("pool.size", "invalid pool.size = \"12XB\": expected a size"));
        assertThat(config.exitCode()).isEqualTo(ExitCode.CONFIG);
        assertThat(config.err()).isEqualTo("kvtier: configuration rejected: invalid pool.size = \"12XB\": expected a size" + System.lineSeparator());

        final CliFixture.Result tier = explode(new TierConfigException("tier.a.dir", "missing setting tier.a.dir"));
        assertThat(tier.exitCode()).isEqualTo(ExitCode.CONFIG);
        assertThat(tier.err()).isEqualTo("kvtier: configuration rejected: missing setting tier.a.dir" + System.lineSeparator());

        final CliFixture.Result owned = explode(new PoolOwnedException("pool /dev/shm/p is owned by a live engine (pid 7)"));
        assertThat(owned.exitCode()).isEqualTo(ExitCode.UNAVAILABLE);
        assertThat(owned.err()).isEqualTo("kvtier: pool /dev/shm/p is owned by a live engine (pid 7)" + System.lineSeparator());

        final CliFixture.Result io = explode(new NoSuchFileException("/dev/shm/x"));
        assertThat(io.exitCode()).isEqualTo(ExitCode.UNAVAILABLE);
        assertThat(io.err()).isEqualTo("kvtier: NoSuchFileException: /dev/shm/x" + System.lineSeparator());

        final CliFixture.Result interrupted = explode(new InterruptedException());
        assertThat(interrupted.exitCode()).isEqualTo(ExitCode.INTERRUPTED);
        assertThat(interrupted.err()).isEqualTo("kvtier: interrupted" + System.lineSeparator());
        assertThat(Thread.interrupted()).as("the interrupt is kept for whoever runs the command").isTrue();
    }

    @Test
    void shouldGivePicocliTheSameCodesThroughItsExitCodeMapper()
    {
        final CommandLine.IExitCodeExceptionMapper mapper = Main.commandLine(new PrintWriter(new StringWriter()), new PrintWriter(new StringWriter()))
            .getExitCodeExceptionMapper();
        assertThat(mapper.getExitCode(new ConfigException("k", "m"))).isEqualTo(ExitCode.CONFIG);
        assertThat(mapper.getExitCode(new TierConfigException("k", "m"))).isEqualTo(ExitCode.CONFIG);
        assertThat(mapper.getExitCode(new PoolOwnedException("m"))).isEqualTo(ExitCode.UNAVAILABLE);
        assertThat(mapper.getExitCode(new IOException("m"))).isEqualTo(ExitCode.UNAVAILABLE);
        assertThat(mapper.getExitCode(new InterruptedException())).isEqualTo(ExitCode.INTERRUPTED);
        assertThat(mapper.getExitCode(new IllegalArgumentException("m"))).isEqualTo(ExitCode.FAILURE);
        assertThat(mapper.getExitCode(new OutOfMemoryError())).isEqualTo(ExitCode.FAILURE);
    }

    @Test
    void shouldExitWithFiveWhenADemoPageReadBackWrong()
    {
        final WorkloadReport clean = report(0);
        final WorkloadReport corrupt = report(1);
        assertThat(DemoCommand.exitCode(clean)).isEqualTo(ExitCode.OK);
        assertThat(DemoCommand.exitCode(corrupt)).isEqualTo(ExitCode.CORRUPT);
    }

    private static WorkloadReport report(final long corrupt)
    {
        return new WorkloadReport(10, 1, 100, 90, 10, 5, 100 - corrupt, corrupt, 0, 4096, 1_000_000, 1, 2, 3, 4, java.util.Map.of(),
            java.util.Map.of());
    }

    @Test
    void shouldExitWithOneHundredThirtyOnSigintAndLeaveNoPoolBehind(@TempDir final Path dir) throws Exception
    {
        final Path out = dir.resolve("demo.txt");
        final Process demo = startDemo(out, "--progress", "always", "--no-jvm-warmup");
        final Path pool = Path.of("/dev/shm/kvtier-demo-" + demo.pid());
        try
        {
            interruptOnce(demo, out, "the demo starts", () -> Files.exists(pool) && Files.readString(out).contains("requests"));
            assertThat(demo.exitValue()).isEqualTo(ExitCode.INTERRUPTED);
            assertThat(pool).as("the pool file was removed on the way out").doesNotExist();
        }
        finally
        {
            demo.destroyForcibly();
            Files.deleteIfExists(pool);
        }
    }

    @Test
    void shouldLeaveNeitherPoolNorTemporaryTierBehindWhenSigintComesDuringTheJvmWarmup(@TempDir final Path dir) throws Exception
    {
        final java.util.Set<String> before = DemoCommandTest.warmupDirectories();
        final Path out = dir.resolve("demo.txt");
        final Process demo = startDemo(out, "--progress", "never");
        final Path warmupPool = Path.of("/dev/shm/kvtier-demo-" + demo.pid() + "-jvm-warmup");
        try
        {
            interruptOnce(demo, out, "the warm-up's engine starts", () -> Files.exists(warmupPool));
            assertThat(demo.exitValue()).as("it said: %s", Files.readString(out)).isEqualTo(ExitCode.INTERRUPTED);
            assertThat(warmupPool).as("the warm-up's pool file was removed on the way out").doesNotExist();
            assertThat(Path.of("/dev/shm/kvtier-demo-" + demo.pid())).as("the measured engine never started").doesNotExist();
            final java.util.Set<String> left = DemoCommandTest.warmupDirectories();
            left.removeAll(before);
            assertThat(left).as("the warm-up's temporary L3 directories, removed").isEmpty();
        }
        finally
        {
            demo.destroyForcibly();
            Files.deleteIfExists(warmupPool);
        }
    }

    /** A condition read from the running demo's files. */
    private interface Ready
    {
        boolean now() throws java.io.IOException;
    }

    /** Starts a demo of 100,000 conversations in a JVM of its own, its output in {@code out}. */
    private static Process startDemo(final Path out, final String... options) throws java.io.IOException
    {
        final List<String> command = new java.util.ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"), Main.class.getName(), "demo"));
        command.addAll(List.of(options));
        command.addAll(List.of("--conversations", "100000"));
        return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
    }

    /** Waits up to a minute for the demo to be ready, sends it SIGINT, and waits for it to end. */
    private static void interruptOnce(final Process demo, final Path out, final String what, final Ready ready) throws Exception
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!ready.now())
        {
            assertThat(demo.isAlive()).as("the demo runs; it said: %s", Files.readString(out)).isTrue();
            assertThat(System.nanoTime()).as(what).isLessThan(deadline);
            Thread.sleep(20);
        }
        final Process kill = new ProcessBuilder("kill", "-INT", Long.toString(demo.pid())).start();
        assertThat(kill.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(demo.waitFor(60, TimeUnit.SECONDS)).as("the demo stops on SIGINT").isTrue();
    }
}
