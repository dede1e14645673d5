package io.kvtier.bench.replay;

import io.kvtier.collections.KeyTable;
import io.kvtier.collections.KeyTableDescriptor;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Replays a Mooncake-format trace through a block cache of a given capacity and counts prefix hits, with
 * the semantics the package documentation states.
 *
 * <pre>{@code
 * ReplayResult result = TraceReplay.run(Path.of("conversation_trace.jsonl"), 1_000_000, ReplayPolicy.lru());
 * System.out.print(result.toText());
 * }</pre>
 *
 * <p>The trace is read whole first: the engine's policies size their arrays once, for the capacity or for the
 * trace's blocks if fewer, as the engine sizes them for its pool. An offline policy then computes each
 * reference's next use backwards through a {@link KeyTable} (its aux word holds the position where the key was
 * last seen) before replaying.
 */
public final class TraceReplay
{
    /** Tokens per block. */
    public static final int BLOCK_TOKENS = 512;

    /** A capacity, in tokens or blocks, that never evicts. */
    public static final long UNBOUNDED = Long.MAX_VALUE;

    private static final String CAPACITY_OPTION = "--capacity-tokens";

    private TraceReplay()
    {
    }

    /**
     * @param capacityTokens a capacity in tokens, or {@link #UNBOUNDED}
     * @return {@code floor(capacityTokens / 512)} blocks, or {@link #UNBOUNDED}
     * @throws IllegalArgumentException if the capacity holds less than one block
     */
    public static long capacityBlocks(final long capacityTokens)
    {
        if (capacityTokens == UNBOUNDED)
        {
            return UNBOUNDED;
        }
        if (capacityTokens < BLOCK_TOKENS)
        {
            throw new IllegalArgumentException(CAPACITY_OPTION + "=" + capacityTokens + " holds less than one block: the capacity must be at least " +
                BLOCK_TOKENS + " tokens (one block of " + BLOCK_TOKENS + "; it is rounded down to whole blocks), or unbounded");
        }
        return capacityTokens / BLOCK_TOKENS;
    }

    /**
     * Parses a capacity as a command line spells it: a whole number of tokens, plain ({@code 3000000},
     * {@code 3_000_000}) or in scientific notation ({@code 3e6}), or {@code unbounded}.
     *
     * @param text the option's value
     * @return the capacity in tokens, or {@link #UNBOUNDED}; not yet checked by {@link #capacityBlocks}
     * @throws IllegalArgumentException naming {@code --capacity-tokens} for anything else
     */
    public static long parseCapacityTokens(final String text)
    {
        final String trimmed = text == null ? "" : text.strip().replace("_", "");
        if (trimmed.toLowerCase(Locale.ROOT).equals("unbounded"))
        {
            return UNBOUNDED;
        }
        try
        {
            return new BigDecimal(trimmed).longValueExact();
        }
        catch (final NumberFormatException | ArithmeticException ex)
        {
            throw new IllegalArgumentException(CAPACITY_OPTION + "=" + text + " is not a capacity: expected a whole number of tokens " +
                "such as 1000000 or 1e6 (at least " + BLOCK_TOKENS + "), or 'unbounded'", ex);
        }
    }

    /**
     * Replays a trace file.
     *
     * @param trace          a JSON-lines Mooncake trace
     * @param capacityTokens the cache capacity in tokens, or {@link #UNBOUNDED}
     * @param policy         the eviction policy
     * @return what the replay counted
     * @throws IOException              if the trace cannot be read
     * @throws TraceFormatException     if a line of it is not a valid request
     * @throws IllegalArgumentException if the capacity holds less than one block
     */
    public static ReplayResult run(final Path trace, final long capacityTokens, final ReplayPolicy policy) throws IOException
    {
        final long capacityBlocks = capacityBlocks(capacityTokens);
        final long start = System.nanoTime();
        return replayAll(trace.toString(), TraceReader.readAll(trace), capacityTokens, capacityBlocks, policy, start);
    }

    /**
     * Replays requests held in memory.
     *
     * @param source         a name for the requests in the result
     * @param requests       the requests in arrival order
     * @param capacityTokens the cache capacity in tokens, or {@link #UNBOUNDED}
     * @param policy         the eviction policy
     * @return what the replay counted
     * @throws IllegalArgumentException if the capacity holds less than one block
     */
    public static ReplayResult run(final String source, final List<TraceRequest> requests, final long capacityTokens, final ReplayPolicy policy)
    {
        final long capacityBlocks = capacityBlocks(capacityTokens);
        final long start = System.nanoTime();
        return replayAll(source, requests, capacityTokens, capacityBlocks, policy, start);
    }

    private static ReplayResult replayAll(
        final String source,
        final List<TraceRequest> requests,
        final long capacityTokens,
        final long capacityBlocks,
        final ReplayPolicy policy,
        final long start)
    {
        final long[] nextUses = policy.nextUse() == null ? null : nextUses(requests, policy.nextUse());
        long totalBlocks = 0;
        for (final TraceRequest request : requests)
        {
            totalBlocks += request.blocks();
        }
        final Counts counts = new Counts();
        try (BlockCache cache = policy.newCache(capacityBlocks, totalBlocks))
        {
            int offset = 0;
            for (final TraceRequest request : requests)
            {
                counts.add(request, cache.replay(request.hashIds(), nextUses, offset));
                offset += request.blocks();
            }
            return counts.result(source, policy, capacityTokens, capacityBlocks, cache, start);
        }
    }

    /**
     * @return for each reference of the flattened trace, when its block is next referenced in the given
     *         granularity, or {@link BlockCache#NEVER}
     */
    static long[] nextUses(final List<TraceRequest> requests, final NextUse granularity)
    {
        long total = 0;
        for (final TraceRequest request : requests)
        {
            total += request.blocks();
        }
        if (total > Integer.MAX_VALUE - 8)
        {
            throw new IllegalArgumentException("an offline policy holds the whole trace in memory, and " + total + " blocks are too many");
        }
        final long[] next = new long[(int)total];
        if (total == 0)
        {
            return next;
        }
        try (Arena arena = Arena.ofConfined())
        {
            // Distinct blocks are at most all of them, so the table never fills.
            final KeyTable lastSeen = KeyTable.format(arena.allocate(KeyTableDescriptor.regionLength(total), 64), total);
            int position = (int)total;
            for (int r = requests.size() - 1; r >= 0; r--)
            {
                final long[] ids = requests.get(r).hashIds();
                for (int i = ids.length - 1; i >= 0; i--)
                {
                    position--;
                    final int slot = lastSeen.insert(BlockIndex.KEY_HIGH, ids[i]);
                    // A freshly claimed slot has flags 0; flag 1 marks that aux holds a position.
                    next[position] = lastSeen.flags(slot) == 0 ? BlockCache.NEVER : lastSeen.aux(slot);
                    lastSeen.flags(slot, 1);
                    lastSeen.aux(slot, granularity == NextUse.BLOCK ? position : r);
                }
            }
        }
        return next;
    }

    /** Running totals of one replay. */
    private static final class Counts
    {
        private long requests;
        private long totalBlocks;
        private long hitBlocks;

        void add(final TraceRequest request, final int hits)
        {
            requests++;
            totalBlocks += request.blocks();
            hitBlocks += hits;
        }

        ReplayResult result(
            final String source,
            final ReplayPolicy policy,
            final long capacityTokens,
            final long capacityBlocks,
            final BlockCache cache,
            final long start)
        {
            return new ReplayResult(
                source,
                policy.name(),
                capacityTokens,
                capacityBlocks,
                requests,
                totalBlocks,
                hitBlocks,
                cache.evictions(),
                cache.peakSize(),
                System.nanoTime() - start);
        }
    }
}
