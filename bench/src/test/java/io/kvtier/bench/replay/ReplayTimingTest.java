package io.kvtier.bench.replay;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.kvtier.bench.replay.TraceReplay.BLOCK_TOKENS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ReplayTimingTest
{
    @TempDir
    Path dir;

    private Path trace() throws IOException
    {
        return Files.write(dir.resolve("t.jsonl"), List.of(
            "{\"timestamp\": 0, \"input_length\": 1536, \"output_length\": 1, \"hash_ids\": [1, 2, 3]}",
            "{\"timestamp\": 1, \"input_length\": 1536, \"output_length\": 1, \"hash_ids\": [1, 2, 4]}",
            "{\"timestamp\": 2, \"input_length\": 512, \"output_length\": 1, \"hash_ids\": [5]}",
            "{\"timestamp\": 3, \"input_length\": 1024, \"output_length\": 1, \"hash_ids\": [1, 2]}"));
    }

    private static Map<String, Object> json(final String text) throws IOException
    {
        final Map<String, Object> fields = new HashMap<>();
        try (JsonParser parser = new JsonFactory().createParser(text))
        {
            assertThat(parser.nextToken()).isEqualTo(JsonToken.START_OBJECT);
            while (parser.nextToken() == JsonToken.FIELD_NAME)
            {
                final String name = parser.currentName();
                final JsonToken value = parser.nextToken();
                fields.put(name, value == JsonToken.VALUE_STRING ? parser.getText() : value.isNumeric() ? parser.getNumberValue() : parser.getText());
            }
        }
        return fields;
    }

    @Test
    void shouldReplayTheParsedTraceAsManyTimesAsAskedBesideTheBaseline() throws IOException
    {
        final ReplayTiming timing = ReplayTiming.measure(trace(), 3L * BLOCK_TOKENS, ReplayPolicy.lru(), 2, 3);

        assertThat(timing.runs()).isEqualTo(3);
        assertThat(timing.warmups()).isEqualTo(2);
        assertThat(timing.replayNanos()).hasSize(3).doesNotContain(0L);
        assertThat(timing.baselineNanos()).hasSize(3).doesNotContain(0L);
        // [1 2 3] [1 2 4] [5] [1 2]: 1 and 2 hit once, then 5 evicts 1, the least recently used.
        assertThat(timing.result().hitBlocks()).isEqualTo(2);
        assertThat(timing.baselineHits()).isEqualTo(timing.result().hitBlocks());
        assertThat(timing.result().elapsedNanos()).isEqualTo(timing.replayMedianNanos());
        assertThat(timing.replayBestNanos()).isLessThanOrEqualTo(timing.replayMedianNanos());
        assertThat(timing.baselineBestNanos()).isLessThanOrEqualTo(timing.baselineMedianNanos());
    }

    @Test
    void shouldReportParseReplayAndBaselineTimesInJsonAndText() throws IOException
    {
        final ReplayTiming timing = ReplayTiming.measure(trace(), TraceReplay.UNBOUNDED, ReplayPolicy.lru(), 0, 1);

        final Map<String, Object> fields = json(timing.toJson());
        assertThat(fields).containsKeys("parse_ms", "replay_ms", "replay_best_ms", "baseline_linkedhashmap_ms", "baseline_linkedhashmap_best_ms")
            .containsEntry("hit_blocks", 4)
            .containsEntry("baseline_hit_blocks", 4)
            .containsEntry("runs", 1)
            .containsEntry("warmup_runs", 0)
            .containsEntry("statistic", "median");
        assertThat(((Number)fields.get("replay_ms")).doubleValue()).isEqualTo(timing.replayMedianNanos() / 1e6);
        assertThat(timing.toText())
            .contains("hit rate     0.4444 (4 of 9 blocks)")
            .containsPattern("parse +[0-9.]+ ms")
            .containsPattern("replay +[0-9.]+ ms \\(median of 1 warm runs")
            .containsPattern("baseline +[0-9.]+ ms \\(median of 1 warm runs.*LinkedHashMap LRU.*hit rate 0.4444");
    }

    @Test
    void shouldTimeTheBaselineBesideAnOfflinePolicyToo() throws IOException
    {
        final ReplayTiming timing = ReplayTiming.measure(trace(), 2L * BLOCK_TOKENS, ReplayPolicy.belady(), 0, 2);

        assertThat(timing.result().policy()).isEqualTo("belady");
        assertThat(timing.baselineHits()).isEqualTo(TraceReplay.run("t", TraceReader.readAll(trace()), 2L * BLOCK_TOKENS, ReplayPolicy.lru()).hitBlocks());
    }

    @Test
    void shouldRejectNoMeasuredRun()
    {
        assertThatThrownBy(() -> ReplayTiming.measure(trace(), TraceReplay.UNBOUNDED, ReplayPolicy.lru(), 0, 0))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("runs=0");
    }
}
