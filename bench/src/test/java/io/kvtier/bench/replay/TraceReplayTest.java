package io.kvtier.bench.replay;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

import static io.kvtier.bench.replay.TraceReplay.BLOCK_TOKENS;
import static io.kvtier.bench.replay.TraceReplay.UNBOUNDED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TraceReplayTest
{
    @TempDir
    Path dir;

    /** Writes one request per id array and returns the file, so each test replays through the reader. */
    private Path trace(final long[]... requests) throws IOException
    {
        final String text = Arrays.stream(requests)
            .map(ids -> "{\"timestamp\": 0, \"input_length\": " + ids.length * BLOCK_TOKENS + ", \"output_length\": 1, \"hash_ids\": " +
                Arrays.toString(ids) + "}")
            .collect(Collectors.joining("\n", "", "\n"));
        return Files.writeString(dir.resolve("trace.jsonl"), text);
    }

    private static long[] ids(final long... ids)
    {
        return ids;
    }

    private static long blocks(final long blocks)
    {
        return blocks * BLOCK_TOKENS;
    }

    @Test
    void shouldCountOnlyTheLeadingRunOfCachedBlocks() throws IOException
    {
        // Block 3 is cached when the second request arrives, but it follows the miss on 9: a prefix
        // cache cannot use it.
        final ReplayResult result = TraceReplay.run(trace(ids(1, 2, 3), ids(1, 9, 3)), UNBOUNDED, ReplayPolicy.lru());

        assertThat(result.hitBlocks()).isEqualTo(1);
        assertThat(result.totalBlocks()).isEqualTo(6);
        assertThat(result.hitRate()).isEqualTo(1.0 / 6);
        assertThat(result.requests()).isEqualTo(2);
    }

    @Test
    void shouldJudgeHitsOnArrivalBeforeTheRequestTouchesAnything() throws IOException
    {
        // Within one request a repeated block was inserted by that request itself: not a hit.
        final ReplayResult result = TraceReplay.run(trace(ids(5, 5)), UNBOUNDED, ReplayPolicy.lru());

        assertThat(result.hitBlocks()).isZero();
        assertThat(result.peakCachedBlocks()).isEqualTo(1);
    }

    @Test
    void shouldEvictTheLeastRecentlyUsedBlock() throws IOException
    {
        // Three blocks fit. [4] evicts 1, the oldest; [1] then evicts 2; [3] is still there.
        final ReplayResult result = TraceReplay.run(trace(ids(1, 2, 3), ids(4), ids(1), ids(3), ids(2)), blocks(3), ReplayPolicy.lru());

        assertThat(result.hitBlocks()).isEqualTo(1);
        assertThat(result.evictions()).isEqualTo(3);
        assertThat(result.peakCachedBlocks()).isEqualTo(3);
    }

    @Test
    void shouldRefreshRecencyOnAHit() throws IOException
    {
        // The hit on 1 makes 2 the oldest, so [4] evicts 2 and 1 and 3 stay.
        final ReplayResult result = TraceReplay.run(trace(ids(1, 2, 3), ids(1), ids(4), ids(1, 3), ids(2)), blocks(3), ReplayPolicy.lru());

        assertThat(result.hitBlocks()).isEqualTo(1 + 2);
        assertThat(result.evictions()).isEqualTo(2);
    }

    @Test
    void shouldTouchAndInsertInOrderFirstToLast() throws IOException
    {
        // Two blocks fit and the request has three, so inserting 3 evicts 1 (its own first block) and
        // the request leaves {2, 3} behind: touched in order, the last blocks are the most recent.
        final ReplayResult result = TraceReplay.run(trace(ids(1, 2, 3), ids(2, 3), ids(1)), blocks(2), ReplayPolicy.lru());

        assertThat(result.hitBlocks()).isEqualTo(2);
    }

    @Test
    void shouldTouchHitsInOrderToo() throws IOException
    {
        // [1, 2] hits both, leaving 2 the most recent, so [3] evicts 1 and [2] still hits.
        final ReplayResult result = TraceReplay.run(trace(ids(2, 1), ids(1, 2), ids(3), ids(2), ids(1)), blocks(2), ReplayPolicy.lru());

        assertThat(result.hitBlocks()).isEqualTo(2 + 1);
    }

    @Test
    void shouldRoundTheCapacityDownToWholeBlocks() throws IOException
    {
        final Path trace = trace(ids(1, 2, 3), ids(1));

        final ReplayResult justUnder = TraceReplay.run(trace, blocks(3) - 1, ReplayPolicy.lru());
        final ReplayResult exact = TraceReplay.run(trace, blocks(3), ReplayPolicy.lru());

        assertThat(justUnder.capacityBlocks()).isEqualTo(2);
        assertThat(justUnder.hitBlocks()).isZero();
        assertThat(exact.capacityBlocks()).isEqualTo(3);
        assertThat(exact.hitBlocks()).isEqualTo(1);
        assertThat(TraceReplay.capacityBlocks(BLOCK_TOKENS)).isEqualTo(1);
        assertThat(TraceReplay.capacityBlocks(1_000_000)).isEqualTo(1953);
    }

    @Test
    void shouldNeverEvictWhenUnbounded() throws IOException
    {
        final ReplayResult result = TraceReplay.run(trace(ids(1, 2, 3), ids(4, 5), ids(1, 2, 3, 4), ids(4, 5)), UNBOUNDED, ReplayPolicy.lru());

        assertThat(result.unbounded()).isTrue();
        assertThat(result.capacityBlocks()).isEqualTo(UNBOUNDED);
        assertThat(result.evictions()).isZero();
        assertThat(result.peakCachedBlocks()).isEqualTo(5);
        assertThat(result.hitBlocks()).isEqualTo(4 + 2);
    }

    @Test
    void shouldGrowTheIndexPastItsInitialSizeWithoutLosingBlocks() throws IOException
    {
        // 10,000 distinct blocks outgrow the index's first table and recency list several times over.
        final long[] first = new long[10_000];
        Arrays.setAll(first, i -> 3L * i);
        final long[] again = first.clone();

        final ReplayResult unbounded = TraceReplay.run(trace(first, again), UNBOUNDED, ReplayPolicy.lru());
        final ReplayResult bounded = TraceReplay.run(trace(first, again), blocks(9_000), ReplayPolicy.lru());

        assertThat(unbounded.hitBlocks()).isEqualTo(10_000);
        assertThat(bounded.hitBlocks()).isZero();
        assertThat(bounded.evictions()).isEqualTo(1_000 + 10_000);
        assertThat(bounded.peakCachedBlocks()).isEqualTo(9_000);
    }

    @ParameterizedTest
    @ValueSource(longs = {511, 0, -1, Long.MIN_VALUE})
    void shouldRejectACapacityBelowOneBlock(final long capacityTokens) throws IOException
    {
        final Path trace = trace(ids(1));

        assertThatThrownBy(() -> TraceReplay.run(trace, capacityTokens, ReplayPolicy.lru()))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("--capacity-tokens=" + capacityTokens)
            .hasMessageContaining("at least 512 tokens")
            .hasMessageContaining("unbounded");
    }

    @Test
    void shouldParseCapacitiesAsACommandLineSpellsThem()
    {
        assertThat(TraceReplay.parseCapacityTokens("1e5")).isEqualTo(100_000);
        assertThat(TraceReplay.parseCapacityTokens("3E6")).isEqualTo(3_000_000);
        assertThat(TraceReplay.parseCapacityTokens(" 10_000_000 ")).isEqualTo(10_000_000);
        assertThat(TraceReplay.parseCapacityTokens("Unbounded")).isEqualTo(UNBOUNDED);
        for (final String bad : List.of("", "lots", "1.5", "1e-3", "1e30"))
        {
            assertThatThrownBy(() -> TraceReplay.parseCapacityTokens(bad))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("--capacity-tokens=" + bad + " is not a capacity");
        }
    }

    @Test
    void shouldReportTheLineOfMalformedInputDuringAReplay() throws IOException
    {
        final Path trace = Files.writeString(dir.resolve("bad.jsonl"),
            "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [1]}\n" +
            "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n");

        for (final ReplayPolicy policy : List.of(ReplayPolicy.lru(), ReplayPolicy.belady()))
        {
            assertThatThrownBy(() -> TraceReplay.run(trace, UNBOUNDED, policy))
                .isInstanceOf(TraceFormatException.class)
                .hasMessage(trace + ":2:55: field \"hash_ids\": missing from the object that starts at column 1; every request needs timestamp, input_length, " +
                    "output_length and hash_ids");
        }
    }

    @Test
    void shouldEvictTheBlockUsedFurthestInTheFutureUnderBelady() throws IOException
    {
        // Two blocks fit. At [3], block 1 is wanted again and 2 never: Belady evicts 2, LRU evicts 1.
        final Path trace = trace(ids(1), ids(2), ids(3), ids(1));

        assertThat(TraceReplay.run(trace, blocks(2), ReplayPolicy.belady()).hitBlocks()).isEqualTo(1);
        assertThat(TraceReplay.run(trace, blocks(2), ReplayPolicy.lru()).hitBlocks()).isZero();
    }

    @Test
    void shouldBreakRequestGranularTiesLeastRecentlyUsedFirst() throws IOException
    {
        // At [3], blocks 1 and 2 are both next wanted by the last request. Per request they tie and 1, the
        // less recently used, goes, which breaks the last request's leading run; per block, 2 is wanted
        // later (deeper in the prefix) and goes, so the last request still hits on 1.
        final Path trace = trace(ids(1, 2), ids(3), ids(1, 2));

        assertThat(TraceReplay.run(trace, blocks(2), ReplayPolicy.belady()).hitBlocks()).isZero();
        assertThat(TraceReplay.run(trace, blocks(2), ReplayPolicy.belady(NextUse.BLOCK, Admission.ALWAYS)).hitBlocks()).isEqualTo(1);
    }

    @Test
    void shouldLetABlockNeededNoSoonerBypassAFullCache() throws IOException
    {
        // One block fits. Block 2 is never used again, so with bypass it is not cached and 1 survives.
        final Path trace = trace(ids(1), ids(2), ids(1));

        final ReplayResult always = TraceReplay.run(trace, blocks(1), ReplayPolicy.belady());
        final ReplayResult bypass = TraceReplay.run(trace, blocks(1), ReplayPolicy.forName("belady-bypass"));

        assertThat(always.hitBlocks()).isZero();
        assertThat(always.evictions()).isEqualTo(2);
        assertThat(bypass.hitBlocks()).isEqualTo(1);
        assertThat(bypass.evictions()).isZero();
    }

    @Test
    void shouldComputeNextUsesPerRequestOrPerBlock()
    {
        final List<TraceRequest> requests = List.of(request(1, 2), request(2), request(1, 3));
        final long never = BlockCache.NEVER;

        assertThat(TraceReplay.nextUses(requests, NextUse.REQUEST)).containsExactly(2, 1, never, never, never);
        assertThat(TraceReplay.nextUses(requests, NextUse.BLOCK)).containsExactly(3, 2, never, never, never);
    }

    @Test
    void shouldReplayRequestsHeldInMemoryLikeAFile() throws IOException
    {
        final List<TraceRequest> requests = List.of(request(1, 2, 3), request(1, 2, 4), request(4));
        final Path trace = trace(ids(1, 2, 3), ids(1, 2, 4), ids(4));

        for (final String name : ReplayPolicy.names())
        {
            final ReplayResult fromFile = TraceReplay.run(trace, blocks(3), ReplayPolicy.forName(name));
            final ReplayResult inMemory = TraceReplay.run("memory", requests, blocks(3), ReplayPolicy.forName(name));
            assertThat(inMemory.hitBlocks()).as(name).isEqualTo(fromFile.hitBlocks());
            assertThat(inMemory.evictions()).as(name).isEqualTo(fromFile.evictions());
            assertThat(inMemory.policy()).isEqualTo(name);
        }
    }

    @Test
    void shouldTellTheEnginesPolicyEachBlocksParent() throws IOException
    {
        // Three blocks fit. [4] makes room: chain-aware recency evicts 3, the tail of [1 2 3], so [1 2] still
        // hits both; LRU evicts 1, the chain's head, and [1 2] hits nothing.
        final Path trace = trace(ids(1, 2, 3), ids(4), ids(1, 2));

        assertThat(TraceReplay.run(trace, blocks(3), ReplayPolicy.forName("chain")).hitBlocks()).isEqualTo(2);
        assertThat(TraceReplay.run(trace, blocks(3), ReplayPolicy.lru()).hitBlocks()).isZero();
    }

    @Test
    void shouldKeepEveryEnginePolicyWithinItsCapacity() throws IOException
    {
        final Path trace = trace(ids(1, 2, 3, 4, 5), ids(1, 2, 6), ids(7, 8, 9, 10), ids(1, 2, 3), ids(11));
        for (final String name : io.kvtier.engine.eviction.EvictionPolicies.names())
        {
            final ReplayResult result = TraceReplay.run(trace, blocks(4), ReplayPolicy.forName(name));
            assertThat(result.peakCachedBlocks()).as(name).isEqualTo(4);
            assertThat(result.evictions()).as(name).isGreaterThanOrEqualTo(11 - 4);
            assertThat(result.policy()).isEqualTo(name);
        }
    }

    @Test
    void shouldNameTheAllowedPoliciesForAnUnknownOne()
    {
        assertThat(ReplayPolicy.forName("LRU")).isEqualTo(ReplayPolicy.lru());
        assertThat(ReplayPolicy.forName("Adaptive")).isEqualTo(ReplayPolicy.defaultPolicy());
        assertThat(ReplayPolicy.forName("belady")).isEqualTo(ReplayPolicy.belady());
        assertThatThrownBy(() -> ReplayPolicy.forName("fifo"))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessage("--policy=fifo is not a replay policy; expected one of lru, chain, probation, admission, frequency, adaptive, " +
                "belady, belady-bypass, belady-block, belady-block-bypass");
        assertThatThrownBy(() -> ReplayPolicy.engine("belady"))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("'belady' is not an engine eviction policy");
    }

    private static TraceRequest request(final long... ids)
    {
        return new TraceRequest(0, (long)ids.length * BLOCK_TOKENS, 1, ids);
    }
}
