package io.kvtier.client;

import io.kvtier.client.pool.PageFrameDescriptor;
import io.kvtier.client.protocol.LittleEndian;
import io.kvtier.client.protocol.ResponseDecoder;

import java.lang.foreign.MemorySegment;

/**
 * A run of slots held by one lease: which page each slot holds and what the engine did for it. Its
 * arrays are sized once for the client's Max Keys, so a reused lease allocates nothing.
 */
abstract sealed class SlotLease implements AutoCloseable permits PinnedPages, ReservedPages, LockedPages
{
    final KvtierClient client;
    final int[] pageIds;
    final int[] statuses;
    int namespaceIndex;
    int firstSlot;
    int count;
    boolean open;

    SlotLease(final KvtierClient client, final int maxKeys)
    {
        this.client = client;
        this.pageIds = new int[maxKeys];
        this.statuses = new int[maxKeys];
    }

    void start(final int namespaceIndex, final int firstSlot, final int count)
    {
        this.namespaceIndex = namespaceIndex;
        this.firstSlot = firstSlot;
        this.count = count;
        this.open = true;
        java.util.Arrays.fill(pageIds, 0, count, -1);
        java.util.Arrays.fill(statuses, 0, count, 0);
    }

    void readEntries(final ResponseDecoder response)
    {
        final int entries = Math.min(response.entryCount(), count);
        for (int i = 0; i < entries; i++)
        {
            pageIds[i] = response.entryPageId(i);
            statuses[i] = response.entryStatus(i);
        }
    }

    /** @return keys the lease was asked for: its slots */
    public int size()
    {
        return count;
    }

    /**
     * @param i a key's position in the lease
     * @return what the engine did for it, a {@link io.kvtier.client.protocol.PageEntryStatus}
     */
    public int status(final int i)
    {
        checkIndex(i);
        return statuses[i];
    }

    /**
     * @param i a key's position
     * @return the pool page its slot holds, or -1
     */
    public int pageId(final int i)
    {
        checkIndex(i);
        return pageIds[i];
    }

    /**
     * @param i a key's position, whose slot holds a page
     * @return the page's offset in {@link KvtierClient#pool()}: read or write it there without a slice
     */
    public long pageOffset(final int i)
    {
        final int page = pageId(i);
        if (page < 0)
        {
            throw new IllegalStateException("key " + i + " holds no page (status " + statuses[i] + ")");
        }
        return client.pageOffset(page);
    }

    /**
     * @param i a key's position, whose slot holds a page
     * @return the page's Page Size bytes in the mapped pool
     */
    public MemorySegment page(final int i)
    {
        return client.pool().asSlice(pageOffset(i), client.pageSize());
    }

    /**
     * @param i a key's position whose page is pinned
     * @return the page's payload length, from its frame's trailer (stable while pinned)
     */
    long trailerPayloadLength(final int i)
    {
        // The trailer follows the page's bytes; its layout is the pool file's (PageFrameDescriptor).
        return client.pool().get(LittleEndian.LONG, pageOffset(i) + client.pageSize() + PageFrameDescriptor.PAYLOAD_LENGTH_OFFSET);
    }

    void checkIndex(final int i)
    {
        if (!open)
        {
            throw new IllegalStateException("the lease is closed");
        }
        if (i < 0 || i >= count)
        {
            throw new IndexOutOfBoundsException("key " + i + " of a lease of " + count);
        }
    }
}
