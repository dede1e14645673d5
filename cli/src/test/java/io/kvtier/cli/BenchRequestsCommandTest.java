package io.kvtier.cli;

import io.kvtier.bench.tier.FlatJson;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code kvtier bench requests} on a tiny run: its JSON shape and option checks (the figures' values are the machine's). */
class BenchRequestsCommandTest
{
    @Test
    void shouldPrintBothWaysForBothPathsWithTheirRatio(@TempDir final Path dir) throws Exception
    {
        final CliFixture.Result result = CliFixture.run("bench", "requests", "--json", "--prefix-pages", "4", "--fresh-pages", "2",
            "--rounds", "2", "--requests", "20", "--warmup", "1", "--dir", dir.toString());
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.OK);
        final Map<String, String> json = FlatJson.flatten(result.out());
        assertThat(json).containsEntry("results.0.path", "in-process").containsEntry("results.1.path", "ipc")
            .doesNotContainKey("results.2.path").containsKey("baseline");
        for (int i = 0; i < 2; i++)
        {
            for (final String key : new String[] {"fine_us_per_request", "combined_us_per_request", "combined_vs_fine"})
            {
                final String value = json.get("results." + i + "." + key);
                assertThat(value).as(key + " in %s", result.out()).isNotNull();
                assertThat(Double.parseDouble(value)).as(key + " in %s", result.out()).isPositive();
            }
        }
        try (var left = Files.list(dir))
        {
            assertThat(left).as("the pool and socket are deleted").isEmpty();
        }
    }

    @Test
    void shouldRefuseARequestWithNoNewPages()
    {
        final CliFixture.Result result = CliFixture.run("bench", "requests", "--fresh-pages", "0");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("fresh pages 0");
    }
}
