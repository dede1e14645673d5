package io.kvtier.client.protocol;

/**
 * A request record, client to engine (docs/ipc-protocol.md section 4, Request): the framing header,
 * then the request header, then a body whose length the Type and Count fix.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                          Length                               |  0
 *  +---------------------------------------------------------------+
 *  |                    Type (operation)                           |  4
 *  +---------------------------------------------------------------+
 *  |     Request Id (u64): greater than every earlier id of this    |  8
 *  |     client; the response carries it back                       |
 *  +---------------------------------------------------------------+
 *  |                     First Slot (i32)                          | 16
 *  +---------------------------------------------------------------+
 *  |                        Count (i32)                            | 20
 *  +-------------------------------+-------------------------------+
 *  |  Namespace Index (u16)        |        Flags (u16)            | 24
 *  +-------------------------------+-------------------------------+
 *  |   Reserved (0); LOOKUP_AND_LOCK's Reserve Limit (i32, 1.3)    | 28
 *  +---------------------------------------------------------------+
 *  |   Body: Count x 16-byte keys, Count x i32 lengths, a device body ... 32
 *  |   ({@link DeviceRequestDescriptor}), or none                      |
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class RequestDescriptor
{
    /** Offset of the request id. */
    public static final int REQUEST_ID_OFFSET = 8;
    /** Offset of the first slot. */
    public static final int FIRST_SLOT_OFFSET = 16;
    /** Offset of the slot count. */
    public static final int COUNT_OFFSET = 20;
    /** Offset of the u16 namespace index. */
    public static final int NAMESPACE_INDEX_OFFSET = 24;
    /** Offset of the u16 flags. */
    public static final int FLAGS_OFFSET = 26;
    /** Offset of the reserved word. */
    public static final int RESERVED_OFFSET = 28;
    /**
     * Offset of a LOOKUP_AND_LOCK's Reserve Limit (version 1.3), the header's reserved word for every other
     * Type: the most keys after the pinned prefix to reserve pages for, from 0 to Count, or
     * {@link #RESERVE_ALL}.
     */
    public static final int RESERVE_LIMIT_OFFSET = RESERVED_OFFSET;
    /** Reserve Limit: reserve a page for every key after the pinned prefix. */
    public static final int RESERVE_ALL = -1;
    /** Length of the header: the body starts here. */
    public static final int HEADER_LENGTH = 32;
    /** Bytes of one key in a body: high then low, each big-endian (keys.md). */
    public static final int KEY_LENGTH = 16;
    /** Bytes of one COMMIT payload length. */
    public static final int COMMIT_LENGTH_LENGTH = 4;

    /** Flag: the keys are already in the slots; the body carries none. */
    public static final int FLAG_KEYS_IN_SLOTS = 1;
    /**
     * Flag, COMMIT_AND_RELEASE only (version 1.3): copy each page it commits to L3, as a BACKUP of its key
     * would, whatever {@code l3.write-policy} says.
     */
    public static final int FLAG_BACKUP = 2;
    /** Every flag this version defines. */
    public static final int KNOWN_FLAGS = FLAG_KEYS_IN_SLOTS | FLAG_BACKUP;

    private RequestDescriptor()
    {
    }

    /**
     * @param type  an operation
     * @param count its Count
     * @param flags its Flags
     * @return the exact Length the rules require, or -1 when no Length is right (an unknown Type, a
     *         negative Count)
     */
    public static long expectedLength(final int type, final int count, final int flags)
    {
        if (!MessageType.isOperation(type) || count < 0)
        {
            return -1;
        }
        if (MessageType.carriesKeys(type))
        {
            return (flags & FLAG_KEYS_IN_SLOTS) != 0 ? HEADER_LENGTH : HEADER_LENGTH + (long)KEY_LENGTH * count;
        }
        if (MessageType.carriesLengths(type))
        {
            return HEADER_LENGTH + (long)COMMIT_LENGTH_LENGTH * count;
        }
        if (type == MessageType.DEVICE_LOAD || type == MessageType.DEVICE_SAVE)
        {
            return DeviceRequestDescriptor.copyLength(count);
        }
        if (type == MessageType.REGISTER_KV)
        {
            return -1; // its Length follows from its body's Allocation Count: see registerLength
        }
        return HEADER_LENGTH;
    }

    /**
     * @param maxKeys the client's slots
     * @return the longest keyed request a client with that many slots can send
     */
    public static int maxMessageLength(final int maxKeys)
    {
        return HEADER_LENGTH + KEY_LENGTH * maxKeys;
    }

    /**
     * Max Message Length as WELCOME grants it: room for a request naming every slot, and for a
     * REGISTER_KV of as many allocations as fit a quarter of a ring (up to {@link DeviceRequestDescriptor#MAX_ALLOCATIONS}).
     *
     * @param maxKeys      the client's slots
     * @param ringCapacity the client's Ring Capacity
     * @return the longest request the client may send
     */
    public static int maxMessageLength(final int maxKeys, final int ringCapacity)
    {
        final long register = Math.min(DeviceRequestDescriptor.registerLength(DeviceRequestDescriptor.MAX_ALLOCATIONS), ringCapacity / 4);
        return (int)Math.max(maxMessageLength(maxKeys), register);
    }
}
