package io.kvtier.cli;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code kvtier bench ipc} on a tiny run: its figures are there and positive (their values are the machine's). */
class BenchIpcCommandTest
{
    @Test
    void shouldPrintEveryFigureAsAPositiveNumberInJson()
    {
        final CliFixture.Result result = CliFixture.run("bench", "ipc", "--json", "--warmup", "100", "--iterations", "300", "--batch-keys", "64",
            "--batches", "20");
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.OK);
        for (final String key : List.of("rtt_p50_ns", "rtt_p99_ns", "rtt_p999_ns", "baseline_rtt_p50_ns", "baseline_rtt_p99_ns",
            "baseline_rtt_p999_ns", "rtt_p50_ratio", "batched_keys_per_s", "inprocess_rtt_p50_ns"))
        {
            final String value = result.out().replaceAll("(?s).*\"" + key + "\":([0-9.Ee+-]+).*", "$1");
            assertThat(Double.parseDouble(value)).as(key + " in %s", result.out()).isPositive();
        }
        if (result.out().contains("\"python_missing\""))
        {
            assertThat(result.out()).as("says what is missing").containsPattern("\"python_missing\":\"[^\"]+\"");
        }
        else
        {
            final String python = result.out().replaceAll("(?s).*\"python_rtt_p50_ns\":([0-9]+).*", "$1");
            assertThat(Long.parseLong(python)).as("the Python binding's round trip").isPositive();
        }
        assertThat(result.out()).contains("\"round_trips\":300").contains("\"baseline_round_trips\":300").contains("\"batch_keys\":64");
    }

    @Test
    void shouldPrintTheBaselineBesideTheClientInText()
    {
        final CliFixture.Result result = CliFixture.run("bench", "ipc", "--warmup", "10", "--iterations", "50", "--batch-keys", "8", "--batches", "5");
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.OK);
        assertThat(result.out()).contains("one-key LOOKUP round trip").contains("baseline: raw shared-memory ping-pong")
            .contains("p50 ratio").contains("keys/s");
    }

    @Test
    void shouldNameWhatIsMissingForThePythonFigure(@org.junit.jupiter.api.io.TempDir final java.nio.file.Path empty)
    {
        final CliFixture.Result result = CliFixture.run("bench", "ipc", "--json", "--warmup", "10", "--iterations", "20", "--batch-keys", "4",
            "--batches", "2", "--python-binding", empty.toString());
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.OK);
        assertThat(result.out()).contains("\"python_missing\":\"" + empty.resolve("kvtier_client.py") + " does not exist\"");
    }

    @Test
    void shouldRefuseToMeasureNothing()
    {
        final CliFixture.Result result = CliFixture.run("bench", "ipc", "--iterations", "0");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("iterations=0");
    }
}
