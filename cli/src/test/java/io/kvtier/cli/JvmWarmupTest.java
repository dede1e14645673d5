package io.kvtier.cli;

import io.kvtier.client.Namespace;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class JvmWarmupTest
{
    @Test
    void shouldReportAPassThatCannotStartItsEngineAndLeaveNothingBehind(@TempDir final Path dir) throws Exception
    {
        final Set<String> before = DemoCommandTest.warmupDirectories();
        final JvmWarmup warmup = JvmWarmup.run(Map.of("pool.size", "a lot", "pool.page-size", "8KiB", "tier.l3.type", "posix",
                "tier.cold.type", "posix"), dir.resolve("pool"), 4, 7, 1, 16, new Namespace("m", "l", 0, ""), null);
        assertThat(warmup.skipped()).as("the measured run goes on, told why the JVM is cold").startsWith("it failed: ").contains("pool.size");
        assertThat(warmup.toText()).startsWith("jvm warm-up         none: it failed: ");
        final Set<String> after = DemoCommandTest.warmupDirectories();
        after.removeAll(before);
        assertThat(after).as("its temporary L3 directories, removed").isEmpty();
        assertThat(dir.resolve("pool-jvm-warmup")).doesNotExist();
    }

    @Test
    void shouldRunAPassOfItsOwnAndSayWhatItDid(@TempDir final Path dir) throws Exception
    {
        final Set<String> before = DemoCommandTest.warmupDirectories();
        final JvmWarmup warmup = JvmWarmup.run(Map.of("pool.size", "2MiB", "pool.page-size", "8KiB", "tier.l3.type", "posix",
                "tier.cold.type", "posix", "l3.tiers", "l3, cold"), dir.resolve("pool"), 6, 7, 2, 16, new Namespace("m", "l", 0, ""), null);
        assertThat(warmup.skipped()).as("%s", warmup).isNull();
        assertThat(warmup.requests()).as("the workload's requests: 6 conversations of a few turns each").isGreaterThanOrEqualTo(6);
        assertThat(warmup.toText()).containsPattern("^jvm warm-up +[0-9,]+ requests of other seeds \\([1-3] rounds?\\) on an engine of its own");
        final Set<String> after = DemoCommandTest.warmupDirectories();
        after.removeAll(before);
        assertThat(after).as("its temporary L3 directories, removed").isEmpty();
        assertThat(dir.resolve("pool-jvm-warmup")).as("its pool file, removed by the engine's close").doesNotExist();
    }

    /** Compiler CPU readings, one a window, and the windows slept. */
    private static final class FakeCompilers
    {
        private final long[] readings;
        private int next;
        private int slept;

        FakeCompilers(final long... readings)
        {
            this.readings = readings;
        }

        long read()
        {
            return readings[Math.min(next++, readings.length - 1)];
        }
    }

    @Test
    void shouldWaitForTheCompilersUntilAWindowIsQuiet() throws Exception
    {
        // 100 ms of compiler CPU in each of the first three windows, then 5 ms, then nothing.
        final FakeCompilers jit = new FakeCompilers(1_000, 1_100, 1_200, 1_300, 1_305, 1_305);
        final int windows = JvmWarmup.awaitQuietJit(jit::read, millis -> jit.slept++, 250, 10, 20_000);
        assertThat(windows).as("three busy windows, then the quiet one").isEqualTo(4);
        assertThat(jit.slept).isEqualTo(4);
    }

    @Test
    void shouldStopWaitingAtItsLimitWhenTheCompilersNeverGoQuiet() throws Exception
    {
        final long[] busy = new long[200];
        for (int i = 0; i < busy.length; i++)
        {
            busy[i] = 50L * i;
        }
        final FakeCompilers jit = new FakeCompilers(busy);
        assertThat(JvmWarmup.awaitQuietJit(jit::read, millis -> jit.slept++, 250, 10, 2_000)).as("2 s of 250 ms windows").isEqualTo(8);
        assertThat(jit.slept).isEqualTo(8);
    }

    @Test
    void shouldNotWaitWhenTheCompilersTimeIsUnknown() throws Exception
    {
        final FakeCompilers jit = new FakeCompilers(-1);
        assertThat(JvmWarmup.awaitQuietJit(jit::read, millis -> jit.slept++, 250, 10, 20_000)).isEqualTo(-1);
        assertThat(jit.slept).isZero();
    }

    @Test
    void shouldEndThePassAfterARoundThatLeftTheCompilersLittleToDo()
    {
        assertThat(JvmWarmup.compilersQuiet(2_000, 3_000_000_000L)).as("2 s of compiling in a 3 s round: another round").isFalse();
        assertThat(JvmWarmup.compilersQuiet(301, 3_000_000_000L)).as("just over a tenth").isFalse();
        assertThat(JvmWarmup.compilersQuiet(300, 3_000_000_000L)).as("a tenth of the round").isTrue();
        assertThat(JvmWarmup.compilersQuiet(0, 1)).isTrue();
    }
}
