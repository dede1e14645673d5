package io.kvtier.bench.workload;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Page bytes as a pure function of the page's key, so a reader can tell right bytes from wrong ones
 * without keeping a copy: a SplitMix64 stream seeded by the key, 8 bytes at a time.
 */
public final class PagePattern
{
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;

    private PagePattern()
    {
    }

    private static long next(final long state)
    {
        long z = state;
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /**
     * Writes the key's pattern into the first {@code length} bytes of a page.
     *
     * @param page    the page payload
     * @param keyHigh the key's high half
     * @param keyLow  its low half
     * @param length  bytes to write, a multiple of 8
     */
    public static void fill(final MemorySegment page, final long keyHigh, final long keyLow, final int length)
    {
        long state = keyHigh ^ Long.rotateLeft(keyLow, 17);
        for (long at = 0; at < length; at += 8)
        {
            state += 0x9E3779B97F4A7C15L;
            page.set(LONG, at, next(state));
        }
    }

    /**
     * @param page    the page payload
     * @param keyHigh the key's high half
     * @param keyLow  its low half
     * @param length  bytes to check, a multiple of 8
     * @return whether every byte matches the key's pattern
     */
    public static boolean matches(final MemorySegment page, final long keyHigh, final long keyLow, final int length)
    {
        long state = keyHigh ^ Long.rotateLeft(keyLow, 17);
        for (long at = 0; at < length; at += 8)
        {
            state += 0x9E3779B97F4A7C15L;
            if (page.get(LONG, at) != next(state))
            {
                return false;
            }
        }
        return true;
    }
}
