package io.kvtier.client.protocol;

import java.lang.foreign.MemorySegment;

/**
 * The consuming end of one single-producer, single-consumer record ring in a shared mapping
 * (docs/ipc-protocol.md section 4, Records): the engine's end of a request ring, the client's end of
 * its response ring. Head is this side's own; Tail is the producer's, read with acquire (which makes
 * the record bytes before it visible) and cached until the consumer catches up with it.
 * Allocation-free; one thread at a time.
 *
 * <p>The producer may be another, untrusted process: {@link #poll()} checks the framing of every
 * record against the ring's bounds before handing out its offset, and names what is wrong instead.
 * Use: {@code poll()}, read the record at the offset, then {@link #advanceRelease()}.
 */
public final class RingConsumer
{
    /** {@link #poll()}: nothing to read. */
    public static final long EMPTY = -1;
    /** {@link #poll()}: a record shorter than its header (MALFORMED). */
    public static final long SHORTER_THAN_HEADER = -2;
    /** {@link #poll()}: a record that crosses the end of the data or the Tail, or a Tail beyond a lap (TOO_LONG). */
    public static final long DOES_NOT_FIT = -3;
    /**
     * {@link #poll()}: a padding record that does not run exactly to the end of the data: padding only
     * ever fills the room a record could not take before the ring wraps, so one anywhere else is broken
     * framing (a producer may not use padding to skip around the ring).
     */
    public static final long MISPLACED_PADDING = -4;

    private final MemorySegment buffer;
    private final long dataOffset;
    private final int capacity;
    private final int mask;
    private final long tailOffset;
    private final long headOffset;
    private long head;
    private long cachedTail;
    private int currentAligned;
    private int currentLength;

    /**
     * @param buffer     the mapping holding the ring's header fields and its data
     * @param dataOffset where the ring's data starts in {@code buffer}
     * @param capacity   bytes of data, a power of two
     * @param tailOffset where this ring's Tail is in {@code buffer} (8-aligned)
     * @param headOffset where this ring's Head is in {@code buffer} (8-aligned)
     */
    public RingConsumer(final MemorySegment buffer, final long dataOffset, final int capacity, final long tailOffset, final long headOffset)
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
        this.head = (long)LittleEndian.LONG_HANDLE.getAcquire(buffer, headOffset);
        this.cachedTail = head;
    }

    /** @return the mapping records are read from */
    public MemorySegment buffer()
    {
        return buffer;
    }

    /** @return bytes ever written, as the producer last stored them (acquire: its record bytes are visible) */
    public long tailAcquire()
    {
        return (long)LittleEndian.LONG_HANDLE.getAcquire(buffer, tailOffset);
    }

    /** @return bytes ever consumed: this side owns Head, so no ordering is needed */
    public long headPlain()
    {
        return head;
    }

    /** @return whether the producer has published past this side's Head (reads Tail with acquire) */
    public boolean hasRecordAcquire()
    {
        if (head != cachedTail)
        {
            return true;
        }
        cachedTail = tailAcquire();
        return head != cachedTail;
    }

    /**
     * Finds the next record, skipping (and consuming) padding records.
     *
     * @return the offset in {@link #buffer()} where the record starts, or {@link #EMPTY},
     *         {@link #SHORTER_THAN_HEADER}, {@link #DOES_NOT_FIT} or {@link #MISPLACED_PADDING}; on an error
     *         the ring is left as it is
     */
    public long poll()
    {
        while (true)
        {
            if (!hasRecordAcquire())
            {
                return EMPTY;
            }
            final long available = cachedTail - head;
            if (available < 0 || available > capacity)
            {
                return DOES_NOT_FIT;
            }
            final int position = (int)(head & mask);
            final long offset = dataOffset + position;
            final int length = buffer.get(LittleEndian.INT, offset + RecordDescriptor.LENGTH_OFFSET);
            if (length < RecordDescriptor.HEADER_LENGTH)
            {
                return SHORTER_THAN_HEADER;
            }
            final long aligned = ((long)length + RecordDescriptor.ALIGNMENT - 1) & -RecordDescriptor.ALIGNMENT;
            if (position + aligned > capacity || aligned > available)
            {
                return DOES_NOT_FIT;
            }
            if (buffer.get(LittleEndian.INT, offset + RecordDescriptor.TYPE_OFFSET) == MessageType.PADDING)
            {
                if (length != capacity - position)
                {
                    return MISPLACED_PADDING;
                }
                head += aligned;
                LittleEndian.LONG_HANDLE.setRelease(buffer, headOffset, head);
                continue;
            }
            currentAligned = (int)aligned;
            currentLength = length;
            return offset;
        }
    }

    /**
     * @return the Length of the record {@link #poll()} returned, as {@code poll()} read and checked it:
     *         an untrusted producer may rewrite the bytes in the ring, so decoders bound themselves by
     *         this copy, never by a second read
     */
    public int currentLength()
    {
        return currentLength;
    }

    /** Consumes the record {@link #poll()} returned: stores the new Head with release, after every read of it. */
    public void advanceRelease()
    {
        if (currentAligned == 0)
        {
            throw new IllegalStateException("no record was polled");
        }
        head += currentAligned;
        currentAligned = 0;
        currentLength = 0;
        LittleEndian.LONG_HANDLE.setRelease(buffer, headOffset, head);
    }

    /** @return the bytes the record from {@link #poll()} takes in the ring, 0 when none is current */
    public int currentAlignedLength()
    {
        return currentAligned;
    }
}
