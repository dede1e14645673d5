package io.kvtier.cli;

import io.kvtier.bench.workload.WorkloadReport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The exit codes the README documents that only a failure produces: 1, 5 and 130. */
class ExitCodesTest
{
    @CommandLine.Command(name = "explode")
    static final class Explode implements Callable<Integer>
    {
        @Override
        public Integer call()
        {
            throw new IllegalStateException("an engine bug, say");
        }
    }

    @Test
    void shouldExitWithOneOnAnUnexpectedFailure()
    {
        final StringWriter err = new StringWriter();
        final CommandLine commandLine = Main.commandLine(new PrintWriter(new StringWriter(), true), new PrintWriter(err, true));
        commandLine.addSubcommand("explode", new Explode());
        commandLine.getSubcommands().get("explode").setErr(new PrintWriter(err, true));
        assertThat(commandLine.execute("explode")).isEqualTo(ExitCode.FAILURE);
        assertThat(err.toString()).contains("an engine bug, say");
        assertThat(Failures.report(new IllegalStateException("x"), new PrintWriter(new StringWriter()))).isEqualTo(ExitCode.FAILURE);
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
        final Process demo = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"), Main.class.getName(),
            "demo", "--progress", "always", "--conversations", "100000"))
            .redirectErrorStream(true).redirectOutput(out.toFile()).start();
        final Path pool = Path.of("/dev/shm/kvtier-demo-" + demo.pid());
        try
        {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!Files.exists(pool) || !Files.readString(out).contains("requests"))
            {
                assertThat(demo.isAlive()).as("the demo runs; it said: %s", Files.readString(out)).isTrue();
                assertThat(System.nanoTime()).as("the demo starts").isLessThan(deadline);
                Thread.sleep(20);
            }
            final Process kill = new ProcessBuilder("kill", "-INT", Long.toString(demo.pid())).start();
            assertThat(kill.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(demo.waitFor(60, TimeUnit.SECONDS)).as("the demo stops on SIGINT").isTrue();
            assertThat(demo.exitValue()).isEqualTo(ExitCode.INTERRUPTED);
            assertThat(pool).as("the pool file was removed on the way out").doesNotExist();
        }
        finally
        {
            demo.destroyForcibly();
            Files.deleteIfExists(pool);
        }
    }
}
