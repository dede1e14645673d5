package io.kvtier.engine.pool;

import io.kvtier.client.pool.PageMetadataDescriptor;
import io.kvtier.client.pool.PageStateWord;

import java.lang.foreign.MemorySegment;

import static io.kvtier.client.protocol.LittleEndian.INT;
import static io.kvtier.client.protocol.LittleEndian.LONG;
import static io.kvtier.client.protocol.LittleEndian.LONG_HANDLE;
import static io.kvtier.client.pool.PageMetadataDescriptor.ENTRY_LENGTH;
import static io.kvtier.client.pool.PageMetadataDescriptor.HIT_COUNT_OFFSET;
import static io.kvtier.client.pool.PageMetadataDescriptor.KEY_HIGH_OFFSET;
import static io.kvtier.client.pool.PageMetadataDescriptor.KEY_LOW_OFFSET;
import static io.kvtier.client.pool.PageMetadataDescriptor.LAST_ACCESS_OFFSET;
import static io.kvtier.client.pool.PageMetadataDescriptor.NAMESPACE_TAG_OFFSET;
import static io.kvtier.client.pool.PageMetadataDescriptor.LEASE_DEADLINE_OFFSET;
import static io.kvtier.client.pool.PageMetadataDescriptor.OWNER_OFFSET;
import static io.kvtier.client.pool.PageMetadataDescriptor.PAYLOAD_CRC_OFFSET;
import static io.kvtier.client.pool.PageMetadataDescriptor.PAYLOAD_LENGTH_OFFSET;
import static io.kvtier.client.pool.PageMetadataDescriptor.STATE_WORD_OFFSET;

/**
 * Reads and writes the page metadata table as {@link PageMetadataDescriptor} lays it out. The state
 * word is the only field other processes race on, so it is the only one with acquire, volatile and
 * CAS accessors; the other fields are written plain before the CAS that publishes them and read plain
 * after an acquire of the word.
 */
public final class PageMetadata
{
    private final MemorySegment table;
    private final int pageCount;

    /**
     * @param table     the metadata region, {@code pageCount} entries
     * @param pageCount pages in the pool
     */
    public PageMetadata(final MemorySegment table, final int pageCount)
    {
        this.table = table;
        this.pageCount = pageCount;
    }

    /** @return pages in the table */
    public int pageCount()
    {
        return pageCount;
    }

    private static long entry(final int page)
    {
        return (long)page * ENTRY_LENGTH;
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
     * @param word its new state word, written volatile
     */
    public void stateWordVolatile(final int page, final long word)
    {
        LONG_HANDLE.setVolatile(table, entry(page) + STATE_WORD_OFFSET, word);
    }

    /**
     * @param page     a page
     * @param expected the word believed current
     * @param update   the new word
     * @return whether the swap happened (a volatile compare-and-set)
     */
    public boolean compareAndSetStateWord(final int page, final long expected, final long update)
    {
        return LONG_HANDLE.compareAndSet(table, entry(page) + STATE_WORD_OFFSET, expected, update);
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
     * @param page    a page being reserved or loaded
     * @param keyHigh the key's high half
     * @param keyLow  the key's low half
     */
    public void keyPlain(final int page, final long keyHigh, final long keyLow)
    {
        table.set(LONG, entry(page) + KEY_HIGH_OFFSET, keyHigh);
        table.set(LONG, entry(page) + KEY_LOW_OFFSET, keyLow);
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
     * @param page   a page being committed or verified
     * @param length payload length
     * @param crc    payload CRC32C
     */
    public void payloadInfoPlain(final int page, final int length, final int crc)
    {
        table.set(INT, entry(page) + PAYLOAD_LENGTH_OFFSET, length);
        table.set(INT, entry(page) + PAYLOAD_CRC_OFFSET, crc);
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
     * @param page          a page being reserved
     * @param owner         the client writing it
     * @param deadlineNanos when the reservation lapses (the engine clock)
     */
    public void reservationPlain(final int page, final int owner, final long deadlineNanos)
    {
        table.set(INT, entry(page) + OWNER_OFFSET, owner);
        table.set(LONG, entry(page) + LEASE_DEADLINE_OFFSET, deadlineNanos);
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
     * @param hits its hit count
     */
    public void hitCountPlain(final int page, final int hits)
    {
        table.set(INT, entry(page) + HIT_COUNT_OFFSET, hits);
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
     * @param page  a page
     * @param nanos when it was last used (the engine clock)
     */
    public void lastAccessPlain(final int page, final long nanos)
    {
        table.set(LONG, entry(page) + LAST_ACCESS_OFFSET, nanos);
    }

    /**
     * @param page a page
     * @return the namespace tag of the page's key (0: none)
     */
    public long namespaceTagPlain(final int page)
    {
        return table.get(LONG, entry(page) + NAMESPACE_TAG_OFFSET);
    }

    /**
     * Written with the key, before the page is published SERVING.
     *
     * @param page a WRITING page
     * @param tag  its namespace tag
     */
    public void namespaceTagPlain(final int page, final long tag)
    {
        table.set(LONG, entry(page) + NAMESPACE_TAG_OFFSET, tag);
    }
}
