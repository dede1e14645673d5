package io.kvtier.bench.replay;

import io.kvtier.engine.eviction.EvictionPolicies;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The figures of docs/PERFORMANCE.md, "Eviction policies": the engine's default policy never hits fewer blocks
 * than LRU, on the Mooncake conversation and synthetic traces (each skipped, saying why, when it is not beside the
 * checkout, as {@link ReferenceFiguresTest} is) and on the generated synthetic traces (always), and every policy's hit rate is pinned
 * to four decimals so that a change to a policy shows up against the documented table.
 */
class EvictionPolicyFiguresTest
{
    /** The floor at 3e6 tokens for the default policy on the Mooncake trace. */
    private static final double MINIMUM_AT_3E6 = 0.17;

    private static final String TRACE_PROPERTY = "kvtier.trace";
    private static final List<Path> SEARCHED = List.of(
        Path.of("../shared/traces/conversation_trace.jsonl"),
        Path.of("../../shared/traces/conversation_trace.jsonl"));
    /** The trace file of the Mooncake paper's "Synthetic" workload, beside the conversation trace. */
    private static final String MOONCAKE_SYNTHETIC = "synthetic_trace.jsonl";
    private static final Map<String, List<TraceRequest>> SYNTHETIC = new ConcurrentHashMap<>();

    private static List<TraceRequest> mooncake;
    private static List<TraceRequest> mooncakeSynthetic;
    private static Path mooncakeSyntheticPath;

    @BeforeAll
    static void locateTrace() throws IOException
    {
        final String configured = System.getProperty(TRACE_PROPERTY);
        final Path trace;
        if (configured != null)
        {
            trace = Path.of(configured);
            assertThat(trace).as("-D" + TRACE_PROPERTY).isRegularFile();
        }
        else
        {
            trace = SEARCHED.stream().filter(Files::isRegularFile).findFirst().orElse(null);
        }
        mooncake = trace == null ? null : TraceReader.readAll(trace);
        mooncakeSyntheticPath = (trace == null ? SEARCHED.get(0) : trace).resolveSibling(MOONCAKE_SYNTHETIC);
        mooncakeSynthetic = Files.isRegularFile(mooncakeSyntheticPath) ? TraceReader.readAll(mooncakeSyntheticPath) : null;
    }

    private static List<TraceRequest> requireMooncakeSynthetic()
    {
        assumeTrue(mooncakeSynthetic != null, () -> "trace not found at " + mooncakeSyntheticPath.toAbsolutePath().normalize() +
            " (beside the conversation trace); it ships beside the repository in ../shared/traces, not in it");
        return mooncakeSynthetic;
    }

    private static List<TraceRequest> requireMooncake()
    {
        assumeTrue(mooncake != null, () -> "trace not found at " + SEARCHED.stream().map(p -> p.toAbsolutePath().normalize().toString()).toList() +
            " (nor set with -D" + TRACE_PROPERTY + "=FILE); it ships beside the repository in ../shared/traces, not in it");
        return mooncake;
    }

    private static List<TraceRequest> synthetic(final String name)
    {
        return SYNTHETIC.computeIfAbsent(name, n -> SyntheticTraces.generate(n, SyntheticTraces.DEFAULT_SEED));
    }

    private static ReplayResult replay(final String source, final List<TraceRequest> requests, final String tokens, final String policy)
    {
        return TraceReplay.run(source, requests, TraceReplay.parseCapacityTokens(tokens), ReplayPolicy.forName(policy));
    }

    private static String fourDecimals(final ReplayResult result)
    {
        return String.format(Locale.ROOT, "%.4f", result.hitRate());
    }

    @ParameterizedTest(name = "default >= LRU at {0} tokens on the Mooncake trace")
    @CsvSource({"1e5", "1e6", "3e6", "1e7", "unbounded"})
    void shouldNeverHitLessThanLruOnTheMooncakeTrace(final String tokens)
    {
        final List<TraceRequest> trace = requireMooncake();
        final ReplayResult lru = replay("mooncake", trace, tokens, "lru");
        final ReplayResult adaptive = replay("mooncake", trace, tokens, EvictionPolicies.DEFAULT);

        assertThat(adaptive.policy()).isEqualTo("adaptive");
        assertThat(adaptive.hitBlocks()).as("%s: default %.4f, LRU %.4f", tokens, adaptive.hitRate(), lru.hitRate()).isGreaterThanOrEqualTo(lru.hitBlocks());
    }

    @Test
    void shouldReachTheStatedFigureAt3e6TokensOnTheMooncakeTrace()
    {
        final ReplayResult adaptive = replay("mooncake", requireMooncake(), "3e6", EvictionPolicies.DEFAULT);

        assertThat(adaptive.hitRate()).isGreaterThanOrEqualTo(MINIMUM_AT_3E6);
        assertThat(fourDecimals(adaptive)).as("the figure docs/PERFORMANCE.md states").isEqualTo("0.1833");
    }

    @ParameterizedTest(name = "{0} on the Mooncake trace: {1} {2} {3} {4} {5}")
    @CsvSource({
        "lru,       0.0417, 0.0532, 0.1355, 0.2852, 0.3664",
        "chain,     0.0419, 0.0533, 0.1359, 0.2857, 0.3664",
        "probation, 0.0419, 0.0586, 0.1468, 0.2983, 0.3664",
        "admission, 0.0423, 0.0880, 0.1780, 0.2501, 0.3664",
        "frequency, 0.0439, 0.1039, 0.1876, 0.2496, 0.3664",
        "adaptive,  0.0431, 0.1028, 0.1833, 0.2956, 0.3664"})
    void shouldPinEachPolicyOnTheMooncakeTrace(final String policy, final String at1e5, final String at1e6, final String at3e6, final String at1e7,
        final String unbounded)
    {
        final List<TraceRequest> trace = requireMooncake();
        assertThat(List.of("1e5", "1e6", "3e6", "1e7", "unbounded").stream().map(tokens -> fourDecimals(replay("mooncake", trace, tokens, policy))))
            .as(policy).containsExactly(at1e5, at1e6, at3e6, at1e7, unbounded);
    }

    @ParameterizedTest(name = "default >= LRU at {0} tokens on the Mooncake synthetic trace: {1} against {2}")
    @CsvSource({"1e5, 0.0223, 0.0113", "1e6, 0.1515, 0.1395", "3e6, 0.3347, 0.3094", "1e7, 0.5730, 0.5665", "unbounded, 0.6396, 0.6396"})
    void shouldNeverHitLessThanLruOnTheMooncakeSyntheticTrace(final String tokens, final String stated, final String statedLru)
    {
        final List<TraceRequest> trace = requireMooncakeSynthetic();
        final ReplayResult lru = replay("mooncake-synthetic", trace, tokens, "lru");
        final ReplayResult adaptive = replay("mooncake-synthetic", trace, tokens, EvictionPolicies.DEFAULT);

        assertThat(adaptive.hitBlocks()).as("%s: default %.4f, LRU %.4f", tokens, adaptive.hitRate(), lru.hitRate()).isGreaterThanOrEqualTo(lru.hitBlocks());
        assertThat(List.of(fourDecimals(adaptive), fourDecimals(lru))).as("the figures docs/PERFORMANCE.md states").containsExactly(stated, statedLru);
    }

    @ParameterizedTest(name = "default >= LRU on {0} at {1} tokens: {2}")
    @CsvSource({
        "zipf-prefix, 1e5, 0.1572", "zipf-prefix, 1e6, 0.3625", "zipf-prefix, 3e6, 0.4581", "zipf-prefix, 1e7, 0.5522",
        "documents,   1e5, 0.0088", "documents,   1e6, 0.0502", "documents,   3e6, 0.0793", "documents,   1e7, 0.1026",
        "chat,        1e5, 0.0212", "chat,        1e6, 0.2102", "chat,        3e6, 0.5756", "chat,        1e7, 0.8402"})
    void shouldNeverHitLessThanLruOnTheSyntheticTraces(final String trace, final String tokens, final String stated)
    {
        final ReplayResult lru = replay(trace, synthetic(trace), tokens, "lru");
        final ReplayResult adaptive = replay(trace, synthetic(trace), tokens, EvictionPolicies.DEFAULT);

        assertThat(adaptive.hitBlocks()).as("%s at %s: default %.4f, LRU %.4f", trace, tokens, adaptive.hitRate(), lru.hitRate())
            .isGreaterThanOrEqualTo(lru.hitBlocks());
        assertThat(fourDecimals(adaptive)).as("the figure docs/PERFORMANCE.md states").isEqualTo(stated);
    }
}
