package io.kvtier.bench.tier;

import io.kvtier.spi.TierCapability;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The plumbing of the bench's baselines: which baseline a backend gets, the C program's report read
 * from a line captured on this project's machine, the JSON's baseline fields. Compiling the C program
 * needs gcc and a Mooncake install and skips without them; nothing here starts a master.
 */
class MooncakeBaselineTest
{
    /** A client's stdout, captured from {@code mooncake_baseline client 127.0.0.1:50991 write 1048576 128 16 256 00000000000000a1}. */
    private static final String CAPTURED = "{\"op\":\"write\",\"page_bytes\":1048576,\"pages\":128,\"queue_depth\":16,\"batch\":16,\"bytes\":134217728,"
        + "\"nanos\":274225479,\"failures\":0,\"first_error\":0,\"mismatched\":0}\n";

    private static TierBenchmark.Plan plan(final String backend, final Map<String, String> settings, final Path dir, final String compiler)
    {
        return new TierBenchmark.Plan(backend, settings, dir, List.of(1L << 20), List.of(1, 16), 64L << 20, List.of("write", "read"), 1, 256,
            "/nonexistent/bin/fio", compiler);
    }

    @Test
    void shouldReadTheCapturedReport() throws IOException
    {
        final MooncakeBaseline.Report report = MooncakeBaseline.parse(CAPTURED);
        assertThat(report).isEqualTo(new MooncakeBaseline.Report("write", 1048576, 128, 16, 16, 134217728, 274225479, 0, 0, 0));
        assertThat(report.figures().bytesPerSecond()).isCloseTo(134217728 / 0.274225479, within(1.0));
        assertThat(report.figures().iops()).isCloseTo(128 / 0.274225479, within(0.01));
        assertThat(MooncakeBaseline.parse("a stray line\n" + CAPTURED)).as("lines before the report are skipped").isEqualTo(report);
    }

    @Test
    void shouldRefuseOutputWithoutAWholeReport()
    {
        assertThatThrownBy(() -> MooncakeBaseline.parse("mooncake_store_setup returned -1\n")).isInstanceOf(IOException.class)
            .hasMessageContaining("no report");
        assertThatThrownBy(() -> MooncakeBaseline.parse("{\"op\":\"read\",\"pages\":3}")).isInstanceOf(IOException.class)
            .hasMessageContaining("lacks page_bytes");
        assertThatThrownBy(() -> MooncakeBaseline.parse("{\"op\":")).isInstanceOf(IOException.class).hasMessageContaining("invalid JSON");
    }

    @Test
    void shouldGiveDirectoryBackendsFio(@TempDir final Path dir) throws Exception
    {
        try (Baseline baseline = TierBenchmark.baselineFor(plan("posix", Map.of(), dir, "gcc"), dir))
        {
            assertThat(baseline).isInstanceOf(Fio.class);
            assertThat(baseline.name()).isEqualTo("fio");
            assertThat(baseline.missing()).hasValueSatisfying(reason -> assertThat(reason).contains("/nonexistent/bin/fio not found"));
            assertThat(baseline.tierSettings()).isEmpty();
        }
    }

    @Test
    void shouldGiveMooncakeItsCClientAndPutTheTierInItsTopology(@TempDir final Path dir) throws Exception
    {
        // A named master: nothing is started, and without a compiler nothing is built.
        try (Baseline baseline = TierBenchmark.baselineFor(plan("mooncake", Map.of("master", "10.0.0.5:50051"), dir, null), dir))
        {
            assertThat(baseline).isInstanceOf(MooncakeBaseline.class);
            assertThat(baseline.name()).isEqualTo("mooncake-c");
            assertThat(baseline.missing()).hasValue("not asked for (--no-baseline)");
            assertThat(baseline.tierSettings()).as("a client without a segment, like the C client").containsEntry("global-segment-size", "0");
            assertThat(baseline.describe()).contains("master=10.0.0.5:50051").contains("hold none");
            assertThat(((MooncakeBaseline)baseline).masterAddress()).isEqualTo("10.0.0.5:50051");
        }
    }

    @Test
    void shouldCompileTheCProgramAgainstTheInstall(@TempDir final Path dir) throws Exception
    {
        // The real install KVTIER_MOONCAKE_HOME names, else the project's test double laid out as one: the C
        // program compiles and links the same way against either.
        final Map<String, String> env = new HashMap<>(System.getenv());
        final Path home = MooncakeBaseline.findHome(env).orElseGet(MooncakeBaselineTest::testDoubleHome);
        assumeTrue(Files.isRegularFile(home.resolve("include/store_c.h")), "no Mooncake install with include/store_c.h at " + home
            + ": set KVTIER_MOONCAKE_HOME, or let plugins/mooncake's build lay out the project's test double (it needs gcc and make)");
        assumeTrue(onPath("gcc"), "gcc is not on the PATH (apt-get install -y gcc): skipping the compile");
        env.put(MooncakeMasterProcess.HOME_ENV_NAME, home.toString());
        try (MooncakeBaseline baseline = MooncakeBaseline.start(Map.of("master", "127.0.0.1:1"), "gcc", 1L << 30, dir, env))
        {
            assertThat(baseline.missing()).as("compiled").isEmpty();
            assertThat(baseline.version()).contains("gcc").contains("libmooncake_store.so");
            assertThat(dir.resolve("mooncake_baseline")).isExecutable();
        }
    }

    @Test
    void shouldSayWhyWhenTheCompilerIsMissing(@TempDir final Path dir) throws Exception
    {
        try (MooncakeBaseline baseline = MooncakeBaseline.start(Map.of("master", "127.0.0.1:1"), "/nonexistent/bin/gcc", 1L << 30, dir,
            System.getenv()))
        {
            // Without an install the reason is the install; with one, the compiler.
            assertThat(baseline.missing()).hasValueSatisfying(reason -> assertThat(reason).containsAnyOf("/nonexistent/bin/gcc", "KVTIER_MOONCAKE_HOME"));
        }
    }

    @Test
    void shouldPrintTheBaselineForEveryBackendAndFioOnlyForFio(@TempDir final Path dir)
    {
        final TierBenchmark.Case c = new TierBenchmark.Case("write", 1 << 20, 16, 64, 100_000_000L, new Baseline.Figures(1e9, 953.7), 0.671);
        final TierBenchmark.Result mooncake = new TierBenchmark.Result(plan("mooncake", Map.of(), dir, "gcc"), Map.of("global-segment-size", "0"),
            Set.of(TierCapability.SHARED), "", "mooncake-c", "topology: three processes", "gcc 12.2.0", null, List.of(c));
        final Map<String, String> json = FlatJson.flatten(mooncake.toJson());
        assertThat(json).containsEntry("baseline", "mooncake-c").containsEntry("baseline_describe", "topology: three processes")
            .containsEntry("baseline_version", "gcc 12.2.0").containsEntry("baseline_missing", null).containsEntry("fio_version", null)
            .containsEntry("results.0.baseline_mb_s", "1000.0").containsEntry("results.0.baseline_iops", "953.7")
            .containsEntry("results.0.fio_mb_s", null).containsEntry("results.0.fio_iops", null).containsEntry("results.0.ratio", "0.671")
            .containsEntry("results.0.kvtier_mb_s", "671.1");
        assertThat(json.get("fio_missing")).contains("mooncake-c");

        final TierBenchmark.Result posix = new TierBenchmark.Result(plan("posix", Map.of(), dir, "gcc"), Map.of(), Set.of(), "", "fio", Fio.JOB_DESCRIPTION,
            "fio-3.33", null, List.of(c));
        assertThat(FlatJson.flatten(posix.toJson())).containsEntry("baseline", "fio").containsEntry("fio_version", "fio-3.33")
            .containsEntry("results.0.fio_mb_s", "1000.0").containsEntry("results.0.baseline_mb_s", "1000.0");
    }

    /** @return where plugins/mooncake's build lays out the project's Mooncake Store test double as an install */
    static Path testDoubleHome()
    {
        Path dir = Path.of("").toAbsolutePath();
        while (dir.getParent() != null && !Files.isRegularFile(dir.resolve("mvnw")))
        {
            dir = dir.getParent();
        }
        return dir.resolve("plugins/mooncake/fake/build/install");
    }

    private static boolean onPath(final String name)
    {
        for (final String entry : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
        {
            if (!entry.isEmpty() && Files.isExecutable(Path.of(entry, name)))
            {
                return true;
            }
        }
        return false;
    }
}
