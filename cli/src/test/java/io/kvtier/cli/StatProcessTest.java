package io.kvtier.cli;

import io.kvtier.engine.Engine;
import io.kvtier.engine.config.EngineConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code kvtier stat} as its own process, as an operator runs it beside an engine. */
class StatProcessTest
{
    private static Process java(final Path out, final Class<?> main, final String... args) throws Exception
    {
        final List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"), main.getName()));
        command.addAll(List.of(args));
        return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
    }

    private static String finish(final Process process, final Path out) throws Exception
    {
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).as("process finished; output: %s", Files.readString(out)).isTrue();
        return Files.readString(out);
    }

    private static Path poolPath(final String what)
    {
        return Path.of("/dev/shm/kvtier-stat-" + what + "-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
    }

    @Test
    void shouldReadALiveEnginesCountersFromAnotherProcess(@TempDir final Path dir) throws Exception
    {
        final Path pool = poolPath("live");
        try (Engine engine = Engine.start(EngineConfig.from(Map.of("pool.path", pool.toString(), "pool.size", "1MiB", "pool.page-size", "64KiB"))))
        {
            final Path out = dir.resolve("stat.txt");
            final Process stat = java(out, Main.class, "stat", "--pool", pool.toString(), "--json");
            final String output = finish(stat, out);
            assertThat(stat.exitValue()).as(output).isZero();
            assertThat(output).contains("\"engine_pid\":" + ProcessHandle.current().pid()).contains("\"engine_alive\":true")
                .contains("\"pool_state\":\"open\"").contains("\"epoch\":1");
        }
    }

    @Test
    void shouldSayThatADeadEnginesPoolHasNoEngineAndFollowItsReplacement(@TempDir final Path dir) throws Exception
    {
        final Path pool = poolPath("dead");
        final Path crashOut = dir.resolve("crash.txt");
        final Process crash = java(crashOut, EngineThatDies.class, pool.toString());
        assertThat(finish(crash, crashOut)).contains("ready");
        final long deadPid = crash.pid();

        final Path once = dir.resolve("once.txt");
        final Process snapshot = java(once, Main.class, "stat", "--pool", pool.toString());
        final String text = finish(snapshot, once);
        assertThat(snapshot.exitValue()).as(text).isZero();
        assertThat(text).contains("engine pid " + deadPid + " (not running");

        final Path watched = dir.resolve("watch.txt");
        final Process watch = java(watched, Main.class, "stat", "--pool", pool.toString(), "--json", "--watch", "50ms", "--count", "100");
        try
        {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!Files.readString(watched).contains("\"engine_alive\":false"))
            {
                assertThat(System.nanoTime()).as("the watch prints its first sample").isLessThan(deadline);
                Thread.sleep(20);
            }
            try (Engine engine = Engine.start(EngineConfig.from(Map.of("pool.path", pool.toString(), "pool.size", "1MiB", "pool.page-size", "64KiB"))))
            {
                final String output = finish(watch, watched);
                assertThat(watch.exitValue()).as(output).isZero();
                final List<String> samples = output.lines().filter(line -> line.startsWith("{")).toList();
                assertThat(samples).hasSize(100);
                assertThat(samples.getFirst()).contains("\"engine_pid\":" + deadPid).contains("\"engine_alive\":false").contains("\"epoch\":1");
                assertThat(samples.getLast()).as("the watch followed the new engine's pool")
                    .contains("\"engine_pid\":" + ProcessHandle.current().pid()).contains("\"engine_alive\":true").contains("\"epoch\":2");
            }
        }
        finally
        {
            watch.destroyForcibly();
        }
    }
}
