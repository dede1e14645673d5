package io.kvtier.bench.replay;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static io.kvtier.bench.replay.TraceReplay.BLOCK_TOKENS;
import static io.kvtier.bench.replay.TraceReplay.UNBOUNDED;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Replays random traces and compares the counts with deliberately naive models: a LinkedHashMap in
 * access order for LRU, and for Belady a scan of the rest of the trace at every eviction.
 */
class ReplayModelTest
{
    /** Counts a model replay produces, to compare with a {@link ReplayResult}. */
    private record Counts(long hitBlocks, long evictions, long peak)
    {
    }

    /**
     * Requests that share prefixes, as conversations do: the first blocks of one of a few chains
     * (ids {@code 100 * chain + i}), then a few blocks from a small pool (ids 1000 and up), never repeating an
     * id within a request.
     */
    @Provide
    Arbitrary<List<TraceRequest>> traces()
    {
        final Arbitrary<TraceRequest> request = Combinators.combine(
            Arbitraries.integers().between(0, 3),
            Arbitraries.integers().between(0, 6),
            Arbitraries.longs().between(1000, 1015).list().uniqueElements().ofMaxSize(4))
            .as((chain, prefix, tail) ->
            {
                final long[] ids = new long[prefix + tail.size()];
                for (int i = 0; i < prefix; i++)
                {
                    ids[i] = 100L * chain + i;
                }
                for (int i = 0; i < tail.size(); i++)
                {
                    ids[prefix + i] = tail.get(i);
                }
                return new TraceRequest(0, (long)ids.length * BLOCK_TOKENS, 1, ids);
            });
        return request.list().ofMaxSize(60);
    }

    /** Mostly small capacities with a ragged remainder of tokens, sometimes unbounded. */
    @Provide
    Arbitrary<Long> capacities()
    {
        final Arbitrary<Long> bounded = Combinators.combine(Arbitraries.longs().between(1, 16), Arbitraries.longs().between(0, BLOCK_TOKENS - 1))
            .as((blocks, extra) -> blocks * BLOCK_TOKENS + extra);
        return Arbitraries.frequencyOf(Tuple.of(9, bounded), Tuple.of(1, Arbitraries.just(UNBOUNDED)));
    }

    @Property(tries = 400)
    void shouldMatchALinkedHashMapLru(@ForAll("traces") final List<TraceRequest> trace, @ForAll("capacities") final long capacityTokens)
    {
        final ReplayResult result = TraceReplay.run("random", trace, capacityTokens, ReplayPolicy.lru());

        final Counts model = lruModel(trace, capacityTokens == UNBOUNDED ? Long.MAX_VALUE : capacityTokens / BLOCK_TOKENS);
        assertThat(new Counts(result.hitBlocks(), result.evictions(), result.peakCachedBlocks())).isEqualTo(model);
        assertThat(result.totalBlocks()).isEqualTo(trace.stream().mapToLong(TraceRequest::blocks).sum());
        assertThat(result.requests()).isEqualTo(trace.size());
    }

    /**
     * Any of the engine's policies, whatever it evicts: at most the capacity resident, one eviction per insertion
     * into a full cache, and unbounded exactly LRU's hits (nothing is evicted, so the order cannot matter).
     */
    @Property(tries = 300)
    void shouldKeepEveryEnginePolicyWithinItsCapacity(
        @ForAll("traces") final List<TraceRequest> trace,
        @ForAll("capacities") final long capacityTokens,
        @ForAll("enginePolicies") final String policy)
    {
        final ReplayResult result = TraceReplay.run("random", trace, capacityTokens, ReplayPolicy.forName(policy));
        final long distinct = trace.stream().flatMapToLong(request -> java.util.Arrays.stream(request.hashIds())).distinct().count();
        final long capacityBlocks = capacityTokens == UNBOUNDED ? Long.MAX_VALUE : capacityTokens / BLOCK_TOKENS;

        assertThat(result.peakCachedBlocks()).isEqualTo(Math.min(distinct, capacityBlocks));
        assertThat(result.hitBlocks()).isLessThanOrEqualTo(TraceReplay.run("random", trace, UNBOUNDED, ReplayPolicy.lru()).hitBlocks());
        if (capacityTokens == UNBOUNDED)
        {
            assertThat(result.hitBlocks()).isEqualTo(lruModel(trace, Long.MAX_VALUE).hitBlocks());
            assertThat(result.evictions()).isZero();
        }
    }

    @Provide
    Arbitrary<String> enginePolicies()
    {
        return Arbitraries.of(io.kvtier.engine.eviction.EvictionPolicies.names());
    }

    @Property(tries = 400)
    void shouldHitAsOftenAsTheLinkedHashMapBaseline(@ForAll("traces") final List<TraceRequest> trace, @ForAll("capacities") final long capacityTokens)
    {
        final ReplayResult result = TraceReplay.run("random", trace, capacityTokens, ReplayPolicy.lru());

        assertThat(LinkedHashMapLru.hitBlocks(trace, result.capacityBlocks())).isEqualTo(result.hitBlocks());
    }

    @Property(tries = 400)
    void shouldMatchANaiveBelady(
        @ForAll("traces") final List<TraceRequest> trace,
        @ForAll("capacities") final long capacityTokens,
        @ForAll final NextUse nextUse,
        @ForAll final Admission admission)
    {
        final ReplayResult result = TraceReplay.run("random", trace, capacityTokens, ReplayPolicy.belady(nextUse, admission));

        final long capacityBlocks = capacityTokens == UNBOUNDED ? Long.MAX_VALUE : capacityTokens / BLOCK_TOKENS;
        final Counts model = beladyModel(trace, capacityBlocks, nextUse, admission);
        assertThat(new Counts(result.hitBlocks(), result.evictions(), result.peakCachedBlocks())).isEqualTo(model);
    }

    private static Counts lruModel(final List<TraceRequest> trace, final long capacity)
    {
        final LinkedHashMap<Long, Boolean> cache = new LinkedHashMap<>(16, 0.75f, true);
        long hits = 0;
        long evictions = 0;
        long peak = 0;
        for (final TraceRequest request : trace)
        {
            final long[] ids = request.hashIds();
            int run = 0;
            while (run < ids.length && cache.containsKey(ids[run]))
            {
                run++;
            }
            hits += run;
            for (final long id : ids)
            {
                if (cache.get(id) == null)
                {
                    if (cache.size() == capacity)
                    {
                        final Iterator<Long> eldest = cache.keySet().iterator();
                        eldest.next();
                        eldest.remove();
                        evictions++;
                    }
                    cache.put(id, Boolean.TRUE);
                    peak = Math.max(peak, cache.size());
                }
            }
        }
        return new Counts(hits, evictions, peak);
    }

    private static Counts beladyModel(final List<TraceRequest> trace, final long capacity, final NextUse granularity, final Admission admission)
    {
        final List<long[]> requests = new ArrayList<>();
        trace.forEach(request -> requests.add(request.hashIds()));
        final LinkedHashMap<Long, Boolean> cache = new LinkedHashMap<>(16, 0.75f, true);
        long hits = 0;
        long evictions = 0;
        long peak = 0;
        long position = 0;
        for (int r = 0; r < requests.size(); r++)
        {
            final long[] ids = requests.get(r);
            int run = 0;
            while (run < ids.length && cache.containsKey(ids[run]))
            {
                run++;
            }
            hits += run;
            for (int i = 0; i < ids.length; i++, position++)
            {
                final long id = ids[i];
                if (cache.get(id) != null)
                {
                    continue;
                }
                if (cache.size() == capacity)
                {
                    long victim = -1;
                    long furthest = -1;
                    // Access order is least recently used first, so on a tie the first found stays chosen.
                    for (final Map.Entry<Long, Boolean> entry : cache.entrySet())
                    {
                        final long next = nextUse(requests, entry.getKey(), r, i, granularity);
                        if (next > furthest)
                        {
                            furthest = next;
                            victim = entry.getKey();
                        }
                    }
                    if (admission == Admission.BYPASS && nextUse(requests, id, r, i + 1, granularity) >= furthest)
                    {
                        continue;
                    }
                    cache.remove(victim);
                    evictions++;
                }
                cache.put(id, Boolean.TRUE);
                peak = Math.max(peak, cache.size());
            }
        }
        return new Counts(hits, evictions, peak);
    }

    /**
     * @return when {@code id} is next referenced at or after position {@code from} of request {@code r}: the
     *         request's index, or the reference's position in the flattened trace
     */
    private static long nextUse(final List<long[]> requests, final long id, final int r, final int from, final NextUse granularity)
    {
        long position = 0;
        for (int q = 0; q < r; q++)
        {
            position += requests.get(q).length;
        }
        for (int q = r; q < requests.size(); q++)
        {
            final long[] ids = requests.get(q);
            for (int i = q == r ? from : 0; i < ids.length; i++)
            {
                if (ids[i] == id)
                {
                    return granularity == NextUse.REQUEST ? q : position + i;
                }
            }
            position += ids.length;
        }
        return Long.MAX_VALUE;
    }
}
