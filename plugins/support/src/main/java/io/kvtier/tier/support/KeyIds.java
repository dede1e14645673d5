package io.kvtier.tier.support;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A map from 128-bit page keys to dense int ids, for {@link FileIndex}: open addressing with linear
 * probing, at most half full, in native memory from the caller's arena (so millions of keys put
 * nothing on the Java heap), removal by shifting the probe run back instead of leaving tombstones.
 * Keys are hashes already; the slot still comes from a mix of both halves. Not thread-safe.
 *
 * <p>Public for the POSIX tier's slab layout, which maps keys to slots with it.
 */
public final class KeyIds
{
    /** The answer for a key that is not in the map, and for an insert into a full one. */
    public static final int NONE = -1;

    private static final long SLOT_BYTES = 24;
    private static final long LOW_OFFSET = 8;
    private static final long ID_OFFSET = 16;

    private final MemorySegment slots;
    private final int mask;
    private final int maxEntries;
    private int size;

    /**
     * @param arena      where the slots come from
     * @param maxEntries the most keys held at once
     */
    public KeyIds(final Arena arena, final int maxEntries)
    {
        if (maxEntries < 1 || maxEntries > 1 << 29)
        {
            throw new IllegalArgumentException("maxEntries=" + maxEntries + " is outside [1, 2^29]");
        }
        final int capacity = Integer.highestOneBit(maxEntries * 2 - 1) << 1;
        mask = capacity - 1;
        this.maxEntries = maxEntries;
        slots = arena.allocate(SLOT_BYTES * capacity, 8);
        for (long slot = 0; slot < capacity; slot++)
        {
            slots.set(ValueLayout.JAVA_INT, slot * SLOT_BYTES + ID_OFFSET, NONE);
        }
    }

    /** @return how many keys are held */
    public int size()
    {
        return size;
    }

    /**
     * @param keyHigh the key's high half
     * @param keyLow  its low half
     * @return its id, or {@link #NONE}
     */
    public int find(final long keyHigh, final long keyLow)
    {
        for (int slot = home(keyHigh, keyLow); ; slot = (slot + 1) & mask)
        {
            final int id = id(slot);
            if (id == NONE)
            {
                return NONE;
            }
            if (high(slot) == keyHigh && low(slot) == keyLow)
            {
                return id;
            }
        }
    }

    /**
     * @param keyHigh the key's high half
     * @param keyLow  its low half
     * @param newId   the id to give the key when it is not held (not {@link #NONE})
     * @return the key's id if it was held; else {@code newId}, now held, or {@link #NONE} when the map
     *         holds {@code maxEntries} keys already
     */
    public int putIfAbsent(final long keyHigh, final long keyLow, final int newId)
    {
        int slot = home(keyHigh, keyLow);
        for (int id = id(slot); id != NONE; slot = (slot + 1) & mask, id = id(slot))
        {
            if (high(slot) == keyHigh && low(slot) == keyLow)
            {
                return id;
            }
        }
        if (size == maxEntries)
        {
            return NONE;
        }
        final long base = (long)slot * SLOT_BYTES;
        slots.set(ValueLayout.JAVA_LONG, base, keyHigh);
        slots.set(ValueLayout.JAVA_LONG, base + LOW_OFFSET, keyLow);
        slots.set(ValueLayout.JAVA_INT, base + ID_OFFSET, newId);
        size++;
        return newId;
    }

    /**
     * @param keyHigh the key's high half
     * @param keyLow  its low half
     * @return whether it was held
     */
    public boolean remove(final long keyHigh, final long keyLow)
    {
        int slot = home(keyHigh, keyLow);
        while (true)
        {
            if (id(slot) == NONE)
            {
                return false;
            }
            if (high(slot) == keyHigh && low(slot) == keyLow)
            {
                break;
            }
            slot = (slot + 1) & mask;
        }
        // Shift back each later key of the run whose home is not between the hole and itself, so every
        // key stays reachable from its home without tombstones.
        int hole = slot;
        for (int next = (hole + 1) & mask; id(next) != NONE; next = (next + 1) & mask)
        {
            final int home = home(high(next), low(next));
            final boolean stays = hole <= next ? hole < home && home <= next : hole < home || home <= next;
            if (!stays)
            {
                MemorySegment.copy(slots, (long)next * SLOT_BYTES, slots, (long)hole * SLOT_BYTES, SLOT_BYTES);
                hole = next;
            }
        }
        slots.set(ValueLayout.JAVA_INT, (long)hole * SLOT_BYTES + ID_OFFSET, NONE);
        size--;
        return true;
    }

    private int home(final long keyHigh, final long keyLow)
    {
        final long mixed = (keyHigh ^ Long.rotateLeft(keyLow, 32)) * 0x9E3779B97F4A7C15L;
        return (int)(mixed >>> 32) & mask;
    }

    private int id(final int slot)
    {
        return slots.get(ValueLayout.JAVA_INT, (long)slot * SLOT_BYTES + ID_OFFSET);
    }

    private long high(final int slot)
    {
        return slots.get(ValueLayout.JAVA_LONG, (long)slot * SLOT_BYTES);
    }

    private long low(final int slot)
    {
        return slots.get(ValueLayout.JAVA_LONG, (long)slot * SLOT_BYTES + LOW_OFFSET);
    }
}
