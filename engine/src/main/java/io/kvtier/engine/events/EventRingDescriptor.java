package io.kvtier.engine.events;

/**
 * The layout of the event ring: a header of two counters, each on a cache line of its own, then
 * {@code capacity} records of {@link #RECORD_LENGTH} bytes (a power of two of them).
 *
 * <pre>
 * header (128 bytes)
 *   0                   8                                                    64
 *  +-------------------+----------------------------------------------------+
 *  | tail (long)       | padding: written by the producer (engine thread)    |
 *  +-------------------+----------------------------------------------------+
 *  | head (long)       | padding: written by the consumer (kvtier-events)    |
 *  +-------------------+----------------------------------------------------+
 *
 * record i at HEADER_LENGTH + (i &amp; (capacity - 1)) * 32
 *   0        4        8                 16                24               32
 *  +--------+--------+-----------------+-----------------+-----------------+
 *  | type   | medium | key high (long) | key low (long)  | namespace tag   |
 *  +--------+--------+-----------------+-----------------+-----------------+
 * </pre>
 *
 * The producer writes a record plainly, then stores the tail with release; the consumer loads the tail
 * with acquire, reads the records below it, then stores the head with release, which the producer loads
 * with acquire before it reuses a record. Tail and head count records from 0 and never wrap.
 */
public final class EventRingDescriptor
{
    /** Offset of the tail: records written. */
    public static final int TAIL_OFFSET = 0;
    /** Offset of the head: records read. */
    public static final int HEAD_OFFSET = 64;
    /** Bytes before the first record. */
    public static final int HEADER_LENGTH = 128;
    /** Bytes per record. */
    public static final int RECORD_LENGTH = 32;
    /** Offset in a record: its type. */
    public static final int TYPE_OFFSET = 0;
    /** Offset in a record: its medium. */
    public static final int MEDIUM_OFFSET = 4;
    /** Offset in a record: the key's high half. */
    public static final int KEY_HIGH_OFFSET = 8;
    /** Offset in a record: the key's low half. */
    public static final int KEY_LOW_OFFSET = 16;
    /** Offset in a record: the namespace tag. */
    public static final int TAG_OFFSET = 24;

    /** Record type: a page became visible in a medium. */
    public static final int TYPE_STORED = 1;
    /** Record type: a page left a medium. */
    public static final int TYPE_REMOVED = 2;
    /** Record type: everything was cleared (key, tag and medium are 0). */
    public static final int TYPE_CLEARED = 3;

    private EventRingDescriptor()
    {
    }

    /**
     * @param capacity records
     * @return the ring's length in bytes
     */
    public static long length(final int capacity)
    {
        return HEADER_LENGTH + (long)capacity * RECORD_LENGTH;
    }
}
