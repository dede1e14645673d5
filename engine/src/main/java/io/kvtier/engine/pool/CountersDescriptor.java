package io.kvtier.engine.pool;

/**
 * Layout of the counters region: 512 little-endian 8-byte values, counter {@code id} at
 * {@code 8 * id}. The engine thread is each counter's only writer (store-opaque); any process may read
 * them (load-opaque) for monitoring. Ids are listed in {@link io.kvtier.engine.status.EngineCounter}
 * and never reused.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                     Counter 0 value                           |  0
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                     Counter 1 value                           |  8
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                     ...                                       |
 *  +---------------------------------------------------------------+
 *  |                     Counter 511 value                         | 4088
 *  |                                                               |
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class CountersDescriptor
{
    /** Number of counter slots. */
    public static final int MAX_COUNTERS = 512;
    /** Length of one value. */
    public static final int VALUE_LENGTH = 8;
    /** Length of the region. */
    public static final int REGION_LENGTH = MAX_COUNTERS * VALUE_LENGTH;

    private CountersDescriptor()
    {
    }

    /**
     * @param id a counter id
     * @return its offset within the region
     */
    public static long valueOffset(final int id)
    {
        if (id < 0 || id >= MAX_COUNTERS)
        {
            throw new IllegalArgumentException("counter id=" + id + " outside [0, " + MAX_COUNTERS + ")");
        }
        return (long)id * VALUE_LENGTH;
    }
}
