package io.kvtier.tier.posix;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Optional;
import java.util.zip.CRC32C;

/**
 * CRC32C of page payloads for the slab layout, one per worker. {@link CRC32C} takes only arrays and
 * buffers and {@link MemorySegment#asByteBuffer()} allocates, so for slices inside the engine's
 * transfer memory (its pool frames, where every page the engine hands a tier lives) it keeps one
 * buffer view per 1 GiB chunk, made on first use, and only moves their position and limit; a slice
 * elsewhere gets a view of its own.
 */
final class FrameCrc
{
    private static final long CHUNK = 1L << 30;

    private final CRC32C crc = new CRC32C();
    private final MemorySegment region;
    private final long reach;
    private final ByteBuffer[] views;

    /**
     * @param transferMemory the engine's transfer memory, if it offered any
     * @param maxLength      the longest payload checksummed
     */
    FrameCrc(final Optional<MemorySegment> transferMemory, final long maxLength)
    {
        region = transferMemory.orElse(null);
        // Each chunk's view reaches a payload past its end, so a payload that starts in it never straddles two.
        reach = maxLength;
        views = region == null ? new ByteBuffer[0] : new ByteBuffer[(int)((region.byteSize() + CHUNK - 1) / CHUNK)];
    }

    /**
     * @param segment the bytes
     * @param length  how many of them, from the start
     * @return their CRC32C
     */
    int of(final MemorySegment segment, final long length)
    {
        crc.reset();
        final long offset = region == null ? -1 : segment.address() - region.address();
        if (offset >= 0 && length <= reach && offset + length <= region.byteSize())
        {
            final int chunk = (int)(offset / CHUNK);
            ByteBuffer view = views[chunk];
            if (view == null)
            {
                final long start = chunk * CHUNK;
                view = region.asSlice(start, Math.min(region.byteSize() - start, CHUNK + reach)).asByteBuffer();
                views[chunk] = view;
            }
            final int at = (int)(offset - chunk * CHUNK);
            view.limit(at + (int)length);
            view.position(at);
            crc.update(view);
        }
        else
        {
            crc.update(segment.asSlice(0, length).asByteBuffer());
        }
        return (int)crc.getValue();
    }
}
