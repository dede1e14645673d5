package io.kvtier.client.protocol;

/**
 * The Type of a record (docs/ipc-protocol.md section 4): 0 pads the ring to its end, every other
 * value is an operation, carried by the request and echoed by its response. Codes 1 and 12 are the
 * in-process session's OPEN and KEEP_ALIVE, which have no wire form: the socket opens a client and
 * the Client Heartbeat keeps it alive.
 */
public final class MessageType
{
    /** A padding record: skip to the start of the ring's next lap. */
    public static final int PADDING = 0;
    /** Count the prefix in the pool, then in L3 after it. */
    public static final int LOOKUP = 2;
    /** Pin the longest prefix, loading L3 pages into the pool and verifying them. */
    public static final int ACQUIRE = 3;
    /** Drop the pins held in the slots. */
    public static final int RELEASE = 4;
    /** Reserve a page for each key to write. */
    public static final int RESERVE = 5;
    /** Seal and publish each reserved page of the slots. */
    public static final int COMMIT = 6;
    /** Give reserved pages back unwritten. */
    public static final int ABORT = 7;
    /** Start loading the L3 part of the prefix into the pool. */
    public static final int PREFETCH = 8;
    /** Copy the keys' pool pages to L3. */
    public static final int BACKUP = 9;
    /** Answer once every backup started so far has ended. */
    public static final int FLUSH = 10;
    /** Drop unpinned pages of the keys from the pool (admin). */
    public static final int EVICT = 11;
    /** Give everything back and end the client. */
    public static final int CLOSE = 13;
    /** Answer with the engine's counters. */
    public static final int STATS = 14;
    /** Register the client's KV buffers and their layout (version 1.1). */
    public static final int REGISTER_KV = 15;
    /** Copy the pinned pages of the slots into blocks of a registered layout (version 1.1). */
    public static final int DEVICE_LOAD = 16;
    /** Copy blocks of a registered layout into the reserved pages of the slots and commit them (version 1.1). */
    public static final int DEVICE_SAVE = 17;
    /**
     * Pin the longest prefix of the keys, as ACQUIRE does, then reserve pages for keys after it, as
     * RESERVE does, up to the request's Reserve Limit (version 1.3).
     */
    public static final int LOOKUP_AND_LOCK = 18;
    /** Drop the pins held in the slots, then seal and publish their reserved pages, as RELEASE then COMMIT (version 1.3). */
    public static final int COMMIT_AND_RELEASE = 19;

    private MessageType()
    {
    }

    /**
     * @param type a record's Type
     * @return whether it is an operation of the table (padding is not)
     */
    public static boolean isOperation(final int type)
    {
        return type >= LOOKUP && type <= COMMIT_AND_RELEASE && type != 12;
    }

    /**
     * @param type an operation
     * @return whether its body carries Count keys (unless {@link RequestDescriptor#FLAG_KEYS_IN_SLOTS})
     */
    public static boolean carriesKeys(final int type)
    {
        return type == LOOKUP || type == ACQUIRE || type == RESERVE || type == PREFETCH || type == BACKUP || type == EVICT
            || type == LOOKUP_AND_LOCK;
    }

    /**
     * @param type an operation
     * @return whether it names no slots: First and Count must both be 0
     */
    public static boolean isSlotless(final int type)
    {
        return type == FLUSH || type == CLOSE || type == STATS || type == REGISTER_KV;
    }

    /**
     * @param type an operation
     * @return whether it is one of version 1.1's device operations, which a client of minor version 0 does not know
     */
    public static boolean isDeviceOperation(final int type)
    {
        return type == REGISTER_KV || type == DEVICE_LOAD || type == DEVICE_SAVE;
    }

    /**
     * @param type an operation
     * @return whether it is one of version 1.3's combined operations, which a client of an earlier minor version does not know
     */
    public static boolean isCombinedOperation(final int type)
    {
        return type == LOOKUP_AND_LOCK || type == COMMIT_AND_RELEASE;
    }

    /**
     * @param type an operation
     * @return whether its body carries Count payload lengths (COMMIT, COMMIT_AND_RELEASE)
     */
    public static boolean carriesLengths(final int type)
    {
        return type == COMMIT || type == COMMIT_AND_RELEASE;
    }

    /**
     * @param type a record's Type
     * @return its name, for logs and messages
     */
    public static String name(final int type)
    {
        return switch (type)
        {
            case PADDING -> "PADDING";
            case LOOKUP -> "LOOKUP";
            case ACQUIRE -> "ACQUIRE";
            case RELEASE -> "RELEASE";
            case RESERVE -> "RESERVE";
            case COMMIT -> "COMMIT";
            case ABORT -> "ABORT";
            case PREFETCH -> "PREFETCH";
            case BACKUP -> "BACKUP";
            case FLUSH -> "FLUSH";
            case EVICT -> "EVICT";
            case CLOSE -> "CLOSE";
            case STATS -> "STATS";
            case REGISTER_KV -> "REGISTER_KV";
            case DEVICE_LOAD -> "DEVICE_LOAD";
            case DEVICE_SAVE -> "DEVICE_SAVE";
            case LOOKUP_AND_LOCK -> "LOOKUP_AND_LOCK";
            case COMMIT_AND_RELEASE -> "COMMIT_AND_RELEASE";
            default -> "TYPE_" + type;
        };
    }
}
