package io.kvtier.cli;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class BenchReplayCommandTest
{
    private static final Path TRACE = Path.of("..", "..", "shared", "traces", "conversation_trace.jsonl");

    @Test
    void shouldPrintTheHitRateOfASmallTrace(@TempDir final Path dir) throws Exception
    {
        final Path trace = dir.resolve("t.jsonl");
        Files.write(trace, List.of(
            "{\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 1, \"hash_ids\": [1, 2]}",
            "{\"timestamp\": 1, \"input_length\": 1536, \"output_length\": 1, \"hash_ids\": [1, 2, 3]}"));
        final CliFixture.Result result = CliFixture.run("bench", "replay", "--trace", trace.toString(), "--capacity-tokens", "unbounded", "--json");
        assertThat(result.exitCode()).isEqualTo(ExitCode.OK);
        assertThat(result.out()).contains("\"hit_blocks\":2").contains("\"total_blocks\":5").contains("\"hit_rate\":0.4")
            .contains("\"parse_ms\":").contains("\"replay_ms\":").contains("\"baseline_linkedhashmap_ms\":").contains("\"baseline_hit_blocks\":2")
            .contains("\"runs\":10").contains("\"statistic\":\"median\"");
    }

    @Test
    void shouldRunTheEnginesDefaultPolicyUnlessToldOtherwise(@TempDir final Path dir) throws Exception
    {
        final Path trace = dir.resolve("t.jsonl");
        Files.write(trace, List.of("{\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 1, \"hash_ids\": [1, 2]}"));
        final CliFixture.Result byDefault = CliFixture.run("bench", "replay", "--trace", trace.toString(), "--capacity-tokens", "1e6", "--json",
            "--runs", "1", "--warmup", "0");
        assertThat(byDefault.exitCode()).isEqualTo(ExitCode.OK);
        assertThat(byDefault.out()).contains("\"policy\":\"adaptive\"");
        for (final String policy : List.of("lru", "chain", "probation", "admission", "frequency", "adaptive", "belady-block"))
        {
            final CliFixture.Result result = CliFixture.run("bench", "replay", "--trace", trace.toString(), "--capacity-tokens", "1e6", "--json",
                "--runs", "1", "--warmup", "0", "--policy", policy);
            assertThat(result.exitCode()).as(policy).isEqualTo(ExitCode.OK);
            assertThat(result.out()).contains("\"policy\":\"" + policy + "\"");
        }
    }

    @Test
    void shouldReplayASyntheticTrace()
    {
        final CliFixture.Result result = CliFixture.run("bench", "replay", "--synthetic", "documents", "--capacity-tokens", "1e6", "--json",
            "--runs", "1", "--warmup", "0");
        assertThat(result.exitCode()).isEqualTo(ExitCode.OK);
        assertThat(result.out()).contains("\"trace\":\"synthetic:documents(seed=1)\"").contains("\"policy\":\"adaptive\"")
            .contains("\"requests\":6000").contains("\"total_blocks\":622499");
        final long hits = Long.parseLong(result.out().replaceAll("(?s).*\"hit_blocks\":([0-9]+).*", "$1"));
        final long baseline = Long.parseLong(result.out().replaceAll("(?s).*\"baseline_hit_blocks\":([0-9]+).*", "$1"));
        assertThat(hits).as("the default policy against the LinkedHashMap LRU").isGreaterThan(baseline);

        final CliFixture.Result seeded = CliFixture.run("bench", "replay", "--synthetic", "chat", "--seed", "9", "--capacity-tokens", "1e5",
            "--runs", "1", "--warmup", "0", "--policy", "lru");
        assertThat(seeded.exitCode()).isEqualTo(ExitCode.OK);
        assertThat(seeded.out()).contains("synthetic:chat(seed=9)").containsPattern("policy +lru");
    }

    @Test
    void shouldAskForExactlyOneOfATraceAndASyntheticTrace(@TempDir final Path dir) throws Exception
    {
        final Path trace = dir.resolve("t.jsonl");
        Files.write(trace, List.of("{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [1]}"));
        final CliFixture.Result neither = CliFixture.run("bench", "replay", "--capacity-tokens", "1e6");
        final CliFixture.Result both = CliFixture.run("bench", "replay", "--trace", trace.toString(), "--synthetic", "chat", "--capacity-tokens", "1e6");
        final CliFixture.Result unknown = CliFixture.run("bench", "replay", "--synthetic", "loops", "--capacity-tokens", "1e6");

        assertThat(neither.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(neither.err()).contains("give either --trace FILE or --synthetic NAME (one of zipf-prefix, documents, chat)");
        assertThat(both.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(unknown.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(unknown.err()).contains("--synthetic=loops is not a synthetic trace");
    }

    @Test
    void shouldNameTheAllowedPoliciesForAnUnknownOne(@TempDir final Path dir) throws Exception
    {
        final Path trace = dir.resolve("t.jsonl");
        Files.write(trace, List.of("{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [1]}"));
        final CliFixture.Result result = CliFixture.run("bench", "replay", "--trace", trace.toString(), "--capacity-tokens", "1e6", "--policy", "arc");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("--policy=arc is not a replay policy; expected one of lru, chain, probation, admission, frequency, adaptive, belady");
    }

    @Test
    void shouldPrintTheReplayAndBaselineTimesAsText(@TempDir final Path dir) throws Exception
    {
        final Path trace = dir.resolve("t.jsonl");
        Files.write(trace, List.of("{\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 1, \"hash_ids\": [1, 2]}"));
        final CliFixture.Result result = CliFixture.run("bench", "replay", "--trace", trace.toString(), "--capacity-tokens", "1e6", "--runs", "3", "--warmup", "1");
        assertThat(result.exitCode()).isEqualTo(ExitCode.OK);
        assertThat(result.out()).containsPattern("parse +[0-9.]+ ms").containsPattern("replay +[0-9.]+ ms \\(median of 3 warm runs")
            .containsPattern("baseline +[0-9.]+ ms \\(median of 3 warm runs.*LinkedHashMap");
    }

    @Test
    void shouldRejectNoMeasuredRun(@TempDir final Path dir) throws Exception
    {
        final Path trace = dir.resolve("t.jsonl");
        Files.write(trace, List.of("{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [1]}"));
        final CliFixture.Result result = CliFixture.run("bench", "replay", "--trace", trace.toString(), "--capacity-tokens", "1e6", "--runs", "0");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("--runs=0");
    }

    @Test
    void shouldNameTheFileLineColumnAndByteOfInvalidUtf8(@TempDir final Path dir) throws Exception
    {
        final Path trace = dir.resolve("bad.jsonl");
        final byte[] good = "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [1]}\n".getBytes(StandardCharsets.UTF_8);
        final byte[] bad = "{\"note\": \"a\u00ffb\", \"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [1]}\n"
            .getBytes(StandardCharsets.ISO_8859_1);
        try (OutputStream out = Files.newOutputStream(trace))
        {
            out.write(good);
            out.write(bad);
        }
        final CliFixture.Result result = CliFixture.run("bench", "replay", "--trace", trace.toString(), "--capacity-tokens", "1e6");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("kvtier: bad trace: " + trace + ":2:12: invalid UTF-8 byte 0xff")
            .contains("(byte offset " + (good.length + 11) + " in the file)")
            .doesNotContain("Input length");
    }

    @Test
    void shouldNameTheLineOfABadTrace(@TempDir final Path dir) throws Exception
    {
        final Path trace = dir.resolve("bad.jsonl");
        Files.write(trace, List.of("{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [1]}", "{not json"));
        final CliFixture.Result result = CliFixture.run("bench", "replay", "--trace", trace.toString(), "--capacity-tokens", "1e6");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("kvtier: bad trace: " + trace + ":2:2: malformed JSON: expected a field name in double quotes, found 'n'");
    }

    @Test
    void shouldRejectACapacityBelowOneBlock(@TempDir final Path dir) throws Exception
    {
        final Path trace = dir.resolve("t.jsonl");
        Files.write(trace, List.of("{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [1]}"));
        final CliFixture.Result result = CliFixture.run("bench", "replay", "--trace", trace.toString(), "--capacity-tokens", "100");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("--capacity-tokens");
    }

    @Test
    void shouldReproduceTheReferenceLruFiguresOnTheMooncakeTrace()
    {
        Assumptions.assumeTrue(Files.isRegularFile(TRACE),
            "trace not found at " + TRACE.toAbsolutePath().normalize() + "; it ships beside the repository in ../shared/traces, not in it");
        final String[][] cases = {{"1e5", "0.042"}, {"1e6", "0.053"}, {"3e6", "0.136"}, {"1e7", "0.285"}, {"unbounded", "0.366"}};
        for (final String[] c : cases)
        {
            final CliFixture.Result result = CliFixture.run("bench", "replay", "--trace", TRACE.toString(), "--capacity-tokens", c[0], "--policy", "lru", "--json",
                "--runs", "1", "--warmup", "0");
            assertThat(result.exitCode()).isEqualTo(ExitCode.OK);
            final double rate = Double.parseDouble(result.out().replaceAll("(?s).*\"hit_rate\":([0-9.]+).*", "$1"));
            assertThat(String.format(java.util.Locale.ROOT, "%.3f", rate)).as("LRU hit rate at %s tokens", c[0]).isEqualTo(c[1]);
        }
    }
}
