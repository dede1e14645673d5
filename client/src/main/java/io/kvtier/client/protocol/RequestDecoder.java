package io.kvtier.client.protocol;

import io.kvtier.client.PageKeyChain;

import java.lang.foreign.MemorySegment;

/**
 * Reads a request record in place ({@link RequestDescriptor}). A flyweight: one per consumer, reused,
 * allocation-free. It reads only within the length it was wrapped with (a field beyond it reads as 0),
 * so a short or lying record cannot make it read outside the record. The record may live in memory
 * another process writes: read each field once, validate it ({@link RequestValidator}) and use the
 * value read, not a second read.
 */
public final class RequestDecoder
{
    private MemorySegment buffer;
    private long offset;
    private int limit;

    /**
     * @param segment      where the record is
     * @param recordOffset its first byte
     * @param length       bytes of it that may be read (the Length the ring checked)
     * @return this
     */
    public RequestDecoder wrap(final MemorySegment segment, final long recordOffset, final int length)
    {
        this.buffer = segment;
        this.offset = recordOffset;
        this.limit = length;
        return this;
    }

    /** @return the bytes this decoder may read */
    public int limit()
    {
        return limit;
    }

    /** @return the record's Length field */
    public int length()
    {
        return readInt(RecordDescriptor.LENGTH_OFFSET);
    }

    /** @return the operation */
    public int type()
    {
        return readInt(RecordDescriptor.TYPE_OFFSET);
    }

    /** @return the request id (u64; compare unsigned) */
    public long requestId()
    {
        return limit >= RequestDescriptor.REQUEST_ID_OFFSET + 8 ? buffer.get(LittleEndian.LONG, offset + RequestDescriptor.REQUEST_ID_OFFSET) : 0;
    }

    /** @return the first slot */
    public int firstSlot()
    {
        return readInt(RequestDescriptor.FIRST_SLOT_OFFSET);
    }

    /** @return the slot count */
    public int count()
    {
        return readInt(RequestDescriptor.COUNT_OFFSET);
    }

    /** @return the namespace index (u16) */
    public int namespaceIndex()
    {
        return limit >= RequestDescriptor.NAMESPACE_INDEX_OFFSET + 2 ? buffer.get(LittleEndian.SHORT, offset + RequestDescriptor.NAMESPACE_INDEX_OFFSET) & 0xFFFF : 0;
    }

    /** @return the flags (u16) */
    public int flags()
    {
        return limit >= RequestDescriptor.FLAGS_OFFSET + 2 ? buffer.get(LittleEndian.SHORT, offset + RequestDescriptor.FLAGS_OFFSET) & 0xFFFF : 0;
    }

    /** @return a LOOKUP_AND_LOCK's Reserve Limit (the header's reserved word for any other Type) */
    public int reserveLimit()
    {
        return readInt(RequestDescriptor.RESERVE_LIMIT_OFFSET);
    }

    /**
     * @param i a body key's position
     * @return its high half (big-endian bytes 0..7), or 0 beyond the record
     */
    public long keyHigh(final int i)
    {
        final long at = RequestDescriptor.HEADER_LENGTH + (long)i * RequestDescriptor.KEY_LENGTH;
        return i >= 0 && at + 8 <= limit ? buffer.get(BigEndianKey.LONG, offset + at) : 0;
    }

    /**
     * @param i a body key's position
     * @return its low half (big-endian bytes 8..15), or 0 beyond the record
     */
    public long keyLow(final int i)
    {
        final long at = RequestDescriptor.HEADER_LENGTH + (long)i * RequestDescriptor.KEY_LENGTH + 8;
        return i >= 0 && at + 8 <= limit ? buffer.get(BigEndianKey.LONG, offset + at) : 0;
    }

    /**
     * Copies the body's keys into slots {@code [first, first + count)} of a chain: the engine's own copy of a
     * keyed request, which it validated first; one bulk copy for the keys within the record. A key not wholly
     * within the record reads as 0 (a validated request has none).
     *
     * @param keys  the client's chain, with at least {@code first + count} keys
     * @param first the request's First Slot
     * @param count the request's Count
     */
    public void keysInto(final PageKeyChain keys, final int first, final int count)
    {
        final int inRecord = (int)Math.max(0, Math.min(count, ((long)limit - RequestDescriptor.HEADER_LENGTH) / RequestDescriptor.KEY_LENGTH));
        keys.copyFrom(first, buffer, offset + RequestDescriptor.HEADER_LENGTH, inRecord);
        for (int i = inRecord; i < count; i++)
        {
            keys.set(first + i, 0, 0);
        }
    }

    /**
     * @param i a COMMIT body entry's position
     * @return the payload length of slot First + i, or 0 beyond the record
     */
    public int commitLength(final int i)
    {
        final long at = RequestDescriptor.HEADER_LENGTH + (long)i * RequestDescriptor.COMMIT_LENGTH_LENGTH;
        return i >= 0 && at + 4 <= limit ? buffer.get(LittleEndian.INT, offset + at) : 0;
    }

    /** @return REGISTER_KV's Handle Kind */
    public int handleKind()
    {
        return readInt(DeviceRequestDescriptor.HANDLE_KIND_OFFSET);
    }

    /** @return REGISTER_KV's Device */
    public int device()
    {
        return readInt(DeviceRequestDescriptor.DEVICE_OFFSET);
    }

    /** @return REGISTER_KV's Arrangement (u16) */
    public int arrangement()
    {
        return limit >= DeviceRequestDescriptor.ARRANGEMENT_OFFSET + 2
            ? buffer.get(LittleEndian.SHORT, offset + DeviceRequestDescriptor.ARRANGEMENT_OFFSET) & 0xFFFF : 0;
    }

    /**
     * @param fieldOffset one of REGISTER_KV's i32 shape fields ({@link DeviceRequestDescriptor#LAYERS_OFFSET} to
     *                    {@link DeviceRequestDescriptor#BLOCKS_OFFSET})
     * @return its value, or 0 beyond the record
     */
    public int registerField(final int fieldOffset)
    {
        return readInt(fieldOffset);
    }

    /** @return REGISTER_KV's Allocation Count */
    public int allocationCount()
    {
        return readInt(DeviceRequestDescriptor.ALLOCATION_COUNT_OFFSET);
    }

    /**
     * @param i an allocation's position
     * @return its Offset, or 0 beyond the record
     */
    public long allocationOffset(final int i)
    {
        final long at = DeviceRequestDescriptor.ALLOCATIONS_OFFSET + (long)i * DeviceRequestDescriptor.ALLOCATION_LENGTH;
        return i >= 0 && at + 8 <= limit ? buffer.get(LittleEndian.LONG, offset + at) : 0;
    }

    /**
     * Copies an allocation's 64-byte handle out of the record (the client may rewrite the record).
     *
     * @param i           an allocation's position
     * @param destination where the 64 bytes go; zeroes beyond the record
     */
    public void allocationHandle(final int i, final byte[] destination)
    {
        java.util.Arrays.fill(destination, 0, DeviceRequestDescriptor.HANDLE_LENGTH, (byte)0);
        final long at = DeviceRequestDescriptor.ALLOCATIONS_OFFSET + (long)i * DeviceRequestDescriptor.ALLOCATION_LENGTH
            + DeviceRequestDescriptor.ALLOCATION_HANDLE_OFFSET;
        if (i >= 0 && at + DeviceRequestDescriptor.HANDLE_LENGTH <= limit)
        {
            MemorySegment.copy(buffer, java.lang.foreign.ValueLayout.JAVA_BYTE, offset + at, destination, 0, DeviceRequestDescriptor.HANDLE_LENGTH);
        }
    }

    /**
     * @param fieldOffset where an i32 field of the record starts
     * @return it, or 0 beyond the record
     */
    public int intAt(final int fieldOffset)
    {
        return readInt(fieldOffset);
    }

    /**
     * @param fieldOffset where a u16 field of the record starts
     * @return it, or 0 beyond the record
     */
    public int shortAt(final int fieldOffset)
    {
        return limit >= fieldOffset + 2 ? buffer.get(LittleEndian.SHORT, offset + fieldOffset) & 0xFFFF : 0;
    }

    /** @return a DEVICE_LOAD's or DEVICE_SAVE's Layout Id */
    public int layoutId()
    {
        return readInt(DeviceRequestDescriptor.LAYOUT_ID_OFFSET);
    }

    /**
     * @param i a copy entry's position
     * @return the Block of slot First + i, or 0 beyond the record
     */
    public int copyBlock(final int i)
    {
        final long at = DeviceRequestDescriptor.COPY_ENTRIES_OFFSET + (long)i * DeviceRequestDescriptor.COPY_ENTRY_LENGTH;
        return i >= 0 && at + 4 <= limit ? buffer.get(LittleEndian.INT, offset + at) : 0;
    }

    /**
     * @param i a copy entry's position
     * @return the Valid Tokens of slot First + i, or 0 beyond the record
     */
    public int copyValidTokens(final int i)
    {
        final long at = DeviceRequestDescriptor.COPY_ENTRIES_OFFSET + (long)i * DeviceRequestDescriptor.COPY_ENTRY_LENGTH + 4;
        return i >= 0 && at + 4 <= limit ? buffer.get(LittleEndian.INT, offset + at) : 0;
    }

    private int readInt(final int fieldOffset)
    {
        return limit >= fieldOffset + 4 ? buffer.get(LittleEndian.INT, offset + fieldOffset) : 0;
    }
}
