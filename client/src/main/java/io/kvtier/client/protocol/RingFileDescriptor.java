package io.kvtier.client.protocol;

/**
 * A client's ring file, {@code <pool.path>.client-<id>-<nonce>} (docs/ipc-protocol.md section 4): a
 * 4096-byte header, then the request ring's data, then the response ring's data, each Ring Capacity
 * bytes. Every field the two sides write has its own 64-byte line, so neither side's stores
 * invalidate a line the other side writes.
 *
 * <pre>
 *  +------------------------------+ 0
 *  | Header                       |  4096 bytes, below
 *  +------------------------------+ 4096
 *  | Request ring data            |  Ring Capacity bytes; client produces, engine consumes
 *  +------------------------------+ 4096 + Ring Capacity
 *  | Response ring data           |  Ring Capacity bytes; engine produces, client consumes
 *  +------------------------------+ 4096 + 2 x Ring Capacity
 *
 *  offset  field                          written by        ordering
 *     0    Magic (u64) "KVTRING1"         engine            before the file is named in WELCOME
 *     8    Client Id (u32)                engine
 *    12    Ring Capacity (u32)            engine
 *    16    Epoch (u64)                    engine
 *    64    Request Tail (u64)             client            release
 *   128    Request Head (u64)             engine            release
 *   192    Response Tail (u64)            engine            release
 *   256    Response Head (u64)            client            release
 *   320    Client Sleeping (u32 futex)    both              volatile + full fence
 *   384    Client Heartbeat (u64)         client            release; +1 at least every Client Timeout / 4
 *   448    Disconnect Reason (u32)        engine            release; 0 while connected
 * </pre>
 */
public final class RingFileDescriptor
{
    /** "KVTRING1" read as a little-endian u64. */
    public static final long MAGIC = ControlFileDescriptor.asciiLittleEndian("KVTRING1");
    /** Offset of the magic. */
    public static final int MAGIC_OFFSET = 0;
    /** Offset of the client id. */
    public static final int CLIENT_ID_OFFSET = 8;
    /** Offset of the ring capacity. */
    public static final int RING_CAPACITY_OFFSET = 12;
    /** Offset of the epoch. */
    public static final int EPOCH_OFFSET = 16;
    /** Offset of the request ring's tail (client's). */
    public static final int REQUEST_TAIL_OFFSET = 64;
    /** Offset of the request ring's head (engine's). */
    public static final int REQUEST_HEAD_OFFSET = 128;
    /** Offset of the response ring's tail (engine's). */
    public static final int RESPONSE_TAIL_OFFSET = 192;
    /** Offset of the response ring's head (client's). */
    public static final int RESPONSE_HEAD_OFFSET = 256;
    /** Offset of the futex word the client sleeps on. */
    public static final int CLIENT_SLEEPING_OFFSET = 320;
    /** Offset of the client's heartbeat. */
    public static final int CLIENT_HEARTBEAT_OFFSET = 384;
    /** Offset of the reason the engine dropped the client. */
    public static final int DISCONNECT_REASON_OFFSET = 448;
    /** Length of the header: the request ring's data starts here. */
    public static final int HEADER_LENGTH = 4096;

    /** The smallest ring capacity: room for the largest fixed-size record several times over. */
    public static final int MIN_RING_CAPACITY = 4096;
    /** The largest ring capacity: positions within a lap stay ints. */
    public static final int MAX_RING_CAPACITY = 1 << 30;

    private RingFileDescriptor()
    {
    }

    /** @return where the request ring's data starts */
    public static long requestRingOffset()
    {
        return HEADER_LENGTH;
    }

    /**
     * @param ringCapacity each ring's capacity
     * @return where the response ring's data starts
     */
    public static long responseRingOffset(final int ringCapacity)
    {
        return HEADER_LENGTH + (long)ringCapacity;
    }

    /**
     * @param ringCapacity each ring's capacity
     * @return the file's length
     */
    public static long fileLength(final int ringCapacity)
    {
        return HEADER_LENGTH + 2L * ringCapacity;
    }

    /**
     * @param ringCapacity a proposed capacity
     * @return whether it is a power of two within the bounds
     */
    public static boolean isValidCapacity(final int ringCapacity)
    {
        return ringCapacity >= MIN_RING_CAPACITY && ringCapacity <= MAX_RING_CAPACITY && Integer.bitCount(ringCapacity) == 1;
    }
}
