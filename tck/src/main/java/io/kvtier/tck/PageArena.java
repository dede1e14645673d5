package io.kvtier.tck;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * A stand-in for the engine's shared page pool: one native segment handing out 4 KiB-aligned
 * slices separated by guard bytes, so a test can prove a tier wrote only inside the slices it was
 * given.
 *
 * <p>Every byte outside a slice holds a canary that depends on its position (not a constant, so a
 * shifted copy is caught too). {@link #assertGuardsIntact()} checks them all.
 */
public final class PageArena implements AutoCloseable
{
    /** Alignment of every slice, as the engine's pool guarantees. */
    public static final long ALIGNMENT = 4096;
    /** The least number of guard bytes before, between and after slices. */
    public static final long GUARD = 4096;

    private static final int CANARY_PERIOD = 4096;

    private final Arena arena;
    private final MemorySegment region;
    private final MemorySegment canary;
    private final List<long[]> slices = new ArrayList<>();
    private long next = GUARD;

    /**
     * @param bytes the arena's total size; {@link #bytesFor(int, long)} computes one that fits
     */
    public PageArena(final long bytes)
    {
        arena = Arena.ofShared();
        region = arena.allocate(bytes, ALIGNMENT);
        canary = arena.allocate(CANARY_PERIOD);
        for (int i = 0; i < CANARY_PERIOD; i++)
        {
            canary.set(JAVA_BYTE, i, canaryAt(i));
        }
        for (long offset = 0; offset < bytes; offset += CANARY_PERIOD)
        {
            MemorySegment.copy(canary, 0, region, offset, Math.min(CANARY_PERIOD, bytes - offset));
        }
    }

    /** @return the whole arena, slices and guards: what a context offers as transfer memory */
    public MemorySegment region()
    {
        return region;
    }

    /**
     * @param slices    how many slices
     * @param sliceSize the size of each
     * @return an arena size that holds that many slices with their guards
     */
    public static long bytesFor(final int slices, final long sliceSize)
    {
        return GUARD + slices * (alignUp(sliceSize) + GUARD);
    }

    private static long alignUp(final long size)
    {
        return (size + ALIGNMENT - 1) & -ALIGNMENT;
    }

    private static byte canaryAt(final long offset)
    {
        final int phase = (int)(offset % CANARY_PERIOD);
        return (byte)(0xA5 ^ (phase * 151) ^ (phase >>> 5));
    }

    /**
     * @param size the slice's size in bytes
     * @return a fresh 4 KiB-aligned slice with guard bytes on both sides; its contents are the canary
     * @throws IllegalStateException when the arena is full
     */
    public synchronized MemorySegment slice(final long size)
    {
        final long offset = alignUp(next);
        if (offset + size + GUARD > region.byteSize())
        {
            throw new IllegalStateException("arena of " + region.byteSize() + " bytes cannot fit another slice of " + size);
        }
        slices.add(new long[] {offset, size});
        next = offset + size + GUARD;
        return region.asSlice(offset, size);
    }

    /**
     * @param count how many slices
     * @param size  the size of each
     * @return fresh slices, see {@link #slice(long)}
     */
    public List<MemorySegment> slices(final int count, final long size)
    {
        final List<MemorySegment> result = new ArrayList<>(count);
        for (int i = 0; i < count; i++)
        {
            result.add(slice(size));
        }
        return result;
    }

    /**
     * Checks every byte outside the slices handed out.
     *
     * @throws AssertionError naming the first overwritten byte and the slice it follows
     */
    public synchronized void assertGuardsIntact()
    {
        long from = 0;
        for (int i = 0; i <= slices.size(); i++)
        {
            final long to = i < slices.size() ? slices.get(i)[0] : region.byteSize();
            checkGuard(from, to, i);
            if (i < slices.size())
            {
                from = slices.get(i)[0] + slices.get(i)[1];
            }
        }
    }

    private void checkGuard(final long from, final long to, final int sliceAfter)
    {
        long offset = from;
        while (offset < to)
        {
            final int phase = (int)(offset % CANARY_PERIOD);
            final long length = Math.min(CANARY_PERIOD - phase, to - offset);
            final long mismatch = region.asSlice(offset, length).mismatch(canary.asSlice(phase, length));
            if (mismatch >= 0)
            {
                final long at = offset + mismatch;
                final String where = sliceAfter == 0
                    ? (slices.isEmpty() ? "in the arena" : (slices.get(0)[0] - at) + " bytes before slice #0")
                    : (at - from) + " bytes after the end of slice #" + (sliceAfter - 1)
                        + (sliceAfter < slices.size() ? " (" + (to - at) + " bytes before slice #" + sliceAfter + ")" : "");
                throw new AssertionError("a tier wrote outside its slice: guard byte " + where + " was overwritten"
                    + " (expected 0x" + Integer.toHexString(canaryAt(at) & 0xFF) + ", found 0x"
                    + Integer.toHexString(region.get(JAVA_BYTE, at) & 0xFF) + ")");
            }
            offset += length;
        }
    }

    @Override
    public void close()
    {
        arena.close();
    }
}
