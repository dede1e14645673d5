package io.kvtier.client.protocol;

import java.lang.foreign.MemorySegment;

/**
 * The producing end of one single-producer, single-consumer record ring in a shared mapping
 * (docs/ipc-protocol.md section 4, Records): the client's end of its request ring, the engine's end
 * of a response ring. Tail is this side's own, so it is kept in a field and only ever stored (with
 * release, after the record's bytes); Head is the consumer's, read with acquire and cached until the
 * cached value says the ring is full. Allocation-free; one thread at a time.
 *
 * <p>Use: {@link #tryClaim} a record, write its bytes at the returned offset of {@link #buffer()},
 * then {@link #commitRelease()}. Only one claim may be open at a time.
 */
public final class RingProducer
{
    private final MemorySegment buffer;
    private final long dataOffset;
    private final int capacity;
    private final int mask;
    private final long tailOffset;
    private final long headOffset;
    private long tail;
    private long cachedHead;
    private long claimedTail = -1;

    /**
     * @param buffer     the mapping holding the ring's header fields and its data
     * @param dataOffset where the ring's data starts in {@code buffer}
     * @param capacity   bytes of data, a power of two
     * @param tailOffset where this ring's Tail is in {@code buffer} (8-aligned)
     * @param headOffset where this ring's Head is in {@code buffer} (8-aligned)
     */
    public RingProducer(final MemorySegment buffer, final long dataOffset, final int capacity, final long tailOffset, final long headOffset)
    {
        if (Integer.bitCount(capacity) != 1 || capacity < RecordDescriptor.HEADER_LENGTH)
        {
            throw new IllegalArgumentException("ring capacity " + capacity + " is not a power of two of at least 8");
        }
        this.buffer = buffer;
        this.dataOffset = dataOffset;
        this.capacity = capacity;
        this.mask = capacity - 1;
        this.tailOffset = tailOffset;
        this.headOffset = headOffset;
        this.tail = (long)LittleEndian.LONG_HANDLE.getAcquire(buffer, tailOffset);
        this.cachedHead = headAcquire();
    }

    /** @return the mapping records are written into */
    public MemorySegment buffer()
    {
        return buffer;
    }

    /** @return the ring's data capacity */
    public int capacity()
    {
        return capacity;
    }

    /** @return bytes ever written, as this side last stored them: this side owns Tail, so no ordering is needed */
    public long tailPlain()
    {
        return tail;
    }

    /** @return bytes ever consumed, as the consumer last stored them (acquire: pairs with its release) */
    public long headAcquire()
    {
        return (long)LittleEndian.LONG_HANDLE.getAcquire(buffer, headOffset);
    }

    /**
     * @param length a record's Length
     * @return whether a record of that Length fits now, padding included (reads Head with acquire)
     */
    public boolean hasRoomAcquire(final int length)
    {
        final long required = required(length);
        if (tail + required - cachedHead <= capacity)
        {
            return true;
        }
        cachedHead = headAcquire();
        return tail + required - cachedHead <= capacity;
    }

    /**
     * @param length a record's Length
     * @return whether a record of that Length can ever fit this ring, whatever it holds
     */
    public boolean fitsEver(final int length)
    {
        return length >= RecordDescriptor.HEADER_LENGTH && RecordDescriptor.align(length) <= capacity / 2;
    }

    /**
     * Claims room for a record, writing a padding record first when it would cross the end of the data.
     *
     * @param type   the record's Type (not padding)
     * @param length the record's Length, header included
     * @return the offset in {@link #buffer()} where the record starts (its Length and Type are written),
     *         or -1 when the ring has no room now
     * @throws IllegalArgumentException if the record can never fit ({@link #fitsEver})
     * @throws IllegalStateException    if a claim is already open
     */
    public long tryClaim(final int type, final int length)
    {
        if (!fitsEver(length))
        {
            throw new IllegalArgumentException("a record of " + length + " bytes does not fit a ring of " + capacity);
        }
        if (claimedTail >= 0)
        {
            throw new IllegalStateException("a claim is already open");
        }
        if (!hasRoomAcquire(length))
        {
            return -1;
        }
        int position = (int)(tail & mask);
        final int toEnd = capacity - position;
        final int aligned = RecordDescriptor.align(length);
        long next = tail;
        if (aligned > toEnd)
        {
            buffer.set(LittleEndian.INT, dataOffset + position + RecordDescriptor.LENGTH_OFFSET, toEnd);
            buffer.set(LittleEndian.INT, dataOffset + position + RecordDescriptor.TYPE_OFFSET, MessageType.PADDING);
            next += toEnd;
            position = 0;
        }
        final long offset = dataOffset + position;
        buffer.set(LittleEndian.INT, offset + RecordDescriptor.LENGTH_OFFSET, length);
        buffer.set(LittleEndian.INT, offset + RecordDescriptor.TYPE_OFFSET, type);
        claimedTail = next + aligned;
        return offset;
    }

    /** Publishes the claimed record (and its padding): stores the new Tail with release, after its bytes. */
    public void commitRelease()
    {
        if (claimedTail < 0)
        {
            throw new IllegalStateException("no claim is open");
        }
        tail = claimedTail;
        claimedTail = -1;
        LittleEndian.LONG_HANDLE.setRelease(buffer, tailOffset, tail);
    }

    /** Drops an open claim unpublished: the consumer never sees its bytes. */
    public void abandonClaim()
    {
        claimedTail = -1;
    }

    private long required(final int length)
    {
        final int position = (int)(tail & mask);
        final int aligned = RecordDescriptor.align(length);
        final int toEnd = capacity - position;
        return aligned > toEnd ? (long)toEnd + aligned : aligned;
    }
}
