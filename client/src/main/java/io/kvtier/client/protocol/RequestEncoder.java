package io.kvtier.client.protocol;

import io.kvtier.client.PageKeyChain;

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
     * Writes a LOOKUP_AND_LOCK's Reserve Limit (version 1.3) over the header's reserved word: call after
     * {@link #header}.
     *
     * @param limit the most keys after the pinned prefix to reserve pages for, from 0 to Count, or
     *              {@link RequestDescriptor#RESERVE_ALL}
     * @return this
     */
    public RequestEncoder reserveLimit(final int limit)
    {
        buffer.set(LittleEndian.INT, offset + RequestDescriptor.RESERVE_LIMIT_OFFSET, limit);
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
     * Writes body keys {@code 0..count-1} from keys {@code from..from+count-1} of a chain, in one bulk copy.
     *
     * @param keys  the chain
     * @param from  its first key to send
     * @param count keys
     * @return this
     */
    public RequestEncoder keys(final PageKeyChain keys, final int from, final int count)
    {
        keys.copyTo(from, count, buffer, offset + RequestDescriptor.HEADER_LENGTH);
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

    /**
     * Writes REGISTER_KV's body up to its allocations.
     *
     * @param handleKind  {@link DeviceRequestDescriptor#HANDLE_CUDA_IPC} or {@link DeviceRequestDescriptor#HANDLE_HOST_FILE}
     * @param device      the CUDA ordinal
     * @param arrangement one of the ARRANGEMENT_ constants
     * @param shape       layers, tensors per layer, block tokens, heads, head dim, element bytes, blocks, in that order
     * @param allocations A
     * @return this
     */
    public RequestEncoder registerKv(final int handleKind, final int device, final int arrangement, final int[] shape, final int allocations)
    {
        buffer.set(LittleEndian.INT, offset + DeviceRequestDescriptor.HANDLE_KIND_OFFSET, handleKind);
        buffer.set(LittleEndian.INT, offset + DeviceRequestDescriptor.DEVICE_OFFSET, device);
        buffer.set(LittleEndian.SHORT, offset + DeviceRequestDescriptor.ARRANGEMENT_OFFSET, (short)arrangement);
        buffer.set(LittleEndian.SHORT, offset + DeviceRequestDescriptor.ARRANGEMENT_OFFSET + 2, (short)0);
        for (int f = 0; f < 7; f++)
        {
            buffer.set(LittleEndian.INT, offset + DeviceRequestDescriptor.LAYERS_OFFSET + 4L * f, shape[f]);
        }
        buffer.set(LittleEndian.INT, offset + DeviceRequestDescriptor.ALLOCATION_COUNT_OFFSET, allocations);
        buffer.set(LittleEndian.INT, offset + DeviceRequestDescriptor.ALLOCATION_COUNT_OFFSET + 4, 0);
        return this;
    }

    /**
     * Writes REGISTER_KV's allocation {@code i}.
     *
     * @param i              its position
     * @param allocationOffset where its tensor starts in the allocation
     * @param handle         up to 64 bytes; the rest of the field is zeroed
     * @return this
     */
    public RequestEncoder allocation(final int i, final long allocationOffset, final byte[] handle)
    {
        final long at = offset + DeviceRequestDescriptor.ALLOCATIONS_OFFSET + (long)i * DeviceRequestDescriptor.ALLOCATION_LENGTH;
        buffer.set(LittleEndian.LONG, at, allocationOffset);
        final long handleAt = at + DeviceRequestDescriptor.ALLOCATION_HANDLE_OFFSET;
        buffer.asSlice(handleAt, DeviceRequestDescriptor.HANDLE_LENGTH).fill((byte)0);
        MemorySegment.copy(handle, 0, buffer, java.lang.foreign.ValueLayout.JAVA_BYTE, handleAt,
            Math.min(handle.length, DeviceRequestDescriptor.HANDLE_LENGTH));
        return this;
    }

    /**
     * Writes a DEVICE_LOAD's or DEVICE_SAVE's layout id.
     *
     * @param layoutId REGISTER_KV's Result Count
     * @return this
     */
    public RequestEncoder layoutId(final int layoutId)
    {
        buffer.set(LittleEndian.INT, offset + DeviceRequestDescriptor.LAYOUT_ID_OFFSET, layoutId);
        buffer.set(LittleEndian.INT, offset + DeviceRequestDescriptor.LAYOUT_ID_OFFSET + 4, 0);
        return this;
    }

    /**
     * Writes device copy entry {@code i}.
     *
     * @param i           its position (slot First + i)
     * @param block       the block in the registered layout
     * @param validTokens tokens of it to copy, 1..Block Tokens
     * @return this
     */
    public RequestEncoder copyEntry(final int i, final int block, final int validTokens)
    {
        final long at = offset + DeviceRequestDescriptor.COPY_ENTRIES_OFFSET + (long)i * DeviceRequestDescriptor.COPY_ENTRY_LENGTH;
        buffer.set(LittleEndian.INT, at, block);
        buffer.set(LittleEndian.INT, at + 4, validTokens);
        return this;
    }
}
