package io.kvtier.bench.replay;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

class ReplayResultTest
{
    private static final ReplayResult BOUNDED = new ReplayResult("t.jsonl", "lru", 1_000_000, 1953, 12_031, 288_500, 15_337, 271_210, 1953, 43_400_000);
    private static final ReplayResult UNBOUNDED = new ReplayResult(
        "t.jsonl", "belady", TraceReplay.UNBOUNDED, TraceReplay.UNBOUNDED, 2, 6, 3, 0, 5, 1_000);

    /** Reads a flat JSON object back with the streaming parser, keeping each value's text. */
    private static Map<String, String> parse(final String json) throws IOException
    {
        final Map<String, String> fields = new LinkedHashMap<>();
        try (JsonParser parser = new JsonFactory().createParser(json))
        {
            assertThat(parser.nextToken()).isEqualTo(JsonToken.START_OBJECT);
            while (parser.nextToken() == JsonToken.FIELD_NAME)
            {
                final String name = parser.currentName();
                parser.nextToken();
                fields.put(name, parser.getText());
            }
            assertThat(parser.nextToken()).isNull();
        }
        return fields;
    }

    @Test
    void shouldComputeTheHitRate()
    {
        assertThat(BOUNDED.hitRate()).isEqualTo(15_337.0 / 288_500);
        assertThat(new ReplayResult("t", "lru", 512, 1, 1, 0, 0, 0, 0, 0).hitRate()).isZero();
    }

    @Test
    void shouldRenderSnakeCaseJson() throws IOException
    {
        final String json = BOUNDED.toJson();

        assertThat(json).doesNotContain("\n");
        assertThat(parse(json)).containsExactly(
            entry("trace", "t.jsonl"),
            entry("policy", "lru"),
            entry("block_tokens", "512"),
            entry("capacity_tokens", "1000000"),
            entry("capacity_blocks", "1953"),
            entry("unbounded", "false"),
            entry("requests", "12031"),
            entry("total_blocks", "288500"),
            entry("hit_blocks", "15337"),
            entry("hit_rate", Double.toString(15_337.0 / 288_500)),
            entry("evictions", "271210"),
            entry("peak_cached_blocks", "1953"),
            entry("elapsed_nanos", "43400000"));
    }

    @Test
    void shouldRenderAnUnboundedCapacityAsNull() throws IOException
    {
        assertThat(parse(UNBOUNDED.toJson()))
            .containsEntry("capacity_tokens", "null")
            .containsEntry("capacity_blocks", "null")
            .containsEntry("unbounded", "true")
            .containsEntry("hit_rate", "0.5");
    }

    @Test
    void shouldRenderReadableText()
    {
        assertThat(BOUNDED.toText())
            .contains("policy       lru")
            .contains("capacity     1,000,000 tokens = 1,953 blocks of 512 tokens")
            .contains("hit rate     0.0532 (15,337 of 288,500 blocks)")
            .contains("elapsed      43.4 ms");
        assertThat(UNBOUNDED.toText()).contains("capacity     unbounded");
    }
}
