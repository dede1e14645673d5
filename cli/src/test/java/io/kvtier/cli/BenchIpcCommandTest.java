package io.kvtier.cli;

import io.kvtier.bench.ipc.CRoundTrips;
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
            "baseline_rtt_p999_ns", "rtt_p50_ratio", "batched_keys_per_s", "inprocess_rtt_p50_ns", "rtt_p50_ns_loaded", "rtt_p99_ns_loaded",
            "baseline_rtt_p50_ns_loaded", "baseline_rtt_p99_ns_loaded", "rtt_p50_ratio_loaded", "batched_keys_per_s_loaded", "client_waits",
            "client_waits_loaded", "batched_client_waits_loaded"))
        {
            assertThat(number(result.out(), key)).as(key + " in %s", result.out()).isPositive();
        }
        for (final String key : List.of("engine_sleeps", "engine_sleep_ns", "engine_yields", "client_sleeps", "client_sleep_ns", "client_yields",
            "client_wakes_sent"))
        {
            for (final String which : List.of(key, key + "_loaded", "batched_" + key, "batched_" + key + "_loaded"))
            {
                assertThat(number(result.out(), which)).as(which + " in %s", result.out()).isNotNegative();
            }
        }
        assertThat(result.out()).as("says what the load was").containsPattern("\"load\":\"[^\"]*spins[^\"]*\"")
            .contains("\"engine_idle_strategy\":\"adaptive\"").contains("\"client_idle_strategy\":\"awake\"")
            .contains("\"round_trips_loaded\":300").contains("\"baseline_round_trips_loaded\":300");
        assertThat(number(result.out(), "engine_spin_budget_ns")).as("the adaptive engine's spin budget, the default").isBetween(5_000.0, 100_000.0);
        for (final String suffix : List.of("", "_loaded"))
        {
            if (result.out().contains("\"futex_missing" + suffix + "\""))
            {
                assertThat(result.out()).as("says why there is no wake-up figure").containsPattern("\"futex_missing" + suffix + "\":\"[^\"]+\"");
            }
            else
            {
                assertThat(number(result.out(), "futex_rtt_p50_ns" + suffix)).as("the wake-up baseline").isPositive();
                assertThat(number(result.out(), "futex_round_trips" + suffix)).isEqualTo(30);
            }
        }
        if (result.out().contains("\"python_missing\""))
        {
            assertThat(result.out()).as("says what is missing").containsPattern("\"python_missing\":\"[^\"]+\"");
        }
        else
        {
            final String python = result.out().replaceAll("(?s).*\"python_rtt_p50_ns\":([0-9]+).*", "$1");
            assertThat(Long.parseLong(python)).as("the Python binding's round trip").isPositive();
            assertThat(number(result.out(), "python_awake_rtt_p50_ns")).as("the same with the binding waiting awake").isPositive();
            assertThat(number(result.out(), "python_awake_rtt_p50_ratio")).isPositive();
        }
        // The checkout's build makes the C bench client wherever gcc and make are (cli's tests build clients with -am): where it
        // is built its figures must be there, and where it is not, the reason.
        final String cMissing = CRoundTrips.missing(CRoundTrips.findClient().orElse(null));
        if (cMissing == null)
        {
            for (final String prefix : List.of("c_", "c_awake_"))
            {
                final double p50 = number(result.out(), prefix + "rtt_p50_ns");
                assertThat(p50).as(prefix + "rtt_p50_ns").isPositive();
                assertThat(number(result.out(), prefix + "rtt_p99_ns")).as(prefix + "rtt_p99_ns").isGreaterThanOrEqualTo(p50);
                assertThat(number(result.out(), prefix + "rtt_p999_ns")).as(prefix + "rtt_p999_ns")
                    .isGreaterThanOrEqualTo(number(result.out(), prefix + "rtt_p99_ns"));
                assertThat(number(result.out(), prefix + "rtt_p50_ratio")).as(prefix + "rtt_p50_ratio").isPositive();
            }
            assertThat(number(result.out(), "c_batched_keys_per_s")).as("the C client's batched lookups").isPositive();
            assertThat(result.out()).doesNotContain("c_missing");
        }
        else
        {
            assertThat(result.out()).contains("\"c_missing\":\"" + cMissing + "\"").doesNotContain("c_rtt_p50_ns");
        }
        assertThat(result.out()).contains("\"round_trips\":300").contains("\"baseline_round_trips\":300").contains("\"batch_keys\":64");
        for (final String suffix : List.of("", "_loaded"))
        {
            assertThat(number(result.out(), "warmup_round_trips" + suffix)).as("at least --warmup's, more while the compilers were busy")
                .isGreaterThanOrEqualTo(100);
            assertThat(number(result.out(), "client_jit_ms" + suffix)).as("the client JVM's compilers during the timed part").isGreaterThanOrEqualTo(-1);
            assertThat(number(result.out(), "engine_jit_ms" + suffix)).as("the engine JVM's").isGreaterThanOrEqualTo(-1);
        }
    }

    private static double number(final String json, final String key)
    {
        final java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"" + key + "\":([0-9.Ee+-]+)").matcher(json);
        assertThat(m.find()).as("%s in %s", key, json).isTrue();
        return Double.parseDouble(m.group(1));
    }

    @Test
    void shouldSkipTheLoadedCaseWhenToldAndMeasureWithTheStrategiesNamed()
    {
        final CliFixture.Result result = CliFixture.run("bench", "ipc", "--json", "--warmup", "10", "--iterations", "50", "--batch-keys", "8",
            "--batches", "5", "--jit-wait", "0s", "--no-load", "--client-idle-strategy", "adaptive", "--set", "engine.idle-strategy=adaptive");
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.OK);
        assertThat(result.out()).contains("\"load_missing\":\"not measured: --no-load\"").doesNotContain("rtt_p50_ratio_loaded")
            .contains("\"engine_idle_strategy\":\"adaptive\"").contains("\"client_idle_strategy\":\"adaptive\"");
        assertThat(number(result.out(), "engine_spin_budget_ns")).as("the adaptive engine's budget").isPositive();
    }

    @Test
    void shouldCompareStrategiesInterleavedRoundByRoundAndLeaveNoFileBehind() throws Exception
    {
        final CliFixture.Result result = CliFixture.run("bench", "ipc", "--json", "--warmup", "10", "--iterations", "50", "--batch-keys", "8",
            "--batches", "5", "--jit-wait", "0s", "--no-load", "--compare", "backoff/backoff,adaptive/adaptive", "--rounds", "2");
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.OK);
        assertThat(result.out()).contains("\"rounds\":2").contains("\"engine_idle_strategy\":\"backoff\",\"client_idle_strategy\":\"backoff\"")
            .contains("\"engine_idle_strategy\":\"adaptive\",\"client_idle_strategy\":\"adaptive\"").contains("\"load_missing\"");
        final java.util.regex.Matcher byRound = java.util.regex.Pattern.compile("\"rtt_p50_ratio_by_round\":\\[([0-9.]+),([0-9.]+)\\]")
            .matcher(result.out());
        for (int pair = 0; pair < 2; pair++)
        {
            assertThat(byRound.find()).as("a ratio for each of the two rounds, pair %d, in %s", pair, result.out()).isTrue();
            assertThat(Double.parseDouble(byRound.group(1))).isPositive();
            assertThat(Double.parseDouble(byRound.group(2))).isPositive();
        }
        assertThat(number(result.out(), "batched_keys_per_s")).isPositive();
        final String ours = "kvtier-bench-ipc-" + ProcessHandle.current().pid() + "-";
        try (var files = java.nio.file.Files.list(DemoCommand.defaultPoolDirectory()))
        {
            assertThat(files.map(f -> f.getFileName().toString()).filter(name -> name.startsWith(ours))).as("pools and sockets of the turns").isEmpty();
        }
    }

    @Test
    void shouldRefuseAComparisonItCannotRead()
    {
        final CliFixture.Result pair = CliFixture.run("bench", "ipc", "--compare", "backoff/backoff,nap/backoff");
        assertThat(pair.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(pair.err()).contains("--compare: \"nap/backoff\": the engine's strategy \"nap\" is none of [adaptive, backoff, spin, yield, sleep]");
        final CliFixture.Result rounds = CliFixture.run("bench", "ipc", "--compare", "backoff/backoff", "--rounds", "0");
        assertThat(rounds.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(rounds.err()).contains("--rounds=0 must be at least 1");
        final CliFixture.Result both = CliFixture.run("bench", "ipc", "--compare", "backoff/backoff", "--set", "engine.idle-strategy=spin");
        assertThat(both.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(both.err()).contains("do not --set engine.idle-strategy with it");
    }

    @Test
    void shouldRefuseAClientIdleStrategyThatIsNone()
    {
        final CliFixture.Result result = CliFixture.run("bench", "ipc", "--client-idle-strategy", "nap");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("--client-idle-strategy=nap is none of adaptive, timed, awake, backoff, spin, sleep");
    }

    @Test
    void shouldPrintTheBaselineBesideTheClientInText()
    {
        final CliFixture.Result result = CliFixture.run("bench", "ipc", "--warmup", "10", "--iterations", "50", "--batch-keys", "8", "--batches", "5",
            "--jit-wait", "0s");
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.OK);
        assertThat(result.out()).contains("one-key LOOKUP round trip").contains("baseline: raw shared-memory ping-pong")
            .contains("p50 ratio").contains("keys/s").contains("quiet host").contains("loaded host: one child JVM")
            .contains("waits per one-key round trip: engine sleeps");
        final String cMissing = CRoundTrips.missing(CRoundTrips.findClient().orElse(null));
        assertThat(result.out()).contains(cMissing == null ? "one-key LOOKUP round trip, C client in another process, timed in C (50 round trips)"
            : "C client: not measured: " + cMissing);
    }

    @Test
    void shouldNameWhatIsMissingForThePythonAndTheCFigures(@org.junit.jupiter.api.io.TempDir final java.nio.file.Path empty)
    {
        final CliFixture.Result result = CliFixture.run("bench", "ipc", "--json", "--warmup", "10", "--iterations", "20", "--batch-keys", "4",
            "--batches", "2", "--jit-wait", "0s", "--python-binding", empty.toString(), "--c-client", empty.toString());
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.OK);
        assertThat(result.out()).contains("\"python_missing\":\"" + empty.resolve("kvtier_client.py") + " does not exist\"")
            .contains("\"c_missing\":\"the C bench client " + empty.resolve("build").resolve("kvtier_bench_client") + " is not built")
            .doesNotContain("c_rtt_p50_ns");
    }

    @Test
    void shouldRefuseToMeasureNothing()
    {
        final CliFixture.Result result = CliFixture.run("bench", "ipc", "--iterations", "0");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("iterations=0");
    }
}
