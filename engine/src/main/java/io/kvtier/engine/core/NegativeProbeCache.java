package io.kvtier.engine.core;

/**
 * Keys that L3 recently said it does not have, so that lookups and acquires of the same prefix do not
 * ask again: a chat's next turn looks up pages that nobody has written yet, every time. Bounded and
 * allocation-free: a direct-mapped table where a newer key simply replaces an older one in its slot,
 * and every entry expires after a time-to-live, because a shared L3 may get the key from another
 * node at any moment. A key this engine writes to L3 is dropped at once. Engine thread only.
 */
final class NegativeProbeCache
{
    private final long[] high;
    private final long[] low;
    private final long[] expiresNanos;
    /** Whether a slot holds a key: an empty slot's zeroes are not the key (0, 0), whatever the clock reads. */
    private final boolean[] taken;
    private final int mask;
    private final long ttlNanos;

    /**
     * @param entries  slots, rounded up to a power of two
     * @param ttlNanos how long an answer is trusted; 0 turns the cache off
     */
    NegativeProbeCache(final int entries, final long ttlNanos)
    {
        final int size = ttlNanos == 0 ? 1 : Integer.highestOneBit(Math.max(1, entries - 1)) << 1;
        this.high = new long[size];
        this.low = new long[size];
        this.expiresNanos = new long[size];
        this.taken = new boolean[size];
        this.mask = size - 1;
        this.ttlNanos = ttlNanos;
    }

    private int slot(final long keyHigh, final long keyLow)
    {
        final long h = (keyHigh ^ Long.rotateLeft(keyLow, 29)) * 0x9E3779B97F4A7C15L;
        return (int)(h >>> 40) & mask;
    }

    /**
     * @param keyHigh  a key's high half
     * @param keyLow   its low half
     * @param nowNanos the current time
     * @return whether L3 said, less than the time-to-live ago, that it lacks the key
     */
    boolean isMissing(final long keyHigh, final long keyLow, final long nowNanos)
    {
        if (ttlNanos == 0)
        {
            return false;
        }
        final int i = slot(keyHigh, keyLow);
        return taken[i] && high[i] == keyHigh && low[i] == keyLow && expiresNanos[i] - nowNanos > 0;
    }

    /**
     * @param keyHigh  a key L3 lacks, high half
     * @param keyLow   its low half
     * @param nowNanos the current time
     */
    void missing(final long keyHigh, final long keyLow, final long nowNanos)
    {
        if (ttlNanos == 0)
        {
            return;
        }
        final int i = slot(keyHigh, keyLow);
        high[i] = keyHigh;
        low[i] = keyLow;
        expiresNanos[i] = nowNanos + ttlNanos;
        taken[i] = true;
    }

    /**
     * Forgets a key, because L3 has it now.
     *
     * @param keyHigh the key's high half
     * @param keyLow  its low half
     */
    void present(final long keyHigh, final long keyLow)
    {
        if (ttlNanos == 0)
        {
            return;
        }
        final int i = slot(keyHigh, keyLow);
        if (high[i] == keyHigh && low[i] == keyLow)
        {
            taken[i] = false;
            expiresNanos[i] = 0;
            high[i] = 0;
            low[i] = 0;
        }
    }
}
