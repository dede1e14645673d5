package io.kvtier.client.pool;

import java.lang.foreign.MemorySegment;

import static io.kvtier.client.pool.ClientSlotDescriptor.CLAIMED_AT_OFFSET;
import static io.kvtier.client.pool.ClientSlotDescriptor.FLAGS_OFFSET;
import static io.kvtier.client.pool.ClientSlotDescriptor.HEARTBEAT_OFFSET;
import static io.kvtier.client.pool.ClientSlotDescriptor.SLOT_LENGTH;
import static io.kvtier.client.pool.ClientSlotDescriptor.SLOT_WORD_OFFSET;
import static io.kvtier.client.protocol.LittleEndian.INT_HANDLE;
import static io.kvtier.client.protocol.LittleEndian.LONG;
import static io.kvtier.client.protocol.LittleEndian.LONG_HANDLE;

/**
 * Reads and writes the client slots as {@link ClientSlotDescriptor} lays them out: claimed and freed
 * by CAS of the slot word, kept alive by the client's heartbeat.
 */
public final class ClientSlots
{
    private final MemorySegment slots;
    private final int count;

    /**
     * @param slots the client slots region
     * @param count slots in it
     */
    public ClientSlots(final MemorySegment slots, final int count)
    {
        this.slots = slots;
        this.count = count;
    }

    /** @return client slots in the pool */
    public int count()
    {
        return count;
    }

    private static long slot(final int slot)
    {
        return (long)slot * SLOT_LENGTH;
    }

    /**
     * @param slot a client slot
     * @return its slot word, read volatile
     */
    public long slotWordVolatile(final int slot)
    {
        return (long)LONG_HANDLE.getVolatile(slots, slot(slot) + SLOT_WORD_OFFSET);
    }

    /**
     * @param slot     a client slot
     * @param expected the word believed current
     * @param update   the new word
     * @return whether the swap happened
     */
    public boolean compareAndSetSlotWord(final int slot, final long expected, final long update)
    {
        return LONG_HANDLE.compareAndSet(slots, slot(slot) + SLOT_WORD_OFFSET, expected, update);
    }

    /**
     * @param slot a client slot
     * @return its client's last heartbeat, epoch ms, read with acquire semantics
     */
    public long heartbeatAcquire(final int slot)
    {
        return (long)LONG_HANDLE.getAcquire(slots, slot(slot) + HEARTBEAT_OFFSET);
    }

    /**
     * @param slot        a client slot the caller holds
     * @param epochMillis the current time
     */
    public void heartbeatRelease(final int slot, final long epochMillis)
    {
        LONG_HANDLE.setRelease(slots, slot(slot) + HEARTBEAT_OFFSET, epochMillis);
    }

    /**
     * @param slot a client slot
     * @return its flags, read with acquire semantics
     */
    public int flagsAcquire(final int slot)
    {
        return (int)INT_HANDLE.getAcquire(slots, slot(slot) + FLAGS_OFFSET);
    }

    /**
     * @param slot  a client slot the caller holds
     * @param flags its flags
     */
    public void flagsRelease(final int slot, final int flags)
    {
        INT_HANDLE.setRelease(slots, slot(slot) + FLAGS_OFFSET, flags);
    }

    /**
     * @param slot        a client slot the caller holds
     * @param epochMillis when it was claimed
     */
    void claimedAtPlain(final int slot, final long epochMillis)
    {
        slots.set(LONG, slot(slot) + CLAIMED_AT_OFFSET, epochMillis);
    }
}
