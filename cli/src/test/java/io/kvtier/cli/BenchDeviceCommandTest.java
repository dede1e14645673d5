package io.kvtier.cli;

import io.kvtier.bench.tier.FlatJson;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code kvtier bench device} on a small shape: its JSON carries both sides per batch size, and it cleans up after itself. */
class BenchDeviceCommandTest
{
    @TempDir
    Path dir;

    @Test
    void shouldReportTheEngineAndTheClientBaselinePerBatchSize() throws Exception
    {
        final CliFixture.Result result = CliFixture.run("bench", "device", "--json", "--layers", "3", "--heads", "2", "--head-dim", "64",
            "--batches", "1,4", "--rounds", "3", "--dir", dir.toString());
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.OK);
        final Map<String, String> json = FlatJson.flatten(result.out());
        assertThat(json).containsEntry("bench", "device").containsEntry("page_bytes", String.valueOf(3 * 2 * 16 * 2 * 64 * 2))
            .containsEntry("results.0.blocks", "1").containsEntry("results.1.blocks", "4").doesNotContainKey("results.2.blocks");
        for (int i = 0; i < 2; i++)
        {
            for (final String key : new String[] {"kvtier_gb_s", "client_gb_s", "ratio", "kvtier_p50_us", "client_p50_us"})
            {
                final String value = json.get("results." + i + "." + key);
                assertThat(value).as(key + " in %s", result.out()).isNotNull();
                assertThat(Double.parseDouble(value)).as(key + " in %s", result.out()).isPositive();
            }
        }
        try (var left = Files.list(dir))
        {
            assertThat(left).as("the pool, its socket and the buffer files are removed").isEmpty();
        }
    }

    @Test
    void shouldRefuseADirectoryTooLongForAHostFileHandle() throws Exception
    {
        final Path deep = Files.createDirectories(dir.resolve("a-directory-name-long-enough-to-push-the-buffer-files-past-63-bytes"));
        final CliFixture.Result result = CliFixture.run("bench", "device", "--dir", deep.toString());
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("63 bytes").contains("--dir");
    }

    @Test
    void shouldRefuseAShapeThatIsNotOne()
    {
        final CliFixture.Result result = CliFixture.run("bench", "device", "--tensors", "3");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("tensorsPerLayer=3");
    }
}
