package io.kvtier.tck;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * Reproducible page contents: the bytes of a page are a function of a seed, so a test keeps only the
 * seed to check what it reads back.
 */
public final class PageBytes
{
    private PageBytes()
    {
    }

    /**
     * Fills a segment with the pseudo-random bytes of a seed.
     *
     * @param segment the destination
     * @param seed    which bytes
     */
    public static void fill(final MemorySegment segment, final long seed)
    {
        final SplittableRandom random = new SplittableRandom(seed);
        final long size = segment.byteSize();
        long offset = 0;
        for (; offset + Long.BYTES <= size; offset += Long.BYTES)
        {
            segment.set(JAVA_LONG_UNALIGNED, offset, random.nextLong());
        }
        for (; offset < size; offset++)
        {
            segment.set(JAVA_BYTE, offset, (byte)random.nextInt());
        }
    }

    /**
     * @param segment the bytes to check
     * @param seed    the seed they should come from
     * @return the offset of the first differing byte, or -1 when the segment holds exactly the seed's bytes
     */
    public static long mismatch(final MemorySegment segment, final long seed)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment expected = arena.allocate(Math.max(1, segment.byteSize())).asSlice(0, segment.byteSize());
            fill(expected, seed);
            return segment.mismatch(expected);
        }
    }

    /**
     * @param segment the bytes to check
     * @param seed    the seed they should come from
     * @param what    names the bytes in the failure message
     * @throws AssertionError naming the first differing byte
     */
    public static void assertContent(final MemorySegment segment, final long seed, final String what)
    {
        final long mismatch = mismatch(segment, seed);
        if (mismatch >= 0)
        {
            throw new AssertionError(what + ": " + segment.byteSize() + " bytes differ from the expected content"
                + " (seed " + seed + ") from byte " + mismatch);
        }
    }
}
