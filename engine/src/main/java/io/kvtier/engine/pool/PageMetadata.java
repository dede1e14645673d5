package io.kvtier.engine.pool;

import io.kvtier.client.pool.PageMetadataDescriptor;
import io.kvtier.client.pool.PageMetadataReader;

import java.lang.foreign.MemorySegment;

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
 * The owner's side of the page metadata table as {@link PageMetadataDescriptor} lays it out: the
 * engine writes the fields plain before the CAS of the state word that publishes them, and changes
 * the state word by CAS or volatile stores only. What other processes may read is
 * {@link PageMetadataReader}'s, which this class extends.
 */
public final class PageMetadata extends PageMetadataReader
{
    /**
     * @param table     the metadata region, {@code pageCount} entries
     * @param pageCount pages in the pool
     */
    public PageMetadata(final MemorySegment table, final int pageCount)
    {
        super(table, pageCount);
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
     * @param hits its hit count
     */
    public void hitCountPlain(final int page, final int hits)
    {
        table.set(INT, entry(page) + HIT_COUNT_OFFSET, hits);
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
