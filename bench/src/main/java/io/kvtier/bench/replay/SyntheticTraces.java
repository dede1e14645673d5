package io.kvtier.bench.replay;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Seeded, deterministic traces of shapes other than the Mooncake conversation trace, to check that an eviction
 * policy is not tuned to that one: the same seed gives the same requests on every machine and JDK. Hash ids are
 * allocated from 1 upwards, each request's prompt is its hash ids' blocks ({@code input_length = 512 × blocks}),
 * and the timestamp is the request's index.
 *
 * <table>
 *   <caption>The shapes, as {@link #generate} builds them</caption>
 *   <tr><th>name</th><th>shape</th><th>size</th></tr>
 *   <tr><td>{@code zipf-prefix}</td><td>{@link #zipfPrefix}: 40,000 independent short requests, each one of
 *       4,000 shared prefixes of 2 to 16 blocks, drawn by Zipf popularity with exponent 0.9, followed by 1 to 8
 *       blocks of its own that never come back</td><td>about 558,000 blocks</td></tr>
 *   <tr><td>{@code documents}</td><td>{@link #documents}: 6,000 requests; 30% read a new document of 64 to
 *       512 blocks once, the rest read one of 400 reused chains of 8 to 32 blocks (Zipf exponent 0.6) plus 0 to
 *       2 blocks of their own</td><td>about 617,000 blocks</td></tr>
 *   <tr><td>{@code chat}</td><td>{@link #chat}: 30,000 turns of 300 conversation slots taken uniformly at
 *       random; a turn re-reads its conversation and adds 1 to 6 blocks, and with probability 0.15 (or in an
 *       empty slot) a new conversation of 2 to 12 blocks starts instead: a block comes back soon or never, the
 *       shape recency suits best</td><td>about 740,000 blocks</td></tr>
 * </table>
 */
public final class SyntheticTraces
{
    /** The seed the documented figures use. */
    public static final long DEFAULT_SEED = 1;

    private static final List<String> NAMES = List.of("zipf-prefix", "documents", "chat");

    private SyntheticTraces()
    {
    }

    /** @return every name {@link #generate} accepts */
    public static List<String> names()
    {
        return NAMES;
    }

    /**
     * Builds one of the documented shapes with its documented parameters.
     *
     * @param name one of {@link #names()}, case-insensitive
     * @param seed any value; {@link #DEFAULT_SEED} for the documented figures
     * @return the requests in arrival order
     * @throws IllegalArgumentException naming the allowed values for any other name
     */
    public static List<TraceRequest> generate(final String name, final long seed)
    {
        return switch (name == null ? "" : name.toLowerCase(Locale.ROOT))
        {
            case "zipf-prefix" -> zipfPrefix(seed, 40_000, 4_000, 0.9);
            case "documents" -> documents(seed, 6_000, 400, 0.3);
            case "chat" -> chat(seed, 30_000, 300, 0.15);
            default -> throw new IllegalArgumentException("--synthetic=" + name + " is not a synthetic trace; expected one of " + String.join(", ", NAMES));
        };
    }

    /**
     * Independent short requests over shared prefixes: system prompts or few-shot examples of many sizes, some
     * far more popular than others, each followed by a question nobody asks again.
     *
     * @param seed     the generator's seed
     * @param requests how many requests
     * @param prefixes how many distinct prefixes, each of 2 to 16 blocks
     * @param skew     the Zipf exponent of their popularity
     * @return the requests
     */
    public static List<TraceRequest> zipfPrefix(final long seed, final int requests, final int prefixes, final double skew)
    {
        final Random random = new Random(seed);
        final Zipf popularity = new Zipf(prefixes, skew);
        final long[][] prefix = new long[prefixes][];
        long next = 1;
        for (int i = 0; i < prefixes; i++)
        {
            prefix[i] = new long[random.between(2, 16)];
            for (int j = 0; j < prefix[i].length; j++)
            {
                prefix[i][j] = next++;
            }
        }
        final List<TraceRequest> out = new ArrayList<>(requests);
        for (int r = 0; r < requests; r++)
        {
            final long[] shared = prefix[popularity.sample(random.uniform())];
            final int own = random.between(1, 8);
            final long[] ids = Arrays.copyOf(shared, shared.length + own);
            for (int j = 0; j < own; j++)
            {
                ids[shared.length + j] = next++;
            }
            out.add(request(r, ids));
        }
        return out;
    }

    /**
     * Long documents read once, between queries over a reused set of chains (a knowledge base, say): a scan that
     * flushes a recency cache.
     *
     * @param seed          the generator's seed
     * @param requests      how many requests
     * @param chains        how many reused chains, each of 8 to 32 blocks, chosen with Zipf exponent 0.6
     * @param documentShare the share of requests that read a new document of 64 to 512 blocks
     * @return the requests
     */
    public static List<TraceRequest> documents(final long seed, final int requests, final int chains, final double documentShare)
    {
        final Random random = new Random(seed);
        long next = 1;
        final long[][] chain = new long[chains][];
        for (int i = 0; i < chains; i++)
        {
            chain[i] = new long[random.between(8, 32)];
            for (int j = 0; j < chain[i].length; j++)
            {
                chain[i][j] = next++;
            }
        }
        final Zipf popularity = new Zipf(chains, 0.6);
        final List<TraceRequest> out = new ArrayList<>(requests);
        for (int r = 0; r < requests; r++)
        {
            final long[] ids;
            if (random.uniform() < documentShare)
            {
                ids = new long[random.between(64, 512)];
                for (int j = 0; j < ids.length; j++)
                {
                    ids[j] = next++;
                }
            }
            else
            {
                final long[] reused = chain[popularity.sample(random.uniform())];
                final int own = random.between(0, 2);
                ids = Arrays.copyOf(reused, reused.length + own);
                for (int j = 0; j < own; j++)
                {
                    ids[reused.length + j] = next++;
                }
            }
            out.add(request(r, ids));
        }
        return out;
    }

    /**
     * Multi-turn chats with short think times: each turn comes back to its conversation's whole history soon, or
     * the conversation is over, so what was used last is what comes back next.
     *
     * @param seed           the generator's seed
     * @param requests       how many turns
     * @param conversations  how many conversation slots, each taken with equal probability
     * @param endProbability the probability that a turn starts a new conversation of 2 to 12 blocks in its slot
     *                       instead of adding 1 to 6 blocks to the current one
     * @return the requests
     */
    public static List<TraceRequest> chat(final long seed, final int requests, final int conversations, final double endProbability)
    {
        final Random random = new Random(seed);
        long next = 1;
        final long[][] history = new long[conversations][];
        final List<TraceRequest> out = new ArrayList<>(requests);
        for (int r = 0; r < requests; r++)
        {
            final int slot = random.between(0, conversations - 1);
            final long[] ids;
            if (history[slot] == null || random.uniform() < endProbability)
            {
                ids = new long[random.between(2, 12)];
                for (int j = 0; j < ids.length; j++)
                {
                    ids[j] = next++;
                }
            }
            else
            {
                final long[] before = history[slot];
                final int added = random.between(1, 6);
                ids = Arrays.copyOf(before, before.length + added);
                for (int j = 0; j < added; j++)
                {
                    ids[before.length + j] = next++;
                }
            }
            history[slot] = ids;
            out.add(request(r, ids));
        }
        return out;
    }

    private static TraceRequest request(final int index, final long[] ids)
    {
        return new TraceRequest(index, (long)ids.length * TraceReplay.BLOCK_TOKENS, 1, ids);
    }

    /** SplitMix64: a small, fast, fully specified generator, so that a seed means the same trace everywhere. */
    private static final class Random
    {
        private long state;

        Random(final long seed)
        {
            state = seed;
        }

        long nextLong()
        {
            state += 0x9E3779B97F4A7C15L;
            long z = state;
            z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
            z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
            return z ^ (z >>> 31);
        }

        /** @return uniform in [0, 1) */
        double uniform()
        {
            return (nextLong() >>> 11) * 0x1.0p-53;
        }

        /** @return uniform in [low, high] */
        int between(final int low, final int high)
        {
            return low + (int)(uniform() * (high - low + 1));
        }
    }

    /** Zipf-distributed ranks 0 .. n - 1 by inversion of the cumulative distribution. */
    private static final class Zipf
    {
        private final double[] cumulative;

        Zipf(final int n, final double exponent)
        {
            cumulative = new double[n];
            double total = 0;
            for (int i = 0; i < n; i++)
            {
                total += 1 / Math.pow(i + 1, exponent);
                cumulative[i] = total;
            }
            for (int i = 0; i < n; i++)
            {
                cumulative[i] /= total;
            }
        }

        int sample(final double uniform)
        {
            final int found = Arrays.binarySearch(cumulative, uniform);
            return Math.min(cumulative.length - 1, found >= 0 ? found : -found - 1);
        }
    }
}
