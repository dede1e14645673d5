package io.kvtier.tier.posix;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.zip.CRC32C;

/**
 * CRC32C of the slab's short header blocks (an extent header's first 40 bytes, a frame header's first 124),
 * one per thread that writes or checks them. {@link CRC32C}'s intrinsic takes arrays and buffers, a buffer view
 * of native memory allocates, and feeding it a byte at a time cost the slab's I/O thread a sixth of its time in
 * the demo (issue 21, round thirteen); so the bytes are copied to a small array first, which costs a few
 * nanoseconds and allocates nothing.
 */
final class HeaderCrc
{
    private final CRC32C crc = new CRC32C();
    private final byte[] scratch = new byte[SlabDescriptor.HEADER_ENTRY];

    /**
     * @param block  the bytes
     * @param length how many of them, from the start, at most {@link SlabDescriptor#HEADER_ENTRY}
     * @return their CRC32C
     */
    int of(final MemorySegment block, final long length)
    {
        final int bytes = (int)length;
        MemorySegment.copy(block, ValueLayout.JAVA_BYTE, 0, scratch, 0, bytes);
        crc.reset();
        crc.update(scratch, 0, bytes);
        return (int)crc.getValue();
    }
}
