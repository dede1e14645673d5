package io.kvtier.cli;

import io.kvtier.bench.tier.FlatJson;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code kvtier bench restart} on a small run: a killed engine's pool restarted warm and cold, and what each served. */
class BenchRestartCommandTest
{
    @Test
    void shouldServeMoreHitsAfterAWarmRestartThanAfterAColdOneAndNoWrongPage(@TempDir final Path dir) throws Exception
    {
        // 20 conversations fit the pool of 512 pages: the cold restart misses each one's history once, the warm one does not.
        final CliFixture.Result result = CliFixture.run("bench", "restart", "--json", "--pool-size", "8MiB", "--conversations", "20",
            "--before", "1000", "--rate", "100", "--window", "2s", "--dir", dir.toString());
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.OK);
        final Map<String, String> json = FlatJson.flatten(result.out());
        assertThat(json).containsEntry("bench", "restart").containsEntry("wrong_pages", "0").containsEntry("requests_after_restart", "200");
        final long atCrash = Long.parseLong(json.get("pages_at_crash"));
        assertThat(atCrash).as("pages the killed engine left in %s", result.out()).isPositive();
        // Adoption stops below pool.evict-high and competes with the replay for free pages: some, not necessarily all.
        assertThat(Long.parseLong(json.get("warm.pages_adopted"))).as("adopted, in %s", result.out()).isPositive().isLessThanOrEqualTo(atCrash);
        assertThat(json).containsEntry("warm.adopt_corrupt", "0");
        assertThat(Long.parseLong(json.get("cold.pages_adopted"))).isZero();
        assertThat(Double.parseDouble(json.get("hit_rate_warm"))).as("warm against cold in %s", result.out())
            .isGreaterThan(Double.parseDouble(json.get("hit_rate_cold")));
        try (var left = Files.list(dir))
        {
            assertThat(left).as("the pools are deleted").isEmpty();
        }
    }

    /** An upgrade: the first engine stops cleanly with pool.keep-on-stop, and the next one adopts what it kept. */
    @Test
    void shouldRestartWarmAfterACleanStopThatKeptThePool(@TempDir final Path dir) throws Exception
    {
        final CliFixture.Result result = CliFixture.run("bench", "restart", "--json", "--stop", "clean", "--pool-size", "8MiB", "--conversations",
            "20", "--before", "1000", "--rate", "100", "--window", "2s", "--dir", dir.toString());
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.OK);
        final Map<String, String> json = FlatJson.flatten(result.out());
        assertThat(json).containsEntry("stop", "clean, pool.keep-on-stop=true").containsEntry("wrong_pages", "0");
        assertThat(Long.parseLong(json.get("pages_at_crash"))).as("pages the stopped engine kept, in %s", result.out()).isPositive();
        assertThat(Long.parseLong(json.get("warm.pages_adopted"))).as("adopted, in %s", result.out()).isPositive();
        assertThat(Double.parseDouble(json.get("hit_rate_warm"))).as("warm against cold in %s", result.out())
            .isGreaterThan(Double.parseDouble(json.get("hit_rate_cold")));
    }

    @Test
    void shouldRefuseAStopThatIsNeitherKillNorClean()
    {
        final CliFixture.Result result = CliFixture.run("bench", "restart", "--stop", "gently");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("--stop gently").contains("kill or clean");
    }

    @Test
    void shouldRefuseAPageSizeThatIsNotAMultipleOf4KiB()
    {
        final CliFixture.Result result = CliFixture.run("bench", "restart", "--page-size", "5000");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("5000").contains("multiple of 4096");
    }
}
