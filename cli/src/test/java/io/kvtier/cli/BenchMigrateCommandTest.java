package io.kvtier.cli;

import io.kvtier.bench.tier.FlatJson;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code kvtier bench migrate} on tiny runs: the JSON's shape, both figures beside their baselines, the run's own checks (the
 * figures' values are the machine's).
 */
class BenchMigrateCommandTest
{
    @Test
    void shouldReportMigrationAndForegroundFiguresBesideTheirBaselinesAndVerifyEveryPage(@TempDir final Path fast, @TempDir final Path slow)
        throws Exception
    {
        final CliFixture.Result result = CliFixture.run("bench", "migrate", "--json", "--fast-dir", fast.toString(), "--slow-dir", slow.toString(),
            "--page-size", "8KiB", "--pages", "40", "--runs", "2", "--concurrency", "4", "--requests", "300", "--request-pages", "4",
            "--background-pages", "60", "--tier-setting", "io-threads=1");
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.OK);
        final Map<String, String> json = FlatJson.flatten(result.out());
        assertThat(json).containsEntry("bench", "migrate").containsEntry("page_bytes", "8192").containsEntry("file_bytes", "12288")
            .containsEntry("tier_settings.io-threads", "1").containsEntry("pages", "40").containsEntry("background_pages", "60").containsEntry("concurrency", "4").containsEntry("fsync", "false");
        assertThat(json.get("throughput.baseline")).contains("raw copy").contains("rename");
        for (final String figure : new String[] {"throughput.migration.mib_s", "throughput.migration.pages_s", "throughput.raw_copy_1_thread.mib_s",
            "throughput.raw_copy_concurrent.mib_s", "throughput.ratio", "throughput.ratio_1_thread", "foreground.without_migration.p99_ns",
            "foreground.with_migration.p99_ns", "foreground.without_migration.p50_ns", "foreground.with_migration.max_ns", "foreground.p99_ratio"})
        {
            assertThat(Double.parseDouble(json.get(figure))).as(figure).isPositive();
            assertThat(Double.parseDouble(json.get(figure + "_range.0"))).as(figure + "'s range").isPositive()
                .isLessThanOrEqualTo(Double.parseDouble(json.get(figure + "_range.1")));
        }
        assertThat(json).containsEntry("foreground.baseline", "without_migration").containsEntry("foreground.without_migration.requests", "300")
            .containsEntry("foreground.with_migration.requests", "300");
        assertThat(json).containsEntry("rounds.0.migration_first", "true").containsEntry("rounds.1.migration_first", "false")
            .containsEntry("rounds.1.background_pages", "60").doesNotContainKey("rounds.2.run");
        // Two runs, each migrating a set of 40 for the throughput and one of 60 under the foreground loop, every page read back from slow.
        assertThat(json).containsEntry("check.pages_asked", "200").containsEntry("check.pages_migrated", "200")
            .containsEntry("check.migration_failures", "0").containsEntry("check.pages_read_back", "200").containsEntry("check.pages_missing", "0")
            .containsEntry("check.pages_corrupt", "0").containsEntry("check.l3_corrupt", "0").containsEntry("check.pages_verified", "true")
            .doesNotContainKey("check.refusals.target_full").doesNotContainKey("check.problems.0");
        assertThat(Long.parseLong(json.get("check.slow_tier_hits"))).isGreaterThanOrEqualTo(200);
        for (final Path dir : new Path[] {fast, slow})
        {
            try (var left = Files.list(dir))
            {
                assertThat(left).as("the run deletes what it made in %s", dir).isEmpty();
            }
        }
    }

    @Test
    void shouldRefuseABadPageSizeNamingTheOption()
    {
        final CliFixture.Result result = CliFixture.run("bench", "migrate", "--page-size", "5000");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("--page-size 5000").contains("multiple of 4096");
    }

    @Test
    void shouldRefuseATierSettingThatIsTheBenchmarksOwn()
    {
        final CliFixture.Result result = CliFixture.run("bench", "migrate", "--tier-setting", "dir=/elsewhere");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("--tier-setting dir").contains("--fast-dir");
    }
}
