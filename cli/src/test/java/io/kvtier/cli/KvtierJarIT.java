package io.kvtier.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.zip.ZipEntry;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The jar {@code ./kvtier} runs ({@code cli/target/kvtier.jar}, built by the shade plugin in
 * {@code package}): it holds the CLI and what it uses, and none of JMH, which stays in
 * {@code bench/target/benchmarks.jar}. Run by failsafe in {@code verify}, after the jar is built.
 */
class KvtierJarIT
{
    private static final Path JAR = Path.of(System.getProperty("kvtier.jar", "target/kvtier.jar"));

    private static List<String> entries() throws IOException
    {
        try (JarFile jar = new JarFile(JAR.toFile()))
        {
            return Collections.list(jar.entries()).stream().map(ZipEntry::getName).toList();
        }
    }

    @Test
    void shouldHoldNoJmhClassesNorTheBenchmarks() throws IOException
    {
        assertThat(entries())
            .as("JMH, its dependencies, bench's benchmarks and JMH's generated lists are not in %s", JAR)
            .noneMatch(name -> name.startsWith("org/openjdk/jmh/"))
            .noneMatch(name -> name.startsWith("io/kvtier/bench/jmh/"))
            .noneMatch(name -> name.contains("jmh_generated"))
            .noneMatch(name -> name.startsWith("joptsimple/"))
            .noneMatch(name -> name.startsWith("org/apache/commons/math3/"))
            .doesNotContain("META-INF/BenchmarkList", "META-INF/CompilerHints");
    }

    @Test
    void shouldHoldTheCommandAndWhatItRuns() throws IOException
    {
        assertThat(entries()).contains("io/kvtier/cli/Main.class", "io/kvtier/bench/replay/TraceReplay.class",
            "io/kvtier/bench/workload/WorkloadRunner.class", "io/kvtier/tier/posix/PosixTierProvider.class",
            "META-INF/services/io.kvtier.spi.StorageTierProvider", "picocli/CommandLine.class",
            // serve's KV events (events.enabled): the publisher, ZMQ and msgpack.
            "io/kvtier/events/EventPublisher.class", "org/zeromq/ZMQ.class", "org/msgpack/core/MessagePack.class");
    }

    @Test
    void shouldRunTheDemoAndATraceReplayFromTheJar(@TempDir final Path dir) throws Exception
    {
        final String demo = run(dir, "demo", "--progress", "never", "--conversations", "12", "--pool-size", "2MiB", "--page-size", "8KiB");
        assertThat(demo).contains("every page read back matched");

        final Path trace = dir.resolve("t.jsonl");
        Files.write(trace, List.of(
            "{\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 1, \"hash_ids\": [1, 2]}",
            "{\"timestamp\": 1, \"input_length\": 1536, \"output_length\": 1, \"hash_ids\": [1, 2, 3]}"));
        final String replay = run(dir, "bench", "replay", "--trace", trace.toString(), "--capacity-tokens", "unbounded", "--runs", "1", "--warmup", "0");
        assertThat(replay).contains("hit rate     0.4000 (2 of 5 blocks)");
    }

    private static String run(final Path dir, final String... args) throws Exception
    {
        final List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "--enable-native-access=ALL-UNNAMED", "-jar", JAR.toString()));
        command.addAll(List.of(args));
        final Path out = Files.createTempFile(dir, "out", ".txt");
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        try
        {
            assertThat(process.waitFor(120, TimeUnit.SECONDS)).as("kvtier %s finished", String.join(" ", args)).isTrue();
            final String output = Files.readString(out);
            assertThat(process.exitValue()).as("kvtier %s said: %s", String.join(" ", args), output).isZero();
            return output;
        }
        finally
        {
            process.destroyForcibly();
        }
    }
}
