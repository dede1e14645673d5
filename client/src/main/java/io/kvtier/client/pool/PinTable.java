package io.kvtier.client.pool;

import java.lang.foreign.MemorySegment;

import static io.kvtier.client.protocol.LittleEndian.INT_HANDLE;
import static io.kvtier.client.pool.PinTableDescriptor.ENTRY_LENGTH;

/**
 * Reads and writes the client pin table as {@link PinTableDescriptor} lays it out. Every access is
 * volatile or a CAS: the table is one side of the Dekker pair between a client's pin and the engine's
 * eviction, described there.
 */
public final class PinTable
{
    private final MemorySegment table;
    private final int clientSlots;

    /**
     * @param table       the pin table region
     * @param clientSlots client slots (entries per page)
     */
    public PinTable(final MemorySegment table, final int clientSlots)
    {
        this.table = table;
        this.clientSlots = clientSlots;
    }

    private long entry(final int page, final int slot)
    {
        return ((long)page * clientSlots + slot) * ENTRY_LENGTH;
    }

    /**
     * @param page a page
     * @param slot a client slot
     * @return the slot's entry for the page, read volatile
     */
    public int entryVolatile(final int page, final int slot)
    {
        return (int)INT_HANDLE.getVolatile(table, entry(page, slot));
    }

    /**
     * @param page     a page
     * @param slot     a client slot
     * @param expected the entry believed current
     * @param update   the new entry
     * @return whether the swap happened
     */
    public boolean compareAndSetEntry(final int page, final int slot, final int expected, final int update)
    {
        return INT_HANDLE.compareAndSet(table, entry(page, slot), expected, update);
    }

    /**
     * @param page a page
     * @return whether any client slot holds a pin on it (volatile reads of every entry)
     */
    public boolean hasPinsVolatile(final int page)
    {
        final long base = entry(page, 0);
        for (int slot = 0; slot < clientSlots; slot++)
        {
            if (PinTableDescriptor.count((int)INT_HANDLE.getVolatile(table, base + (long)slot * ENTRY_LENGTH)) != 0)
            {
                return true;
            }
        }
        return false;
    }
}
