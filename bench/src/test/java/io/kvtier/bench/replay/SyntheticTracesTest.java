package io.kvtier.bench.replay;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SyntheticTracesTest
{
    private static long blocks(final List<TraceRequest> requests)
    {
        return requests.stream().mapToLong(TraceRequest::blocks).sum();
    }

    @ParameterizedTest
    @ValueSource(strings = {"zipf-prefix", "documents", "chat"})
    void shouldGiveTheSameTraceForTheSameSeed(final String name)
    {
        assertThat(SyntheticTraces.generate(name, 7)).isEqualTo(SyntheticTraces.generate(name, 7));
        assertThat(SyntheticTraces.generate(name, 7)).isNotEqualTo(SyntheticTraces.generate(name, 8));
    }

    @Test
    void shouldHaveTheDocumentedSizes()
    {
        // Pinned: docs/PERFORMANCE.md quotes them, and a change to a generator changes every figure there.
        final List<TraceRequest> zipf = SyntheticTraces.generate("zipf-prefix", SyntheticTraces.DEFAULT_SEED);
        final List<TraceRequest> documents = SyntheticTraces.generate("documents", SyntheticTraces.DEFAULT_SEED);
        final List<TraceRequest> chat = SyntheticTraces.generate("chat", SyntheticTraces.DEFAULT_SEED);
        assertThat(zipf).hasSize(40_000);
        assertThat(blocks(zipf)).isEqualTo(558_200);
        assertThat(documents).hasSize(6_000);
        assertThat(blocks(documents)).isEqualTo(622_499);
        assertThat(chat).hasSize(30_000);
        assertThat(blocks(chat)).isEqualTo(761_242);
    }

    @Test
    void shouldFollowEachSharedPrefixWithBlocksOfItsOwn()
    {
        final List<TraceRequest> trace = SyntheticTraces.zipfPrefix(3, 2_000, 100, 0.9);
        final Map<Long, Integer> seen = new HashMap<>();
        for (final TraceRequest request : trace)
        {
            for (final long id : request.hashIds())
            {
                seen.merge(id, 1, Integer::sum);
            }
        }
        for (final TraceRequest request : trace)
        {
            final long[] ids = request.hashIds();
            assertThat(seen.get(ids[ids.length - 1])).as("the last block is the request's own").isEqualTo(1);
            assertThat(request.inputLength()).isEqualTo(ids.length * 512L);
        }
        final long popular = trace.stream().filter(r -> r.hashIds()[0] == 1).count();
        assertThat(popular).as("the most popular prefix, by Zipf").isGreaterThan(trace.size() / 20);
    }

    @Test
    void shouldReadEachDocumentOnce()
    {
        final List<TraceRequest> trace = SyntheticTraces.documents(3, 2_000, 50, 0.3);
        final Set<Long> documentBlocks = new HashSet<>();
        int documents = 0;
        for (final TraceRequest request : trace)
        {
            if (request.blocks() >= 64)
            {
                documents++;
                for (final long id : request.hashIds())
                {
                    assertThat(documentBlocks.add(id)).isTrue();
                }
            }
        }
        assertThat(documents).isBetween(500, 700);
        assertThat(trace.stream().filter(r -> r.blocks() < 64).flatMapToLong(r -> java.util.Arrays.stream(r.hashIds())))
            .noneMatch(documentBlocks::contains);
    }

    @Test
    void shouldExtendAConversationsHistoryTurnByTurn()
    {
        final List<TraceRequest> trace = SyntheticTraces.chat(3, 5_000, 20, 0.15);
        final Map<Long, long[]> lastByFirstBlock = new HashMap<>();
        int continued = 0;
        for (final TraceRequest request : trace)
        {
            final long[] ids = request.hashIds();
            final long[] before = lastByFirstBlock.get(ids[0]);
            if (before != null)
            {
                continued++;
                assertThat(ids.length).isGreaterThan(before.length);
                assertThat(java.util.Arrays.copyOf(ids, before.length)).isEqualTo(before);
            }
            lastByFirstBlock.put(ids[0], ids);
        }
        assertThat(continued).as("turns that continue a conversation").isBetween(4_000, 4_500);
    }

    @Test
    void shouldNameTheShapesWhenTheNameIsUnknown()
    {
        assertThat(SyntheticTraces.names()).containsExactly("zipf-prefix", "documents", "chat");
        assertThatThrownBy(() -> SyntheticTraces.generate("loops", 1)).isInstanceOf(IllegalArgumentException.class)
            .hasMessage("--synthetic=loops is not a synthetic trace; expected one of zipf-prefix, documents, chat");
    }
}
