package io.kvtier.engine.pool;

import io.kvtier.client.pool.PageFrameDescriptor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static io.kvtier.client.protocol.LittleEndian.INT;
import static io.kvtier.client.protocol.LittleEndian.LONG;

/**
 * The page frames and their codec, as {@link PageFrameDescriptor} lays a frame out: payload, then a
 * trailer that names the key, length and CRC32C, so that a frame stored in L3 can be verified on its
 * own. Sealing writes the trailer after a client wrote the payload; verifying checks a frame read
 * back before it may become visible.
 *
 * <p>Frame and payload slices are made once per page, so handing a page to a tier or a client
 * allocates nothing; CRC32C goes through per-thread buffer views for the same reason.
 */
public final class PageFrames
{
    /** A block of zeroes to clear page tails from; never written. */
    private static final MemorySegment ZEROS = Arena.global().allocate(64 << 10, 4096).asReadOnly();

    private final long pageSize;
    private final MemorySegment data;
    private final MemorySegment[] frames;
    private final MemorySegment[] payloads;
    private final PageChecksum checksum;
    private final PageMetadata metadata;

    /**
     * @param data        the data region: {@code pageCount} frames of {@code frameLength} bytes
     * @param pageSize    payload bytes per page
     * @param frameLength bytes per frame
     * @param pageCount   pages
     * @param metadata    the pages' metadata, where sealing and verifying record length and CRC
     */
    public PageFrames(final MemorySegment data, final long pageSize, final long frameLength, final int pageCount, final PageMetadata metadata)
    {
        this.pageSize = pageSize;
        this.data = data;
        this.metadata = metadata;
        this.frames = new MemorySegment[pageCount];
        this.payloads = new MemorySegment[pageCount];
        for (int page = 0; page < pageCount; page++)
        {
            frames[page] = data.asSlice((long)page * frameLength, frameLength);
            payloads[page] = frames[page].asSlice(0, pageSize);
        }
        this.checksum = new PageChecksum(data, frameLength, pageCount);
    }

    /** @return the whole data region, every frame: what tiers are offered as transfer memory to register once */
    public MemorySegment data()
    {
        return data;
    }

    /**
     * @param page a page
     * @return its whole frame (payload and trailer block), as stored in L3
     */
    public MemorySegment frame(final int page)
    {
        return frames[page];
    }

    /**
     * @param page a page
     * @return its payload, page-size bytes
     */
    public MemorySegment payload(final int page)
    {
        return payloads[page];
    }

    /**
     * Seals a written frame: zeroes the payload's unused tail (so no earlier page's bytes leak into
     * L3), computes the payload CRC32C, writes the trailer, and records length and CRC in the
     * metadata. The trailer carries the namespace tag the metadata holds for the page. Call before the
     * CAS that makes the page SERVING.
     *
     * @param page    a WRITING page
     * @param keyHigh its key's high half
     * @param keyLow  its key's low half
     * @param length  payload bytes written
     * @return the payload CRC32C
     */
    public int seal(final int page, final long keyHigh, final long keyLow, final int length)
    {
        final MemorySegment frame = frames[page];
        if (length < pageSize)
        {
            zeroTail(frame, length, pageSize);
        }
        final int crc = checksum.crc(page, 0, length);
        final long t = pageSize;
        frame.set(LONG, t + PageFrameDescriptor.MAGIC_OFFSET, PageFrameDescriptor.MAGIC);
        frame.set(LONG, t + PageFrameDescriptor.KEY_HIGH_OFFSET, keyHigh);
        frame.set(LONG, t + PageFrameDescriptor.KEY_LOW_OFFSET, keyLow);
        frame.set(LONG, t + PageFrameDescriptor.PAYLOAD_LENGTH_OFFSET, length);
        frame.set(INT, t + PageFrameDescriptor.PAYLOAD_CRC_OFFSET, crc);
        frame.set(INT, t + PageFrameDescriptor.FRAME_VERSION_OFFSET, PageFrameDescriptor.FRAME_VERSION);
        frame.set(LONG, t + PageFrameDescriptor.PAGE_SIZE_OFFSET, pageSize);
        frame.set(LONG, t + PageFrameDescriptor.COMMIT_TIME_OFFSET, System.currentTimeMillis());
        frame.set(LONG, t + PageFrameDescriptor.NAMESPACE_TAG_OFFSET, metadata.namespaceTagPlain(page));
        frame.set(INT, t + PageFrameDescriptor.TRAILER_CRC_OFFSET, checksum.crc(page, t, PageFrameDescriptor.TRAILER_CHECKED_LENGTH));
        frame.set(INT, t + PageFrameDescriptor.TRAILER_CRC_OFFSET + 4, 0);
        metadata.payloadInfoPlain(page, length, crc);
        return crc;
    }

    /**
     * Checks, without touching the payload, that a WRITING page was sealed for its key and length:
     * what the engine thread checks at commit, the CRC32C having been computed by the committer.
     *
     * @param page    a WRITING page
     * @param keyHigh its key's high half
     * @param keyLow  its key's low half
     * @param length  the payload length the writer declared
     * @return whether trailer and metadata carry that key and length
     */
    public boolean isSealed(final int page, final long keyHigh, final long keyLow, final int length)
    {
        final MemorySegment frame = frames[page];
        final long t = pageSize;
        return frame.get(LONG, t + PageFrameDescriptor.MAGIC_OFFSET) == PageFrameDescriptor.MAGIC
            && frame.get(INT, t + PageFrameDescriptor.FRAME_VERSION_OFFSET) == PageFrameDescriptor.FRAME_VERSION
            && frame.get(LONG, t + PageFrameDescriptor.KEY_HIGH_OFFSET) == keyHigh
            && frame.get(LONG, t + PageFrameDescriptor.KEY_LOW_OFFSET) == keyLow
            && frame.get(LONG, t + PageFrameDescriptor.PAYLOAD_LENGTH_OFFSET) == length
            && frame.get(LONG, t + PageFrameDescriptor.NAMESPACE_TAG_OFFSET) == metadata.namespaceTagPlain(page)
            && metadata.payloadLengthPlain(page) == length;
    }

    /** Zeroes {@code [from, to)} of a frame by copies from a small zero block: a slice to fill would be an allocation per commit. */
    private static void zeroTail(final MemorySegment frame, final long from, final long to)
    {
        long at = from;
        // Up to the next 8-byte boundary one byte at a time, then whole blocks, then the rest of a block.
        while (at < to && (at & 7) != 0)
        {
            frame.set(ValueLayout.JAVA_BYTE, at++, (byte)0);
        }
        while (at + ZEROS.byteSize() <= to)
        {
            MemorySegment.copy(ZEROS, 0, frame, at, ZEROS.byteSize());
            at += ZEROS.byteSize();
        }
        if (at < to)
        {
            MemorySegment.copy(ZEROS, 0, frame, at, to - at);
        }
    }

    /** Outcome of {@link #verify}. */
    public enum FrameCheck
    {
        /** The frame is the page asked for, intact. */
        VALID,
        /** No trailer, or a trailer of another format or page size. */
        BAD_TRAILER,
        /** An intact frame of a different key: a misdirected read. */
        WRONG_KEY,
        /** The trailer or payload CRC does not match. */
        CRC_MISMATCH,
        /** An intact frame of the key, but of another namespace than the one its name in L3 says. */
        WRONG_NAMESPACE
    }

    /**
     * Checks a frame read from L3 before it may become visible; on success records its length and CRC
     * in the metadata. Its namespace tag must be the page's, set when its load began: the tag the object's
     * name in L3 was made from (a frame of version 1 counts as tagged 0). Safe to call from I/O threads
     * (each thread has its own checksum views).
     *
     * @param page    a WRITING page holding the bytes read
     * @param keyHigh the key that was asked for, high half
     * @param keyLow  the key that was asked for, low half
     * @return what was found
     */
    public FrameCheck verify(final int page, final long keyHigh, final long keyLow)
    {
        final MemorySegment frame = frames[page];
        final long t = pageSize;
        final int version = frame.get(INT, t + PageFrameDescriptor.FRAME_VERSION_OFFSET);
        if (frame.get(LONG, t + PageFrameDescriptor.MAGIC_OFFSET) != PageFrameDescriptor.MAGIC
            || (version != PageFrameDescriptor.FRAME_VERSION && version != PageFrameDescriptor.FRAME_VERSION_1)
            || frame.get(LONG, t + PageFrameDescriptor.PAGE_SIZE_OFFSET) != pageSize)
        {
            return FrameCheck.BAD_TRAILER;
        }
        final boolean first = version == PageFrameDescriptor.FRAME_VERSION_1;
        final int checked = first ? PageFrameDescriptor.TRAILER_CHECKED_LENGTH_V1 : PageFrameDescriptor.TRAILER_CHECKED_LENGTH;
        final int trailerCrcAt = first ? PageFrameDescriptor.TRAILER_CRC_OFFSET_V1 : PageFrameDescriptor.TRAILER_CRC_OFFSET;
        if (checksum.crc(page, t, checked) != frame.get(INT, t + trailerCrcAt))
        {
            return FrameCheck.CRC_MISMATCH;
        }
        if (frame.get(LONG, t + PageFrameDescriptor.KEY_HIGH_OFFSET) != keyHigh || frame.get(LONG, t + PageFrameDescriptor.KEY_LOW_OFFSET) != keyLow)
        {
            return FrameCheck.WRONG_KEY;
        }
        final long length = frame.get(LONG, t + PageFrameDescriptor.PAYLOAD_LENGTH_OFFSET);
        if (length < 0 || length > pageSize)
        {
            return FrameCheck.BAD_TRAILER;
        }
        final int crc = frame.get(INT, t + PageFrameDescriptor.PAYLOAD_CRC_OFFSET);
        if (checksum.crc(page, 0, length) != crc)
        {
            return FrameCheck.CRC_MISMATCH;
        }
        if ((first ? 0 : frame.get(LONG, t + PageFrameDescriptor.NAMESPACE_TAG_OFFSET)) != metadata.namespaceTagPlain(page))
        {
            return FrameCheck.WRONG_NAMESPACE;
        }
        metadata.payloadInfoPlain(page, (int)length, crc);
        return FrameCheck.VALID;
    }

    /**
     * @param page a SERVING page
     * @return whether its payload still matches the CRC recorded at commit
     */
    public boolean payloadIntact(final int page)
    {
        return checksum.crc(page, 0, metadata.payloadLengthPlain(page)) == metadata.payloadCrcPlain(page);
    }
}
