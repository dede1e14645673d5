package io.kvtier.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvtier.bench.ipc.PythonRoundTrips;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code kvtier demo --engine E} and {@code kvtier bench adapters}: two processes of one inference engine, each driving
 * kvtier's adapter for it as the engine does, the second finding what the first stored, every byte checked.
 */
class DemoEngineCommandTest
{
    private static final ObjectMapper JSON = new ObjectMapper();

    private static void assumeTheDriversRun()
    {
        final String missing = PythonRoundTrips.missing(PythonRoundTrips.findBinding().orElse(null));
        assumeTrue(missing == null, () -> "the engine drivers cannot run here: " + missing);
    }

    @ParameterizedTest
    @EnumSource(EngineDrivers.Kind.class)
    void aSecondEngineProcessLoadsThePrefixesTheFirstStoredByteExact(final EngineDrivers.Kind kind) throws Exception
    {
        assumeTheDriversRun();
        // A pool smaller than the workload, so some of the second instance's hits come back from L3 first.
        final CliFixture.Result result = CliFixture.run("demo", "--engine", kind.name(), "--json", "--progress", "never", "--conversations", "12",
            "--pool-size", "4MiB", "--page-size", "8KiB");
        assertThat(result.exitCode()).as("stderr: %s\nstdout: %s", result.err(), result.out()).isEqualTo(ExitCode.OK);
        final JsonNode summary = JSON.readTree(result.out());
        assertThat(summary.path("engine").asText()).isEqualTo(kind.name());
        assertThat(summary.path("pages_corrupt").asLong()).isZero();
        final JsonNode cold = summary.path("instances").get(0);
        final JsonNode warm = summary.path("instances").get(1);
        assertThat(cold.path("instance").asText()).isEqualTo("a");
        assertThat(warm.path("instance").asText()).isEqualTo("b");
        assertThat(cold.path("pages_stored").asLong()).as("the cold instance computed and stored its pages").isPositive();
        assertThat(summary.path("l2_hits_from_other_instance").asLong()).as("the second process found the first's pages").isPositive();
        assertThat(warm.path("hit_rate").asDouble()).as("the second instance replays the first's requests").isGreaterThan(cold.path("hit_rate").asDouble());
        assertThat(summary.path("pages_verified").asLong()).as("every hit's bytes were checked")
            .isEqualTo(cold.path("pages_hit").asLong() + warm.path("pages_hit").asLong());
        assertThat(summary.path("l2_hits").asLong()).isEqualTo(summary.path("pages_verified").asLong());
    }

    @Test
    void anEngineDemoRefusesAClientLibraryNamingBoth()
    {
        final CliFixture.Result result = CliFixture.run("demo", "--engine", "sglang", "--client", "python", "--progress", "never");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("--client").contains("--engine sglang");
    }

    @Test
    void anUnknownEngineIsRefusedListingTheEnginesThereAre()
    {
        final CliFixture.Result result = CliFixture.run("demo", "--engine", "tensorrt", "--progress", "never");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("tensorrt").contains("sglang").contains("vllm").contains("lmcache");
    }

    @Test
    void theAdaptersBenchmarkTimesEachAdapterBesideMemmoveAndChecksTheBytes() throws Exception
    {
        assumeTheDriversRun();
        final CliFixture.Result result = CliFixture.run("bench", "adapters", "--pages", "4", "--page-bytes", "256KiB", "--rounds", "2", "--json");
        assertThat(result.exitCode()).as("stderr: %s\nstdout: %s", result.err(), result.out()).isEqualTo(ExitCode.OK);
        final JsonNode figures = JSON.readTree(result.out());
        assertThat(figures.path("results")).hasSize(EngineDrivers.Kind.values().length + 1);
        for (final JsonNode run : figures.path("results"))
        {
            for (final String role : new String[] {"set", "get"})
            {
                final JsonNode side = run.path(role);
                assertThat(side.path("adapter_seconds")).as(run + " " + role).hasSize(2);
                assertThat(side.path("memmove_seconds")).as(run + " " + role).hasSize(2);
                assertThat(side.path("adapter_gb_s").asDouble()).as(run + " " + role).isPositive();
                assertThat(side.path("memmove_gb_s").asDouble()).as(run + " " + role).isPositive();
                assertThat(side.path("adapter_cpu_seconds")).as(run + " " + role).hasSize(2);
            }
        }
    }
}
