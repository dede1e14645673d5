package io.kvtier.client.protocol;

/**
 * The Page Status of a response entry (docs/ipc-protocol.md section 4): what a request did for the key
 * of one slot. The values are the engine's own per-key statuses; 11 is internal to the engine and
 * never sent.
 */
public final class PageEntryStatus
{
    /** Nothing held. */
    public static final int NONE = 0;
    /** Pinned, found in the pool. */
    public static final int PINNED = 1;
    /** Pinned, loaded from L3 and verified for this request. */
    public static final int PINNED_FROM_L3 = 2;
    /** Reserved: write it, then COMMIT or ABORT. */
    public static final int RESERVED = 3;
    /** Committed and visible. */
    public static final int COMMITTED = 4;
    /** Not reserved: the pool holds it. */
    public static final int EXISTS = 5;
    /** Not reserved: someone else is writing or loading it. */
    public static final int BUSY = 6;
    /** Not reserved: no free page and nothing evictable. */
    public static final int POOL_FULL = 7;
    /** Not found. */
    public static final int MISS = 8;
    /** The reservation lapsed; the page never became visible. */
    public static final int EXPIRED = 9;
    /** The request's arguments for this key were invalid (a COMMIT length, say). */
    public static final int INVALID = 10;
    /**
     * Internal to the engine, never sent: the key waits for a load or a check of its page, and the
     * request completes once it has a final status.
     */
    public static final int WAITING = 11;
    /** A prefetch put it in the pool. */
    public static final int LOADED = 12;
    /** DEVICE_LOAD: the pinned page's KV is in the block, every byte, and the page stayed pinned throughout (version 1.1). */
    public static final int COPIED = 13;

    private PageEntryStatus()
    {
    }

    /**
     * @param status an entry's Page Status
     * @return whether the slot holds a pin: its page's bytes are stable and may be read in place
     */
    public static boolean isPinned(final int status)
    {
        return status == PINNED || status == PINNED_FROM_L3;
    }

    /**
     * @param status a Page Status
     * @return its name, as messages and logs print it
     */
    public static String name(final int status)
    {
        return switch (status)
        {
            case NONE -> "NONE";
            case PINNED -> "PINNED";
            case PINNED_FROM_L3 -> "PINNED_FROM_L3";
            case RESERVED -> "RESERVED";
            case COMMITTED -> "COMMITTED";
            case EXISTS -> "EXISTS";
            case BUSY -> "BUSY";
            case POOL_FULL -> "POOL_FULL";
            case MISS -> "MISS";
            case EXPIRED -> "EXPIRED";
            case INVALID -> "INVALID";
            case WAITING -> "WAITING";
            case LOADED -> "LOADED";
            case COPIED -> "COPIED";
            default -> "STATUS_" + status;
        };
    }
}
