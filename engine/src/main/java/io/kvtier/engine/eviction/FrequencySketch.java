package io.kvtier.engine.eviction;

/**
 * How often each key was seen lately, approximately: a count-min sketch of 4-bit counters (four per key, the
 * smallest is the estimate), all halved after every {@code 10 × counters} increments so that old popularity
 * fades, as in TinyLFU. It remembers keys that are no longer resident, which is what tells a key seen for the first time from
 * one coming back. Half a byte per counter; nothing allocated after construction. Not thread-safe.
 */
final class FrequencySketch
{
    /** The largest count a counter holds. */
    static final int MAX = 15;

    private static final long[] SEEDS = {0x9E3779B97F4A7C15L, 0xC2B2AE3D27D4EB4FL, 0x165667B19E3779F9L, 0xD6E8FEB86659FD93L};
    private static final long LOW_THREE_BITS = 0x7777777777777777L;

    private final long[] table;
    private final int mask;
    private final int halveAt;
    private int additions;

    /**
     * @param counters how many 4-bit counters: a power of two, at least 16
     */
    FrequencySketch(final int counters)
    {
        if (counters < 16 || Integer.bitCount(counters) != 1)
        {
            throw new IllegalArgumentException("counters=" + counters + " must be a power of two, at least 16");
        }
        table = new long[counters / 16];
        mask = table.length - 1;
        halveAt = (int)Math.min(Integer.MAX_VALUE, 10L * counters);
    }

    /**
     * How many counters a policy's sketch gets. A key's second sight can come long after its first, when the
     * pool has turned over many times (on the Mooncake conversation trace a conversation's next turn comes a
     * median 400 requests, about 10,000 blocks, later), so the sketch is sized for the traffic of that stretch
     * rather than for the pool alone: 16 counters per page, at least 2<sup>20</sup> (512 KiB). On that trace at
     * 3e6 tokens, with 2<sup>18</sup> counters the {@code admission} setting hit 0.147 of blocks, as collisions
     * passed first sights off as second ones; with 2<sup>20</sup>, 2<sup>22</sup> and 2<sup>24</sup> counters
     * 0.178, 0.181 and 0.181.
     *
     * @param pages the pages of the policy that owns the sketch
     * @return a power of two
     */
    static int countersFor(final int pages)
    {
        final long wanted = Math.max(1L << 20, 16L * pages);
        return (int)Math.min(1 << 30, Long.highestOneBit(wanted - 1) << 1);
    }

    /**
     * @param keyHash a key's hash
     * @return how often it was counted lately, from 0 to {@link #MAX}; may overestimate, never underestimates
     *         what was counted since the last halving
     */
    int frequency(final long keyHash)
    {
        int estimate = MAX;
        for (int i = 0; i < SEEDS.length; i++)
        {
            final long h = mix(keyHash + SEEDS[i]);
            final int shift = ((int)h & 15) << 2;
            estimate = Math.min(estimate, (int)(table[(int)(h >>> 32) & mask] >>> shift) & 15);
        }
        return estimate;
    }

    /**
     * Counts a key once more; the {@code 10 × counters}-th increment since the last halving halves all counters.
     *
     * @param keyHash a key's hash
     */
    void increment(final long keyHash)
    {
        for (int i = 0; i < SEEDS.length; i++)
        {
            final long h = mix(keyHash + SEEDS[i]);
            final int shift = ((int)h & 15) << 2;
            final int index = (int)(h >>> 32) & mask;
            if (((table[index] >>> shift) & 15) < MAX)
            {
                table[index] += 1L << shift;
            }
        }
        if (++additions >= halveAt)
        {
            halve();
        }
    }

    /**
     * Counts a key once more and returns its estimate afterwards: {@link #increment} then {@link #frequency}, with
     * the key's four counters found once rather than twice (a policy asks both on every insertion and hit).
     *
     * @param keyHash a key's hash
     * @return {@link #frequency} of the key after the increment
     */
    int incrementAndEstimate(final long keyHash)
    {
        final long h0 = mix(keyHash + SEEDS[0]);
        final long h1 = mix(keyHash + SEEDS[1]);
        final long h2 = mix(keyHash + SEEDS[2]);
        final long h3 = mix(keyHash + SEEDS[3]);
        add(h0);
        add(h1);
        add(h2);
        add(h3);
        if (++additions >= halveAt)
        {
            halve();
        }
        // Read after all four additions: two of the counters may be one, and it then counts twice.
        return Math.min(Math.min(count(h0), count(h1)), Math.min(count(h2), count(h3)));
    }

    /** Adds one to the counter a mixed hash names, unless it holds {@link #MAX}. */
    private void add(final long h)
    {
        final int shift = ((int)h & 15) << 2;
        final int index = (int)(h >>> 32) & mask;
        if (((table[index] >>> shift) & 15) < MAX)
        {
            table[index] += 1L << shift;
        }
    }

    /** @return the counter a mixed hash names */
    private int count(final long h)
    {
        return (int)(table[(int)(h >>> 32) & mask] >>> (((int)h & 15) << 2)) & 15;
    }

    private void halve()
    {
        for (int i = 0; i < table.length; i++)
        {
            table[i] = (table[i] >>> 1) & LOW_THREE_BITS;
        }
        additions = 0;
    }

    /**
     * The SplitMix64 finaliser: a bijection that spreads every input bit over the output.
     *
     * @param z any value
     * @return its mix
     */
    static long mix(final long z)
    {
        long x = z;
        x = (x ^ (x >>> 30)) * 0xBF58476D1CE4E5B9L;
        x = (x ^ (x >>> 27)) * 0x94D049BB133111EBL;
        return x ^ (x >>> 31);
    }
}
