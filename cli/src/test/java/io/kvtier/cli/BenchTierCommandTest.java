package io.kvtier.cli;

import io.kvtier.bench.ipc.JavaProcesses;
import io.kvtier.bench.tier.FlatJson;
import io.kvtier.bench.tier.MooncakeMasterProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** {@code kvtier bench tier} on tiny runs: argument handling, JSON shape, fio missing (the figures' values are the machine's). */
class BenchTierCommandTest
{
    @Test
    void shouldPrintACaseForEachOpPageSizeAndQueueDepthWithFioColumnsNullWithoutFio(@TempDir final Path dir) throws Exception
    {
        final CliFixture.Result result = CliFixture.run("bench", "tier", "--backend", "posix", "--json", "--dir", dir.toString(),
            "--page-sizes", "8KiB", "--queue-depths", "1,3", "--bytes", "64KiB", "--fio", "/nonexistent/bin/fio",
            "--tier-setting", "io-threads=1", "--tier-setting", "direct-io=false");
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.OK);
        assertThat(result.err()).contains("/nonexistent/bin/fio not found; install it with: ").contains("install -y fio");
        final Map<String, String> json = FlatJson.flatten(result.out());
        assertThat(json).containsEntry("backend", "posix").containsEntry("tier_settings.io-threads", "1")
            .containsEntry("tier_settings.direct-io", "false").containsEntry("tier_settings.fanout-levels", "1")
            .containsEntry("fio_version", null).containsKey("fio_missing")
            .hasEntrySatisfying("caller_wait", wait -> assertThat(wait).contains("polls").contains("yields").contains("parks")).containsEntry("baseline", "fio").containsKey("baseline_missing");
        final String[][] expected = {{"write", "1"}, {"read", "1"}, {"write", "3"}, {"read", "3"}};
        for (int i = 0; i < expected.length; i++)
        {
            final String at = "results." + i + ".";
            assertThat(json).containsEntry(at + "op", expected[i][0]).containsEntry(at + "page_bytes", "8192")
                .containsEntry(at + "queue_depth", expected[i][1]).containsEntry(at + "fio_mb_s", null)
                .containsEntry(at + "fio_iops", null).containsEntry(at + "ratio", null).containsEntry(at + "baseline_mb_s", null);
            assertThat(Double.parseDouble(json.get(at + "kvtier_mb_s"))).as(at + "kvtier_mb_s").isPositive();
            assertThat(Double.parseDouble(json.get(at + "kvtier_iops"))).as(at + "kvtier_iops").isPositive();
        }
        assertThat(json).doesNotContainKey("results.4.op");
        assertThat(json).as("no fio, no goal figures").containsEntry("goal.write.geomean_ratio", null).containsEntry("goal.read.cases", "0")
            .containsEntry("goal_64k.write.geomean_ratio", null).containsEntry("goal_64k.read.cases", "0").containsEntry("goal_64k_ratio", "0.8");
        try (var left = Files.list(dir))
        {
            assertThat(left).as("the run deletes what it made").isEmpty();
        }
    }

    @Test
    void shouldMeasureMooncakeBesideItsCClientInOneTinyRun(@TempDir final Path dir) throws Exception
    {
        // A real install when KVTIER_MOONCAKE_HOME names one, else the project's test double: the bench finds
        // either through that variable, so it runs as its own process with the variable set. The figures are
        // the double's there, and this checks the plumbing, not them.
        final Path home = MooncakeHome.require();
        assumeTrue(onPath("gcc"), "gcc is not on the PATH (apt-get install -y gcc): skipping the Mooncake C baseline");
        final ProcessBuilder bench = JavaProcesses.java(Main.class, "bench", "tier", "--backend", "mooncake", "--json", "--dir", dir.toString(),
            "--page-sizes", "64KiB", "--queue-depths", "2", "--bytes", "256KiB");
        bench.environment().put(MooncakeMasterProcess.HOME_ENV_NAME, home.toString());
        final Path err = Files.createTempFile("bench-tier-mooncake", ".err");
        bench.redirectError(err.toFile());
        final Process process = bench.start();
        final String out;
        try (var in = process.getInputStream())
        {
            out = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
        assertThat(process.waitFor(5, java.util.concurrent.TimeUnit.MINUTES)).as("bench tier ends").isTrue();
        final String stderr = Files.readString(err);
        Files.delete(err);
        assertThat(process.exitValue()).as("stderr: %s", stderr).isEqualTo(ExitCode.OK);
        final Map<String, String> json = FlatJson.flatten(out);
        assertThat(json).containsEntry("backend", "mooncake").containsEntry("baseline", "mooncake-c").containsEntry("baseline_missing", null)
            .containsEntry("tier_settings.global-segment-size", "0").containsEntry("tier_settings.lib", MooncakeMasterProcess.library(home).toString())
            .containsEntry("results.0.fio_mb_s", null);
        assertThat(json.get("baseline_describe")).contains("every page crosses TCP");
        assertThat(json.get("baseline_version")).contains(MooncakeMasterProcess.library(home).toString());
        for (final String at : new String[] {"results.0.", "results.1."})
        {
            assertThat(Double.parseDouble(json.get(at + "baseline_mb_s"))).as(at + "baseline_mb_s").isPositive();
            assertThat(Double.parseDouble(json.get(at + "ratio"))).as(at + "ratio").isPositive();
        }
        try (var left = Files.list(dir))
        {
            assertThat(left).as("the run deletes what it made").isEmpty();
        }
    }

    private static boolean onPath(final String name)
    {
        for (final String entry : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator))
        {
            if (!entry.isEmpty() && Files.isExecutable(Path.of(entry, name)))
            {
                return true;
            }
        }
        return false;
    }

    @Test
    void shouldPrintNotAvailableForFioInText(@TempDir final Path dir)
    {
        final CliFixture.Result result = CliFixture.run("bench", "tier", "--dir", dir.toString(), "--page-sizes", "4KiB", "--queue-depths", "2",
            "--bytes", "16KiB", "--ops", "read", "--no-fio");
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.OK);
        assertThat(result.out()).contains("kvtier MB/s").contains("n/a").contains("read").doesNotContain("write  ");
    }

    @Test
    void shouldListTheProvidersForAnUnknownBackend()
    {
        final CliFixture.Result result = CliFixture.run("bench", "tier", "--backend", "mooncake-not-here", "--no-fio");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("mooncake-not-here").contains("posix");
    }

    @Test
    void shouldReportASettingTheTierRefusesAsAConfigError(@TempDir final Path dir)
    {
        final CliFixture.Result result = CliFixture.run("bench", "tier", "--dir", dir.toString(), "--no-fio", "--page-sizes", "4KiB",
            "--queue-depths", "1", "--bytes", "4KiB", "--tier-setting", "no-such-setting=1");
        assertThat(result.exitCode()).isEqualTo(ExitCode.CONFIG);
        assertThat(result.err()).contains("tier.bench.no-such-setting");
    }

    @Test
    void shouldRefuseBadOpsAndDepths()
    {
        assertThat(CliFixture.run("bench", "tier", "--ops", "trim", "--no-fio").err()).contains("'trim' must be read or write");
        final CliFixture.Result depth = CliFixture.run("bench", "tier", "--queue-depths", "0", "--no-fio");
        assertThat(depth.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(depth.err()).contains("queue depth 0");
    }
}
