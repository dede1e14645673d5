package io.kvtier.nativeaccess.libc;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PageCopyTest
{
    private static byte at(final long i)
    {
        return (byte)(i * 31 + (i >>> 9));
    }

    @Test
    void copiesEveryByteOnEitherSideOfBothThresholdsAndNothingOutsideTheRange()
    {
        final long[] lengths = {1, 4096, PageCopy.DEFAULT_MEMCPY_FROM - 1, PageCopy.DEFAULT_MEMCPY_FROM, 256 * 1024 + 7,
            PageCopy.DEFAULT_MEMCPY_BELOW - 1, PageCopy.DEFAULT_MEMCPY_BELOW};
        try (Arena arena = Arena.ofConfined())
        {
            final long max = PageCopy.DEFAULT_MEMCPY_BELOW + 64;
            final MemorySegment source = arena.allocate(max);
            final MemorySegment destination = arena.allocate(max + 128);
            for (long i = 0; i < max; i++)
            {
                source.set(ValueLayout.JAVA_BYTE, i, at(i));
            }
            for (final long length : lengths)
            {
                destination.fill((byte)0x5A);
                PageCopy.copy(source, 3, destination, 64, length);
                assertThat(destination.get(ValueLayout.JAVA_BYTE, 63)).as("byte before, length %d", length).isEqualTo((byte)0x5A);
                assertThat(destination.get(ValueLayout.JAVA_BYTE, 64 + length)).as("byte after, length %d", length).isEqualTo((byte)0x5A);
                assertThat(destination.asSlice(64, length).mismatch(source.asSlice(3, length))).as("length %d", length).isEqualTo(-1);
            }
        }
    }

    @Test
    void copiesHeapSegmentsAndRefusesARangeOutsideEitherSegment()
    {
        final byte[] from = new byte[64 * 1024];
        for (int i = 0; i < from.length; i++)
        {
            from[i] = at(i);
        }
        final byte[] to = new byte[from.length];
        PageCopy.copy(MemorySegment.ofArray(from), 0, MemorySegment.ofArray(to), 0, from.length);
        assertThat(to).isEqualTo(from);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment small = arena.allocate(64 * 1024);
            final MemorySegment large = arena.allocate(128 * 1024);
            assertThatThrownBy(() -> PageCopy.copy(large, 0, small, 1, 64 * 1024)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> PageCopy.copy(small, 1, large, 0, 64 * 1024)).isInstanceOf(IndexOutOfBoundsException.class);
        }
    }
}
