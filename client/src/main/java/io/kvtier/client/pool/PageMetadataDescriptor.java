package io.kvtier.client.pool;

/**
 * Layout of one page's metadata entry: 64 bytes, one cache line, little-endian. Entry {@code p} is
 * at {@code Metadata Offset + 64 * p}.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |    State      |                 Pins (24 bits)                |  0   state word, CAS only
 *  +---------------------------------------------------------------+
 *  |                     Generation                                |  4
 *  +---------------------------------------------------------------+
 *  |                     Key High                                  |  8
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                     Key Low                                   | 16
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                     Payload Length                            | 24
 *  +---------------------------------------------------------------+
 *  |                     Payload CRC32C                            | 28
 *  +---------------------------------------------------------------+
 *  |                     Owner (session id while WRITING)          | 32
 *  +---------------------------------------------------------------+
 *  |                     Hit Count                                 | 36
 *  +---------------------------------------------------------------+
 *  |         Lease Deadline (CLOCK_MONOTONIC ns, while WRITING)    | 40
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |         Last Access (CLOCK_MONOTONIC ns)                      | 48
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |         Namespace Tag (0: none)                               | 56
 *  |                                                               |
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * <p>The first 8 bytes are read and written as one 64-bit word; see {@link PageStateWord}. Key,
 * length and CRC are written before the CAS that makes the page SERVING and are stable while it is
 * SERVING, so a reader that pins the page and then re-reads the key sees the committed values. The
 * Namespace Tag is written with the key (at reserve, or from the frame trailer of a load) and says which
 * clients may be given the page (docs/ipc-protocol.md section 8).
 */
public final class PageMetadataDescriptor
{
    /** Length of one entry. */
    public static final int ENTRY_LENGTH = 64;
    /** Offset of the state word. */
    public static final int STATE_WORD_OFFSET = 0;
    /** Offset of the key's high half. */
    public static final int KEY_HIGH_OFFSET = 8;
    /** Offset of the key's low half. */
    public static final int KEY_LOW_OFFSET = 16;
    /** Offset of the payload length. */
    public static final int PAYLOAD_LENGTH_OFFSET = 24;
    /** Offset of the payload CRC32C. */
    public static final int PAYLOAD_CRC_OFFSET = 28;
    /** Offset of the owning session. */
    public static final int OWNER_OFFSET = 32;
    /** Offset of the hit count. */
    public static final int HIT_COUNT_OFFSET = 36;
    /** Offset of the lease deadline. */
    public static final int LEASE_DEADLINE_OFFSET = 40;
    /** Offset of the last access time. */
    public static final int LAST_ACCESS_OFFSET = 48;
    /** Offset of the namespace tag. */
    public static final int NAMESPACE_TAG_OFFSET = 56;

    private PageMetadataDescriptor()
    {
    }

    /**
     * @param metadataOffset where the table starts in the file
     * @param page           a page id
     * @return the entry's offset in the file
     */
    public static long entryOffset(final long metadataOffset, final int page)
    {
        return metadataOffset + (long)page * ENTRY_LENGTH;
    }
}
