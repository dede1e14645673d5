package io.kvtier.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class DemoCommandTest
{
    private static Map<String, Double> topLevelNumbers(final String json) throws IOException
    {
        final Map<String, Double> numbers = new HashMap<>();
        try (JsonParser parser = new JsonFactory().createParser(json))
        {
            assertThat(parser.nextToken()).isEqualTo(JsonToken.START_OBJECT);
            while (parser.nextToken() == JsonToken.FIELD_NAME)
            {
                final String name = parser.currentName();
                final JsonToken value = parser.nextToken();
                if (value.isNumeric())
                {
                    numbers.put(name, parser.getDoubleValue());
                }
                else
                {
                    parser.skipChildren();
                }
            }
        }
        return numbers;
    }

    @Test
    void shouldServeHitsFromBothTiersAndReadBackOnlyCorrectBytes() throws Exception
    {
        // A pool much smaller than the workload, so pages are evicted and come back from L3.
        final CliFixture.Result result = CliFixture.run("demo", "--json", "--progress", "never", "--conversations", "40",
            "--pool-size", "4MiB", "--page-size", "8KiB");
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.OK);
        final Map<String, Double> summary = topLevelNumbers(result.out());
        assertThat(summary.get("pages_corrupt")).isZero();
        assertThat(summary.get("pages_verified")).isPositive();
        assertThat(summary.get("pages_read")).isEqualTo(summary.get("pages_verified"));
        assertThat(summary.get("hit_rate_l2")).isPositive();
        assertThat(summary.get("hit_rate_l3")).isPositive();
        assertThat(summary.get("pages_hit_l2") + summary.get("pages_hit_l3")).isEqualTo(summary.get("pages_read"));
        assertThat(summary.get("requests")).isPositive();
        assertThat(result.out()).contains("\"latency_us\"").contains("\"p99\"").contains("\"l3_corrupt\":0");
        assertThat(result.out()).as("time per client step").contains("\"client_time_ms\":{\"keys\":").contains("\"client_time_share\":{\"keys\":")
            .contains("\"lookup\":").contains("\"acquire\":").contains("\"reserve\":").contains("\"commit\":").contains("\"total\":");
        assertThat(result.out()).as("the demo runs the engine's default eviction policy and says so")
            .contains("\"eviction_policy\":\"" + io.kvtier.engine.eviction.EvictionPolicies.DEFAULT + "\"");
    }

    @Test
    void shouldPrintAReadableSummary()
    {
        final CliFixture.Result result = CliFixture.run("demo", "--progress", "never", "--conversations", "12", "--pool-size", "2MiB", "--page-size", "8KiB");
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.OK);
        assertThat(result.out()).contains("pages verified").contains("hit in L3").contains("every page read back matched")
            .contains("client time").contains("lookup").contains("commit");
    }

    @Test
    void shouldRejectABadEngineSettingWithTheConfigExitCode()
    {
        final CliFixture.Result result = CliFixture.run("demo", "--progress", "never", "--set", "policy.write=sometimes");
        assertThat(result.exitCode()).isEqualTo(ExitCode.CONFIG);
        assertThat(result.err()).contains("policy.write").contains("sometimes");
    }
}
