package io.kvtier.engine.status;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A latency histogram with one writer and any number of readers, for the engine thread's hot path: no
 * lock, no allocation and no atomic read-modify-write when it records. The buckets are fixed, on a
 * 1-2.5-5 scale in nanoseconds from 1 µs to 10 s ({@link #UPPER_BOUNDS_NANOS}), plus one for anything
 * longer, so that every histogram of the engine has the same bounds and a dashboard can add them up.
 *
 * <p>Its one writer (the thread named where the histogram is made: the engine thread for the engine's)
 * records with a plain read and a store-opaque of each word it changes, which a reader in another thread
 * loads opaque: each word a reader sees is one the writer stored, never a torn value, but the words are
 * not read as one snapshot. A reader therefore takes the count as the sum of the buckets it read (so
 * that the count and the buckets agree, as Prometheus requires), and the sum may run a record ahead or
 * behind them. Two threads recording into one histogram would lose counts: never share one.
 */
public final class LatencyHistogram
{
    /**
     * The buckets' upper bounds, inclusive, in nanoseconds: 1, 2.5 and 5 times each power of ten from
     * 1 µs to 10 s. A bucket past the last one counts everything longer.
     */
    public static final long[] UPPER_BOUNDS_NANOS = {
        1_000L, 2_500L, 5_000L,
        10_000L, 25_000L, 50_000L,
        100_000L, 250_000L, 500_000L,
        1_000_000L, 2_500_000L, 5_000_000L,
        10_000_000L, 25_000_000L, 50_000_000L,
        100_000_000L, 250_000_000L, 500_000_000L,
        1_000_000_000L, 2_500_000_000L, 5_000_000_000L,
        10_000_000_000L};

    /** Buckets, the one past the last bound included. */
    public static final int BUCKETS = UPPER_BOUNDS_NANOS.length + 1;

    private static final VarHandle WORDS = MethodHandles.arrayElementVarHandle(long[].class);
    private static final int SUM = BUCKETS;

    /** The buckets' counts, then the sum of the nanoseconds recorded; single writer, opaque. */
    private final long[] words = new long[BUCKETS + 1];

    /**
     * Records one latency. Its one writer only.
     *
     * @param nanos the latency in nanoseconds; a negative one (a clock that went back) counts as 0
     */
    public void record(final long nanos)
    {
        final long value = Math.max(0, nanos);
        final int bucket = bucketOf(value);
        WORDS.setOpaque(words, bucket, (long)WORDS.getOpaque(words, bucket) + 1);
        WORDS.setOpaque(words, SUM, (long)WORDS.getOpaque(words, SUM) + value);
    }

    /**
     * @param nanos a latency in nanoseconds, 0 or more
     * @return the index of the bucket that counts it
     */
    static int bucketOf(final long nanos)
    {
        // A linear scan: the engine's latencies fall in the first few buckets, so it ends early.
        for (int i = 0; i < UPPER_BOUNDS_NANOS.length; i++)
        {
            if (nanos <= UPPER_BOUNDS_NANOS[i])
            {
                return i;
            }
        }
        return UPPER_BOUNDS_NANOS.length;
    }

    /**
     * Reads the buckets' counts, from any thread.
     *
     * @param counts receives each bucket's own count (not cumulative), {@link #BUCKETS} of them
     * @return their total: the count to report beside them
     */
    public long countsOpaque(final long[] counts)
    {
        if (counts.length < BUCKETS)
        {
            throw new IllegalArgumentException("counts has " + counts.length + " slots, need " + BUCKETS);
        }
        long total = 0;
        for (int i = 0; i < BUCKETS; i++)
        {
            counts[i] = (long)WORDS.getOpaque(words, i);
            total += counts[i];
        }
        return total;
    }

    /** @return the sum of the latencies recorded, in nanoseconds, from any thread */
    public long sumNanosOpaque()
    {
        return (long)WORDS.getOpaque(words, SUM);
    }
}
