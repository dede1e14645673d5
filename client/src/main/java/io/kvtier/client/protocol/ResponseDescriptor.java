package io.kvtier.client.protocol;

/**
 * A response record, engine to client (docs/ipc-protocol.md section 4, Response): the framing header,
 * the response header, then Entry Count 12-byte entries (or, for STATS, {@code u32 n} and n i64
 * counter values).
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                          Length                               |  0
 *  +---------------------------------------------------------------+
 *  |                 Type (the request's operation)                |  4
 *  +---------------------------------------------------------------+
 *  |                   Request Id (u64, echoed)                    |  8
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                 Status (i32; ErrorCode)                       | 16
 *  +---------------------------------------------------------------+
 *  |    Result Count (i32): pages pinned, reserved, committed, ... | 20
 *  +---------------------------------------------------------------+
 *  |                     First Slot (i32)                          | 24
 *  +---------------------------------------------------------------+
 *  |      Entry Count (i32): per-slot entries after the header     | 28
 *  +---------------------------------------------------------------+
 *  |   Pool Pages (i32): LOOKUP's leading pages found in the pool; | 32
 *  |   LOOKUP_AND_LOCK's pages reserved; COMMIT_AND_RELEASE's pins  |
 *  |   dropped (1.3)                                               |
 *  +---------------------------------------------------------------+
 *  |   L3 Pages (i32): LOOKUP's pages found in L3 after them       | 36
 *  +---------------------------------------------------------------+
 *  |   From Pool (i32): ACQUIRE's (and LOOKUP_AND_LOCK's) pages    | 40
 *  |   that were in the pool                                       |
 *  +---------------------------------------------------------------+
 *  |   From L3 (i32): ACQUIRE's (and LOOKUP_AND_LOCK's) pages      | 44
 *  |   loaded from L3 and verified                                 |
 *  +---------------------------------------------------------------+
 *  |   Entries: Page Id (i32), Generation (i32), Page Status (i32) ... 48
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class ResponseDescriptor
{
    /** Offset of the echoed request id. */
    public static final int REQUEST_ID_OFFSET = 8;
    /** Offset of the status. */
    public static final int STATUS_OFFSET = 16;
    /** Offset of the result count. */
    public static final int RESULT_COUNT_OFFSET = 20;
    /** Offset of the first slot the entries describe. */
    public static final int FIRST_SLOT_OFFSET = 24;
    /** Offset of the entry count. */
    public static final int ENTRY_COUNT_OFFSET = 28;
    /** Offset of a lookup's pool pages. */
    public static final int POOL_PAGES_OFFSET = 32;
    /** Offset of a LOOKUP_AND_LOCK's pages reserved (version 1.3): the lookup's Pool Pages field. */
    public static final int RESERVED_PAGES_OFFSET = POOL_PAGES_OFFSET;
    /** Offset of a COMMIT_AND_RELEASE's pins dropped (version 1.3): the lookup's Pool Pages field. */
    public static final int PINS_RELEASED_OFFSET = POOL_PAGES_OFFSET;
    /** Offset of a lookup's L3 pages. */
    public static final int L3_PAGES_OFFSET = 36;
    /** Offset of an acquire's pages from the pool. */
    public static final int FROM_POOL_OFFSET = 40;
    /** Offset of an acquire's pages from L3. */
    public static final int FROM_L3_OFFSET = 44;
    /** Length of the header: entries start here. */
    public static final int HEADER_LENGTH = 48;

    /** Length of one entry. */
    public static final int ENTRY_LENGTH = 12;
    /** Offset of an entry's page id. */
    public static final int ENTRY_PAGE_ID_OFFSET = 0;
    /** Offset of an entry's generation. */
    public static final int ENTRY_GENERATION_OFFSET = 4;
    /** Offset of an entry's page status. */
    public static final int ENTRY_STATUS_OFFSET = 8;

    /** Offset of a STATS response's counter count. */
    public static final int STATS_COUNT_OFFSET = HEADER_LENGTH;
    /** Offset of a STATS response's first value, right after the count (so values are 4-aligned only). */
    public static final int STATS_VALUES_OFFSET = HEADER_LENGTH + 4;

    private ResponseDescriptor()
    {
    }

    /**
     * @param entries entries it carries
     * @return a response's Length
     */
    public static int length(final int entries)
    {
        return HEADER_LENGTH + ENTRY_LENGTH * entries;
    }

    /**
     * @param counters counter values it carries
     * @return a STATS response's Length
     */
    public static int statsLength(final int counters)
    {
        return STATS_VALUES_OFFSET + 8 * counters;
    }
}
