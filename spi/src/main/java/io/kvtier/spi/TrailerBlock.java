package io.kvtier.spi;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The last block of an engine's page frame, for a tier that stores it compactly. Every object the engine
 * writes is a page frame: the page's payload, then a block of {@link #BYTES} whose first {@link #TRAILER_BYTES}
 * hold the frame's trailer (key, length, checksums) and whose rest is zeros. Stored as it is, that block costs a
 * 16 KiB page 25% more than its payload; a tier may store the trailer's bytes alone and give the zeros back when
 * it reads the object, as long as a read gives back every byte the write was given. An object whose last block
 * holds anything past its first {@link #TRAILER_BYTES} (the conformance kit writes noise there) must be stored
 * whole: {@link #holdsOnlyATrailer} tells the two apart.
 *
 * <p>The engine checks every frame it reads (the trailer's key and checksums against the payload), so a tier that
 * gets this wrong serves a miss, never wrong bytes; the conformance kit checks that every object, of either
 * shape, is read back exactly. Added in SPI 1.2.
 *
 * <p>Since SPI 1.3 the engine also says, write by write, that the block past the trailer is padding
 * ({@link TierBatch#trailerBlockIsPadding}): a tier may then keep the compact form without reading those bytes, and
 * gives zeros back for them. Objects of a batch that does not say so are checked as above.
 */
public final class TrailerBlock
{
    /** Bytes of a frame's last block: its trailer, then zeros. */
    public static final int BYTES = 4096;

    /** Bytes at the start of the last block that a compact form keeps: an engine frame's whole trailer. */
    public static final int TRAILER_BYTES = 72;

    private static final MemorySegment ZEROS = Arena.global().allocate(BYTES);

    private TrailerBlock()
    {
    }

    /**
     * @param object     an object's bytes
     * @param blockStart where its last block starts in them
     * @return whether that block is nothing but its first {@link #TRAILER_BYTES} and zeros, so that a tier may keep
     *         those bytes alone and {@link #restore} the rest
     */
    public static boolean holdsOnlyATrailer(final MemorySegment object, final long blockStart)
    {
        final long zerosFrom = blockStart + TRAILER_BYTES;
        final long length = object.byteSize();
        return zerosFrom >= length || MemorySegment.mismatch(object, zerosFrom, length, ZEROS, 0, length - zerosFrom) == -1;
    }

    /**
     * @param object an object of the tier's object size
     * @return the bytes a tier that stores objects as a prefix needs to keep of it: its length less the zeros of its
     *         last block when it is an engine frame ({@link #compactLength(long)}), else its whole length
     */
    public static long storedLength(final MemorySegment object)
    {
        final long length = object.byteSize();
        return hasTrailerBlock(length) && holdsOnlyATrailer(object, length - BYTES) ? compactLength(length) : length;
    }

    /**
     * As {@link #storedLength(MemorySegment)}, for a write whose batch says whether the trailer block past the
     * trailer is padding ({@link TierBatch#trailerBlockIsPadding}): when it is, the compact length without reading
     * those bytes. Added in SPI 1.3.
     *
     * @param object  an object of the tier's object size
     * @param padding what the batch said of it
     * @return the bytes a tier that stores objects as a prefix needs to keep of it
     */
    public static long storedLength(final MemorySegment object, final boolean padding)
    {
        final long length = object.byteSize();
        return padding && hasTrailerBlock(length) ? compactLength(length) : storedLength(object);
    }

    /**
     * @param stored       bytes a tier holds for an object
     * @param objectLength the object's length
     * @return whether those bytes are its compact form ({@link #storedLength} less than its length): the object less
     *         the zeros of its trailer block, which a read gives back with {@link #restore}
     */
    public static boolean isCompact(final long stored, final long objectLength)
    {
        return hasTrailerBlock(objectLength) && stored == compactLength(objectLength);
    }

    /** @return whether an object of this length has a payload before a trailer block, so a compact form */
    private static boolean hasTrailerBlock(final long objectLength)
    {
        return objectLength >= 2L * BYTES;
    }

    /**
     * @param objectLength an object's length, at least two blocks
     * @return its length less the zeros of its last block: the payload and the trailer
     */
    public static long compactLength(final long objectLength)
    {
        return objectLength - BYTES + TRAILER_BYTES;
    }

    /**
     * Gives back the zeros a compact object left out: zeroes the object from {@code storedLength} to its end.
     *
     * @param object       the object's bytes, its first {@code storedLength} read in place
     * @param storedLength bytes that were stored, at most the object's length
     */
    public static void restore(final MemorySegment object, final long storedLength)
    {
        long at = storedLength;
        final long length = object.byteSize();
        while (at < length)
        {
            final long n = Math.min(BYTES, length - at);
            MemorySegment.copy(ZEROS, 0, object, at, n);
            at += n;
        }
    }
}
