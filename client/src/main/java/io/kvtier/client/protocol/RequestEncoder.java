package io.kvtier.client.protocol;

import java.lang.foreign.MemorySegment;

/**
 * Writes a request record in place ({@link RequestDescriptor}): point it at a claimed record with
 * {@link #wrap}, set the fields, then publish the ring. A flyweight: one per producer, reused for every
 * record, allocation-free. Field writes are plain; the ring's release store of Tail publishes them.
 */
public final class RequestEncoder
{
    private MemorySegment buffer;
    private long offset;

    /**
     * @param segment where the record is
     * @param recordOffset its first byte (its Length field)
     * @return this
     */
    public RequestEncoder wrap(final MemorySegment segment, final long recordOffset)
    {
        this.buffer = segment;
        this.offset = recordOffset;
        return this;
    }

    /**
     * Writes the whole header.
     *
     * @param length         the record's Length
     * @param type           the operation
     * @param requestId      its id
     * @param firstSlot      first slot
     * @param count          slots
     * @param namespaceIndex the namespace (index into the HELLO's roots)
     * @param flags          {@link RequestDescriptor#FLAG_KEYS_IN_SLOTS} or 0
     * @return this
     */
    public RequestEncoder header(final int length, final int type, final long requestId, final int firstSlot, final int count,
                                 final int namespaceIndex, final int flags)
    {
        buffer.set(LittleEndian.INT, offset + RecordDescriptor.LENGTH_OFFSET, length);
        buffer.set(LittleEndian.INT, offset + RecordDescriptor.TYPE_OFFSET, type);
        buffer.set(LittleEndian.LONG, offset + RequestDescriptor.REQUEST_ID_OFFSET, requestId);
        buffer.set(LittleEndian.INT, offset + RequestDescriptor.FIRST_SLOT_OFFSET, firstSlot);
        buffer.set(LittleEndian.INT, offset + RequestDescriptor.COUNT_OFFSET, count);
        buffer.set(LittleEndian.SHORT, offset + RequestDescriptor.NAMESPACE_INDEX_OFFSET, (short)namespaceIndex);
        buffer.set(LittleEndian.SHORT, offset + RequestDescriptor.FLAGS_OFFSET, (short)flags);
        buffer.set(LittleEndian.INT, offset + RequestDescriptor.RESERVED_OFFSET, 0);
        return this;
    }

    /**
     * Writes body key {@code i}: the digest's 16 bytes, high then low, each big-endian (keys.md).
     *
     * @param i       its position in the body
     * @param keyHigh the key's high half
     * @param keyLow  its low half
     * @return this
     */
    public RequestEncoder key(final int i, final long keyHigh, final long keyLow)
    {
        final long at = offset + RequestDescriptor.HEADER_LENGTH + (long)i * RequestDescriptor.KEY_LENGTH;
        buffer.set(BigEndianKey.LONG, at, keyHigh);
        buffer.set(BigEndianKey.LONG, at + 8, keyLow);
        return this;
    }

    /**
     * Writes COMMIT body entry {@code i}.
     *
     * @param i      its position in the body
     * @param length the payload length of slot First + i
     * @return this
     */
    public RequestEncoder commitLength(final int i, final int length)
    {
        buffer.set(LittleEndian.INT, offset + RequestDescriptor.HEADER_LENGTH + (long)i * RequestDescriptor.COMMIT_LENGTH_LENGTH, length);
        return this;
    }
}
