package io.kvtier.client.pool;

import java.lang.foreign.MemorySegment;

import static io.kvtier.client.pool.PageMetadataDescriptor.ENTRY_LENGTH;
import static io.kvtier.client.pool.PageMetadataDescriptor.HIT_COUNT_OFFSET;
import static io.kvtier.client.pool.PageMetadataDescriptor.KEY_HIGH_OFFSET;
import static io.kvtier.client.pool.PageMetadataDescriptor.KEY_LOW_OFFSET;
import static io.kvtier.client.pool.PageMetadataDescriptor.LAST_ACCESS_OFFSET;
import static io.kvtier.client.pool.PageMetadataDescriptor.LEASE_DEADLINE_OFFSET;
import static io.kvtier.client.pool.PageMetadataDescriptor.NAMESPACE_TAG_OFFSET;
import static io.kvtier.client.pool.PageMetadataDescriptor.OWNER_OFFSET;
import static io.kvtier.client.pool.PageMetadataDescriptor.PAYLOAD_CRC_OFFSET;
import static io.kvtier.client.pool.PageMetadataDescriptor.PAYLOAD_LENGTH_OFFSET;
import static io.kvtier.client.pool.PageMetadataDescriptor.STATE_WORD_OFFSET;
import static io.kvtier.client.protocol.LittleEndian.INT;
import static io.kvtier.client.protocol.LittleEndian.LONG;
import static io.kvtier.client.protocol.LittleEndian.LONG_HANDLE;

/**
 * Reads the page metadata table as {@link PageMetadataDescriptor} lays it out: what a process that
 * maps the pool may read of a page. The state word is the only field other processes race on, so it
 * is read with acquire or volatile semantics; the other fields are written plain before the CAS that
 * publishes them and read plain after an acquire of the word. The engine's writer extends this class.
 */
public class PageMetadataReader
{
    /** The metadata region, {@link #pageCount()} entries. */
    protected final MemorySegment table;
    private final int pageCount;

    /**
     * @param table     the metadata region, {@code pageCount} entries
     * @param pageCount pages in the pool
     */
    public PageMetadataReader(final MemorySegment table, final int pageCount)
    {
        this.table = table;
        this.pageCount = pageCount;
    }

    /**
     * @param page a page
     * @return the byte offset of its entry in the table
     */
    protected static long entry(final int page)
    {
        return (long)page * ENTRY_LENGTH;
    }

    /** @return pages in the table */
    public int pageCount()
    {
        return pageCount;
    }

    /**
     * @param page a page
     * @return its state word ({@link PageStateWord}), read with acquire semantics
     */
    public long stateWordAcquire(final int page)
    {
        return (long)LONG_HANDLE.getAcquire(table, entry(page) + STATE_WORD_OFFSET);
    }

    /**
     * @param page a page
     * @return its state word, read volatile: for the Dekker pairing of pins against eviction
     */
    public long stateWordVolatile(final int page)
    {
        return (long)LONG_HANDLE.getVolatile(table, entry(page) + STATE_WORD_OFFSET);
    }

    /**
     * @param page a page
     * @return its key's high half
     */
    public long keyHighPlain(final int page)
    {
        return table.get(LONG, entry(page) + KEY_HIGH_OFFSET);
    }

    /**
     * @param page a page
     * @return its key's low half
     */
    public long keyLowPlain(final int page)
    {
        return table.get(LONG, entry(page) + KEY_LOW_OFFSET);
    }

    /**
     * @param page a page
     * @return its committed payload length
     */
    public int payloadLengthPlain(final int page)
    {
        return table.get(INT, entry(page) + PAYLOAD_LENGTH_OFFSET);
    }

    /**
     * @param page a page
     * @return its committed payload CRC32C
     */
    public int payloadCrcPlain(final int page)
    {
        return table.get(INT, entry(page) + PAYLOAD_CRC_OFFSET);
    }

    /**
     * @param page a page
     * @return the client that holds it while WRITING
     */
    public int ownerPlain(final int page)
    {
        return table.get(INT, entry(page) + OWNER_OFFSET);
    }

    /**
     * @param page a page
     * @return when its reservation lapses
     */
    public long leaseDeadlinePlain(final int page)
    {
        return table.get(LONG, entry(page) + LEASE_DEADLINE_OFFSET);
    }

    /**
     * @param page a page
     * @return times it was acquired since it was committed
     */
    public int hitCountPlain(final int page)
    {
        return table.get(INT, entry(page) + HIT_COUNT_OFFSET);
    }

    /**
     * @param page a page
     * @return when it was last used
     */
    public long lastAccessPlain(final int page)
    {
        return table.get(LONG, entry(page) + LAST_ACCESS_OFFSET);
    }

    /**
     * @param page a page
     * @return the namespace tag of the page's key (0: none)
     */
    public long namespaceTagPlain(final int page)
    {
        return table.get(LONG, entry(page) + NAMESPACE_TAG_OFFSET);
    }
}
