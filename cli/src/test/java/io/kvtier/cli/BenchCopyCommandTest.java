package io.kvtier.cli;

import io.kvtier.bench.tier.FlatJson;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code kvtier bench copy} on a tiny run: its JSON shape and option checks (the figures' values are the machine's). */
class BenchCopyCommandTest
{
    @Test
    void shouldPrintOneResultPerPageSizeWithBothThroughputsAndTheirRatio(@TempDir final Path dir) throws Exception
    {
        final CliFixture.Result result = CliFixture.run("bench", "copy", "--json", "--page-sizes", "4KiB,64KiB", "--pool-size", "256KiB",
            "--rounds", "3", "--block", "1ms", "--dir", dir.toString());
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.OK);
        final Map<String, String> json = FlatJson.flatten(result.out());
        assertThat(json).containsEntry("results.0.page_bytes", "4096").containsEntry("results.1.page_bytes", "65536")
            .doesNotContainKey("results.2.page_bytes");
        for (int i = 0; i < 2; i++)
        {
            for (final String key : new String[] {"kvtier_gb_s", "memcpy_gb_s", "ratio", "kvtier_best_gb_s", "memcpy_best_gb_s", "best_ratio"})
            {
                final String value = json.get("results." + i + "." + key);
                assertThat(value).as(key + " in %s", result.out()).isNotNull();
                assertThat(Double.parseDouble(value)).as(key + " in %s", result.out()).isPositive();
            }
        }
        try (var left = Files.list(dir))
        {
            assertThat(left).as("the pools are deleted").isEmpty();
        }
    }

    @Test
    void shouldPrintATableInText(@TempDir final Path dir)
    {
        final CliFixture.Result result = CliFixture.run("bench", "copy", "--page-sizes", "8KiB", "--pool-size", "64KiB", "--rounds", "1",
            "--block", "1ms", "--dir", dir.toString());
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.OK);
        assertThat(result.out()).contains("kvtier GB/s").contains("memcpy GB/s").contains("8KiB");
    }

    @Test
    void shouldRefuseAPageSizeThatIsNotAMultipleOf4KiB()
    {
        final CliFixture.Result result = CliFixture.run("bench", "copy", "--page-sizes", "5000");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("5000").contains("multiple of 4096");
    }
}
