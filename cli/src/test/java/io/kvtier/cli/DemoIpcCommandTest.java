package io.kvtier.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code kvtier demo --ipc}: the demo's workload from client processes attached over the IPC protocol. */
class DemoIpcCommandTest
{
    private static Map<String, Object> topLevel(final String json) throws IOException
    {
        final Map<String, Object> fields = new HashMap<>();
        try (JsonParser parser = new JsonFactory().createParser(json))
        {
            assertThat(parser.nextToken()).isEqualTo(JsonToken.START_OBJECT);
            while (parser.nextToken() == JsonToken.FIELD_NAME)
            {
                final String name = parser.currentName();
                final JsonToken value = parser.nextToken();
                if (value.isNumeric())
                {
                    fields.put(name, parser.getDoubleValue());
                }
                else if (value == JsonToken.VALUE_STRING)
                {
                    fields.put(name, parser.getText());
                }
                else
                {
                    parser.skipChildren();
                }
            }
        }
        return fields;
    }

    @Test
    void shouldServeHitsFromBothTiersToClientProcessesAndReadBackOnlyCorrectBytes() throws Exception
    {
        // A pool much smaller than the workload, so pages are evicted and come back from L3.
        final CliFixture.Result result = CliFixture.run("demo", "--ipc", "--json", "--progress", "never", "--conversations", "24",
            "--pool-size", "4MiB", "--page-size", "8KiB");
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.OK);
        final Map<String, Object> summary = topLevel(result.out());
        assertThat(summary.get("client_transport")).isEqualTo("ipc-java");
        assertThat(result.out()).as("the JVM warm-up ran, with client processes of its own")
            .containsPattern("\"jvm_warmup\":\\{\"rounds\":[1-3],\"requests\":[1-9]\\d*,");
        assertThat(result.out()).as("the engine side's CPU a request; the clients', in processes of their own, is not this process's to tell")
            .containsPattern("\"cpu_us_per_request\":\\{\"clients\":null,\"engine_side\":[1-9][0-9.]*,")
            .contains("\"cpu_clients_missing\":\"the clients are processes of their own: their CPU is not this process's\"");
        assertThat((Double)summary.get("pages_corrupt")).isZero();
        assertThat((Double)summary.get("pages_verified")).isPositive();
        assertThat(summary.get("pages_read")).isEqualTo(summary.get("pages_verified"));
        assertThat((Double)summary.get("pages_hit_l2")).as("hits in the pool").isPositive();
        assertThat((Double)summary.get("pages_hit_l3")).as("hits loaded from L3").isPositive();
        assertThat((Double)summary.get("pages_hit_l2") + (Double)summary.get("pages_hit_l3")).isEqualTo(summary.get("pages_read"));
        assertThat((Double)summary.get("pages_written")).isPositive();
        assertThat(result.out()).contains("\"latency_us\"").contains("\"client_time_ms\":{\"keys\":").contains("\"l3_corrupt\":0");
        assertThat((Double)summary.get("throughput_vs_baseline")).as("the IPC demo against its no-engine baseline").isPositive();
    }

    @Test
    void shouldRunTheSameWorkloadFromPythonClientProcessesWhenTheBindingIsBuilt() throws Exception
    {
        final String missing = io.kvtier.bench.ipc.PythonRoundTrips.missing(io.kvtier.bench.ipc.PythonRoundTrips.findBinding().orElse(null));
        org.junit.jupiter.api.Assumptions.assumeTrue(missing == null, () -> "the Python demo client cannot run here: " + missing);
        final CliFixture.Result result = CliFixture.run("demo", "--ipc", "--client", "python", "--json", "--progress", "never", "--conversations", "16",
            "--pool-size", "4MiB", "--page-size", "8KiB");
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.OK);
        final Map<String, Object> summary = topLevel(result.out());
        assertThat(summary.get("client_transport")).isEqualTo("ipc-python");
        assertThat((Double)summary.get("pages_corrupt")).isZero();
        assertThat((Double)summary.get("pages_verified")).isPositive();
        assertThat((Double)summary.get("pages_hit_l2")).as("hits in the pool").isPositive();
        assertThat((Double)summary.get("pages_hit_l3")).as("hits loaded from L3").isPositive();
    }

    @Test
    void shouldRunTheSameWorkloadFromCClientProcessesWhenTheCClientIsBuilt() throws Exception
    {
        final java.util.Optional<java.nio.file.Path> binary = io.kvtier.bench.workload.ProcessWorkloadClient.findCClient();
        org.junit.jupiter.api.Assumptions.assumeTrue(binary.isPresent(),
            () -> "the C demo client cannot run here: " + DemoCommand.missingClient(DemoCommand.ClientKind.c, null));
        final CliFixture.Result result = CliFixture.run("demo", "--ipc", "--client", "c", "--json", "--progress", "never", "--conversations", "24",
            "--pool-size", "4MiB", "--page-size", "8KiB");
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.OK);
        final Map<String, Object> summary = topLevel(result.out());
        assertThat(summary.get("client_transport")).isEqualTo("ipc-c");
        assertThat((Double)summary.get("pages_corrupt")).isZero();
        assertThat((Double)summary.get("pages_verified")).isPositive();
        assertThat(summary.get("pages_read")).isEqualTo(summary.get("pages_verified"));
        assertThat((Double)summary.get("pages_hit_l2")).as("hits in the pool").isPositive();
        assertThat((Double)summary.get("pages_hit_l3")).as("hits loaded from L3").isPositive();
        assertThat((Double)summary.get("pages_written")).isPositive();
    }

    @Test
    void shouldNameWhatIsMissingForAClientLibraryThisBuildCannotDrive()
    {
        assertThat(DemoCommand.missingClient(DemoCommand.ClientKind.c, null)).contains("C demo client").contains("libkvtier_client.so")
            .contains("gcc").contains("--client java");
        assertThat(DemoCommand.missingClient(DemoCommand.ClientKind.c, java.nio.file.Path.of("kvtier_demo_client"))).isNull();
        assertThat(DemoCommand.missingClient(DemoCommand.ClientKind.python, null)).contains("Python binding").contains("kvtier_client.py");
        assertThat(DemoCommand.missingClient(DemoCommand.ClientKind.java, null)).isNull();
    }

    @Test
    void shouldRefuseAClientLibraryWithoutIpc()
    {
        final CliFixture.Result result = CliFixture.run("demo", "--client", "python", "--progress", "never");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("--client python needs --ipc");
    }
}
