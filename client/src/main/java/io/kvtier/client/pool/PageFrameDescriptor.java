package io.kvtier.client.pool;

/**
 * Layout of a page frame: the unit stored in the pool and, byte for byte, in every L3 tier. The
 * payload comes first, so the page a client sees starts 4 KiB aligned; the trailer follows in a
 * 4 KiB block of its own, so the whole frame stays a multiple of 4 KiB for O_DIRECT. Little-endian.
 *
 * <pre>
 * Frame
 * +-------------------------------+ 0
 * | Payload (Page Size bytes; the |
 * | first Payload Length are the  |
 * | page, the rest zero)          |
 * +-------------------------------+ Page Size
 * | Trailer (64 bytes)            |
 * | zero padding to 4 KiB         |
 * +-------------------------------+ Page Size + 4096 = Frame Length
 *
 * Trailer (version 2)
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                     Magic "KVTPAGE1"                          |  0
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                     Key High                                  |  8
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                     Key Low                                   | 16
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                     Payload Length                            | 24
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                     Payload CRC32C                            | 32
 *  +---------------------------------------------------------------+
 *  |                     Frame Version (2)                         | 36
 *  +---------------------------------------------------------------+
 *  |                     Page Size                                 | 40
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                     Commit Time (epoch ms)                    | 48
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                     Namespace Tag (0: none)                   | 56
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                     Trailer CRC32C (of bytes 0..63)           | 64
 *  +---------------------------------------------------------------+
 *  |                     Reserved (0)                              | 68
 *  +---------------------------------------------------------------+
 *
 * Version 1 (still read, never written) had no Namespace Tag: its Trailer CRC32C is at 56 and covers
 * bytes 0..55, and its pages read as tagged 0.
 * </pre>
 *
 * <p>A frame read back from L3 is used only if the magic, version and page size match, the key is
 * the key that was asked for (which catches misdirected reads), the length fits, and both CRCs match.
 * Anything else is a miss, counted as corrupt.
 */
public final class PageFrameDescriptor
{
    /** "KVTPAGE1" as a little-endian long. */
    public static final long MAGIC = 0x314547415054564BL;
    /** Frame format this code writes (and reads, with {@link #FRAME_VERSION_1}). */
    public static final int FRAME_VERSION = 2;
    /** The first frame format, without a namespace tag: still read, as tag 0. */
    public static final int FRAME_VERSION_1 = 1;
    /** Length of the trailer block, keeping frames 4 KiB multiples. */
    public static final int TRAILER_BLOCK_LENGTH = 4096;
    /** Bytes of the trailer covered by its own CRC. */
    public static final int TRAILER_CHECKED_LENGTH = 64;
    /** Bytes of a version 1 trailer covered by its own CRC. */
    public static final int TRAILER_CHECKED_LENGTH_V1 = 56;

    /** Offset of the magic within the trailer. */
    public static final int MAGIC_OFFSET = 0;
    /** Offset of the key's high half within the trailer. */
    public static final int KEY_HIGH_OFFSET = 8;
    /** Offset of the key's low half within the trailer. */
    public static final int KEY_LOW_OFFSET = 16;
    /** Offset of the payload length within the trailer. */
    public static final int PAYLOAD_LENGTH_OFFSET = 24;
    /** Offset of the payload CRC within the trailer. */
    public static final int PAYLOAD_CRC_OFFSET = 32;
    /** Offset of the frame version within the trailer. */
    public static final int FRAME_VERSION_OFFSET = 36;
    /** Offset of the page size within the trailer. */
    public static final int PAGE_SIZE_OFFSET = 40;
    /** Offset of the commit time within the trailer. */
    public static final int COMMIT_TIME_OFFSET = 48;
    /** Offset of the namespace tag within the trailer. */
    public static final int NAMESPACE_TAG_OFFSET = 56;
    /** Offset of the trailer's CRC within the trailer. */
    public static final int TRAILER_CRC_OFFSET = 64;
    /** Offset of the trailer's CRC within a version 1 trailer. */
    public static final int TRAILER_CRC_OFFSET_V1 = 56;

    private PageFrameDescriptor()
    {
    }

    /**
     * @param pageSize payload bytes per page
     * @return bytes per frame
     */
    public static long frameLength(final long pageSize)
    {
        return pageSize + TRAILER_BLOCK_LENGTH;
    }
}
