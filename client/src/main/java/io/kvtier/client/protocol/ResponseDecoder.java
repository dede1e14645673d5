package io.kvtier.client.protocol;

import java.lang.foreign.MemorySegment;

/**
 * Reads a response record in place ({@link ResponseDescriptor}). A flyweight, allocation-free; plain
 * reads, made visible by the ring's acquire of Tail. Valid until the consumer advances past the record.
 */
public final class ResponseDecoder
{
    private MemorySegment buffer;
    private long offset;

    /**
     * @param segment      where the record is
     * @param recordOffset its first byte
     * @return this
     */
    public ResponseDecoder wrap(final MemorySegment segment, final long recordOffset)
    {
        this.buffer = segment;
        this.offset = recordOffset;
        return this;
    }

    /** @return the record's Length */
    public int length()
    {
        return buffer.get(LittleEndian.INT, offset + RecordDescriptor.LENGTH_OFFSET);
    }

    /** @return the request's operation */
    public int type()
    {
        return buffer.get(LittleEndian.INT, offset + RecordDescriptor.TYPE_OFFSET);
    }

    /** @return the echoed request id */
    public long requestId()
    {
        return buffer.get(LittleEndian.LONG, offset + ResponseDescriptor.REQUEST_ID_OFFSET);
    }

    /** @return the status, an {@link ErrorCode}'s code */
    public int status()
    {
        return buffer.get(LittleEndian.INT, offset + ResponseDescriptor.STATUS_OFFSET);
    }

    /** @return pages pinned, reserved, committed, ... */
    public int resultCount()
    {
        return buffer.get(LittleEndian.INT, offset + ResponseDescriptor.RESULT_COUNT_OFFSET);
    }

    /** @return the first slot the entries describe */
    public int firstSlot()
    {
        return buffer.get(LittleEndian.INT, offset + ResponseDescriptor.FIRST_SLOT_OFFSET);
    }

    /** @return entries after the header */
    public int entryCount()
    {
        return buffer.get(LittleEndian.INT, offset + ResponseDescriptor.ENTRY_COUNT_OFFSET);
    }

    /** @return a lookup's leading pool pages */
    public int poolPages()
    {
        return buffer.get(LittleEndian.INT, offset + ResponseDescriptor.POOL_PAGES_OFFSET);
    }

    /** @return a LOOKUP_AND_LOCK's pages reserved after its pinned prefix (its RESERVED entries) */
    public int reservedPages()
    {
        return buffer.get(LittleEndian.INT, offset + ResponseDescriptor.RESERVED_PAGES_OFFSET);
    }

    /** @return a COMMIT_AND_RELEASE's pins dropped */
    public int pinsReleased()
    {
        return buffer.get(LittleEndian.INT, offset + ResponseDescriptor.PINS_RELEASED_OFFSET);
    }

    /** @return a lookup's L3 pages after them */
    public int l3Pages()
    {
        return buffer.get(LittleEndian.INT, offset + ResponseDescriptor.L3_PAGES_OFFSET);
    }

    /** @return an acquire's pages that were in the pool */
    public int fromPool()
    {
        return buffer.get(LittleEndian.INT, offset + ResponseDescriptor.FROM_POOL_OFFSET);
    }

    /** @return an acquire's pages loaded from L3 and verified */
    public int fromL3()
    {
        return buffer.get(LittleEndian.INT, offset + ResponseDescriptor.FROM_L3_OFFSET);
    }

    /**
     * @param i an entry's position
     * @return the page slot First + i holds, or -1
     */
    public int entryPageId(final int i)
    {
        return buffer.get(LittleEndian.INT, entry(i) + ResponseDescriptor.ENTRY_PAGE_ID_OFFSET);
    }

    /**
     * @param i an entry's position
     * @return the page's generation
     */
    public int entryGeneration(final int i)
    {
        return buffer.get(LittleEndian.INT, entry(i) + ResponseDescriptor.ENTRY_GENERATION_OFFSET);
    }

    /**
     * @param i an entry's position
     * @return its {@link PageEntryStatus}
     */
    public int entryStatus(final int i)
    {
        return buffer.get(LittleEndian.INT, entry(i) + ResponseDescriptor.ENTRY_STATUS_OFFSET);
    }

    /** @return a STATS response's counter count */
    public int statsCount()
    {
        return buffer.get(LittleEndian.INT, offset + ResponseDescriptor.STATS_COUNT_OFFSET);
    }

    /**
     * @param i a counter id below {@link #statsCount()}
     * @return its value
     */
    public long statsValue(final int i)
    {
        return buffer.get(LittleEndian.LONG, offset + ResponseDescriptor.STATS_VALUES_OFFSET + 8L * i);
    }

    private long entry(final int i)
    {
        return offset + ResponseDescriptor.HEADER_LENGTH + (long)i * ResponseDescriptor.ENTRY_LENGTH;
    }
}
