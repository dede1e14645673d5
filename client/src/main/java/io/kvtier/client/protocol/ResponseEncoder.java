package io.kvtier.client.protocol;

import java.lang.foreign.MemorySegment;

/**
 * Writes a response record in place ({@link ResponseDescriptor}): point it at a claimed record with
 * {@link #wrap}, write the header and entries, then publish the ring. A flyweight, allocation-free;
 * writes are plain and published by the ring's release store of Tail.
 */
public final class ResponseEncoder
{
    private MemorySegment buffer;
    private long offset;

    /**
     * @param segment      where the record is
     * @param recordOffset its first byte
     * @return this
     */
    public ResponseEncoder wrap(final MemorySegment segment, final long recordOffset)
    {
        this.buffer = segment;
        this.offset = recordOffset;
        return this;
    }

    /**
     * Writes the whole header.
     *
     * @param length      the record's Length
     * @param type        the request's operation
     * @param requestId   the request's id
     * @param status      an {@link ErrorCode}'s code
     * @param resultCount pages pinned, reserved, committed, ...
     * @param firstSlot   the first slot the entries describe
     * @param entryCount  entries after the header
     * @param poolPages   a lookup's leading pool pages
     * @param l3Pages     a lookup's L3 pages after them
     * @param fromPool    an acquire's pages that were in the pool
     * @param fromL3      an acquire's pages loaded from L3
     * @return this
     */
    public ResponseEncoder header(final int length, final int type, final long requestId, final int status, final int resultCount, final int firstSlot,
                                  final int entryCount, final int poolPages, final int l3Pages, final int fromPool, final int fromL3)
    {
        buffer.set(LittleEndian.INT, offset + RecordDescriptor.LENGTH_OFFSET, length);
        buffer.set(LittleEndian.INT, offset + RecordDescriptor.TYPE_OFFSET, type);
        buffer.set(LittleEndian.LONG, offset + ResponseDescriptor.REQUEST_ID_OFFSET, requestId);
        buffer.set(LittleEndian.INT, offset + ResponseDescriptor.STATUS_OFFSET, status);
        buffer.set(LittleEndian.INT, offset + ResponseDescriptor.RESULT_COUNT_OFFSET, resultCount);
        buffer.set(LittleEndian.INT, offset + ResponseDescriptor.FIRST_SLOT_OFFSET, firstSlot);
        buffer.set(LittleEndian.INT, offset + ResponseDescriptor.ENTRY_COUNT_OFFSET, entryCount);
        buffer.set(LittleEndian.INT, offset + ResponseDescriptor.POOL_PAGES_OFFSET, poolPages);
        buffer.set(LittleEndian.INT, offset + ResponseDescriptor.L3_PAGES_OFFSET, l3Pages);
        buffer.set(LittleEndian.INT, offset + ResponseDescriptor.FROM_POOL_OFFSET, fromPool);
        buffer.set(LittleEndian.INT, offset + ResponseDescriptor.FROM_L3_OFFSET, fromL3);
        return this;
    }

    /**
     * Writes entry {@code i}, for slot First + i.
     *
     * @param i          its position
     * @param pageId     the page the slot holds, or -1
     * @param generation the page's generation
     * @param pageStatus a {@link PageEntryStatus}
     * @return this
     */
    public ResponseEncoder entry(final int i, final int pageId, final int generation, final int pageStatus)
    {
        final long at = offset + ResponseDescriptor.HEADER_LENGTH + (long)i * ResponseDescriptor.ENTRY_LENGTH;
        buffer.set(LittleEndian.INT, at + ResponseDescriptor.ENTRY_PAGE_ID_OFFSET, pageId);
        buffer.set(LittleEndian.INT, at + ResponseDescriptor.ENTRY_GENERATION_OFFSET, generation);
        buffer.set(LittleEndian.INT, at + ResponseDescriptor.ENTRY_STATUS_OFFSET, pageStatus);
        return this;
    }

    /**
     * Writes entries {@code 0..count-1}, for slots {@code first..first+count-1}, from the client's per-slot
     * arrays: an entry that names no page carries no generation (a stale one would read as a page of the past).
     *
     * @param first       the first slot
     * @param count       entries
     * @param pageIds     page per slot, or -1
     * @param generations generation per slot
     * @param statuses    {@link PageEntryStatus} per slot
     * @return this
     */
    public ResponseEncoder entries(final int first, final int count, final int[] pageIds, final int[] generations, final byte[] statuses)
    {
        if (first < 0 || count < 0 || first > pageIds.length - count || first > generations.length - count || first > statuses.length - count)
        {
            throw new IndexOutOfBoundsException("entries for slots " + first + ".." + ((long)first + count) + " of " + pageIds.length);
        }
        final MemorySegment b = buffer;
        long at = offset + ResponseDescriptor.HEADER_LENGTH;
        for (int slot = first, end = first + count; slot < end; slot++, at += ResponseDescriptor.ENTRY_LENGTH)
        {
            final int pageId = pageIds[slot];
            final int generation = pageId < 0 ? 0 : generations[slot];
            // Page Id and Generation are adjacent little-endian ints: one long store writes both.
            b.set(LittleEndian.LONG, at + ResponseDescriptor.ENTRY_PAGE_ID_OFFSET, ((long)generation << 32) | (pageId & 0xFFFF_FFFFL));
            b.set(LittleEndian.INT, at + ResponseDescriptor.ENTRY_STATUS_OFFSET, statuses[slot]);
        }
        return this;
    }

    /**
     * Writes a STATS body's count.
     *
     * @param counters values that follow
     * @return this
     */
    public ResponseEncoder statsCount(final int counters)
    {
        buffer.set(LittleEndian.INT, offset + ResponseDescriptor.STATS_COUNT_OFFSET, counters);
        return this;
    }

    /**
     * Writes a STATS body's value {@code i}.
     *
     * @param i     a counter id
     * @param value its value
     * @return this
     */
    public ResponseEncoder statsValue(final int i, final long value)
    {
        buffer.set(LittleEndian.LONG, offset + ResponseDescriptor.STATS_VALUES_OFFSET + 8L * i, value);
        return this;
    }
}
