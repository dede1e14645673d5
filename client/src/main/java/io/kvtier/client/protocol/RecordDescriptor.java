package io.kvtier.client.protocol;

/**
 * The framing of every record on both rings (docs/ipc-protocol.md section 4, Records). A record starts
 * at a multiple of 8, takes {@code align8(Length)} bytes and never wraps: when it does not fit before
 * the end of the data, a padding record (Type 0) runs to the end and the record starts the next lap.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |            Length (i32): bytes of the record, header included |  0
 *  +---------------------------------------------------------------+
 *  |            Type (i32): 0 padding, else a message type         |  4
 *  +---------------------------------------------------------------+
 *  |            Body                                              ...  8
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class RecordDescriptor
{
    /** Offset of the record's Length. */
    public static final int LENGTH_OFFSET = 0;
    /** Offset of the record's Type. */
    public static final int TYPE_OFFSET = 4;
    /** Length of the framing header. */
    public static final int HEADER_LENGTH = 8;
    /** Every record starts at a multiple of this. */
    public static final int ALIGNMENT = 8;

    private RecordDescriptor()
    {
    }

    /**
     * @param length a record's Length
     * @return the bytes it takes in the ring
     */
    public static int align(final int length)
    {
        return (length + ALIGNMENT - 1) & -ALIGNMENT;
    }
}
