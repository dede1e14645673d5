package io.kvtier.engine.pool;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * CRC32C of pool bytes without allocating: {@link CRC32C} only takes arrays and buffers, and
 * {@link MemorySegment#asByteBuffer()} allocates, so each thread keeps its own views of the data
 * region (in chunks under 2 GiB that never split a frame) and moves their position and limit.
 */
final class PageChecksum
{
    private static final long MAX_CHUNK = 1L << 30;

    private final MemorySegment data;
    private final long frameLength;
    private final int framesPerChunk;
    private final ThreadLocal<Views> views;

    PageChecksum(final MemorySegment data, final long frameLength, final int pageCount)
    {
        this.data = data;
        this.frameLength = frameLength;
        this.framesPerChunk = (int)Math.max(1, MAX_CHUNK / frameLength);
        final int chunks = (pageCount + framesPerChunk - 1) / framesPerChunk;
        this.views = ThreadLocal.withInitial(() -> new Views(chunks));
    }

    /**
     * @param page   a page
     * @param offset offset within its frame
     * @param length bytes to checksum
     * @return the CRC32C of those bytes
     */
    int crc(final int page, final long offset, final long length)
    {
        final Views v = views.get();
        final int chunk = page / framesPerChunk;
        ByteBuffer buffer = v.buffers[chunk];
        if (buffer == null)
        {
            final long start = (long)chunk * framesPerChunk * frameLength;
            final long end = Math.min(data.byteSize(), start + (long)framesPerChunk * frameLength);
            buffer = data.asSlice(start, end - start).asByteBuffer();
            v.buffers[chunk] = buffer;
        }
        final int at = (int)((page % framesPerChunk) * frameLength + offset);
        buffer.limit(at + (int)length);
        buffer.position(at);
        v.crc.reset();
        v.crc.update(buffer);
        return (int)v.crc.getValue();
    }

    private static final class Views
    {
        final ByteBuffer[] buffers;
        final CRC32C crc = new CRC32C();

        Views(final int chunks)
        {
            buffers = new ByteBuffer[chunks];
        }
    }
}
