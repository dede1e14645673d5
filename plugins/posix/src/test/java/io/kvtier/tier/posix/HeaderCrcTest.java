package io.kvtier.tier.posix;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link HeaderCrc} gives the CRC32C of a header's bytes in memory order, the value headers on disk carry, from
 * native and heap segments alike, and one instance gives each block its own value, not one folded into the last.
 */
class HeaderCrcTest
{
    @Test
    void shouldGiveTheCrc32cOfTheBlocksLeadingBytesInMemoryOrder()
    {
        final HeaderCrc headerCrc = new HeaderCrc();
        final SplittableRandom random = new SplittableRandom(13);
        try (Arena arena = Arena.ofConfined())
        {
            for (final int length : new int[] {40, 124, 1, 0, SlabDescriptor.HEADER_ENTRY})
            {
                final byte[] bytes = new byte[SlabDescriptor.HEADER_ENTRY];
                random.nextBytes(bytes);
                final MemorySegment nativeBlock = arena.allocate(bytes.length);
                MemorySegment.copy(bytes, 0, nativeBlock, ValueLayout.JAVA_BYTE, 0, bytes.length);
                final CRC32C expected = new CRC32C();
                expected.update(bytes, 0, length);
                assertThat(headerCrc.of(nativeBlock, length)).as("native block, %d bytes", length).isEqualTo((int)expected.getValue());
                assertThat(headerCrc.of(MemorySegment.ofArray(bytes), length)).as("heap block, %d bytes", length)
                    .isEqualTo((int)expected.getValue());
            }
        }
    }
}
