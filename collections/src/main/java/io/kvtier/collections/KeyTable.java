package io.kvtier.collections;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.concurrent.ThreadLocalRandom;

import static io.kvtier.collections.KeyTableDescriptor.AUX_OFFSET;
import static io.kvtier.collections.KeyTableDescriptor.FLAGS_OFFSET;
import static io.kvtier.collections.KeyTableDescriptor.HEADER_LENGTH;
import static io.kvtier.collections.KeyTableDescriptor.KEY_HIGH_OFFSET;
import static io.kvtier.collections.KeyTableDescriptor.KEY_LOW_OFFSET;
import static io.kvtier.collections.KeyTableDescriptor.MAGIC;
import static io.kvtier.collections.KeyTableDescriptor.MAGIC_OFFSET;
import static io.kvtier.collections.KeyTableDescriptor.MAX_ENTRIES_OFFSET;
import static io.kvtier.collections.KeyTableDescriptor.OCCUPIED;
import static io.kvtier.collections.KeyTableDescriptor.SEED_OFFSET;
import static io.kvtier.collections.KeyTableDescriptor.SIZE_OFFSET;
import static io.kvtier.collections.KeyTableDescriptor.SLOT_COUNT_OFFSET;
import static io.kvtier.collections.KeyTableDescriptor.SLOT_LENGTH;
import static io.kvtier.collections.KeyTableDescriptor.SLOT_LENGTH_OFFSET;
import static io.kvtier.collections.KeyTableDescriptor.USER_FLAGS_MASK;
import static io.kvtier.collections.KeyTableDescriptor.VALUE_OFFSET;

/**
 * An open-addressing table from 128-bit keys to slots holding an int value, 31 flag bits and a long,
 * laid out in a {@link MemorySegment} as {@link KeyTableDescriptor} describes. Nothing here allocates
 * after construction, and the heap footprint is constant whatever the size.
 *
 * <p>Slot indexes returned by {@link #find} and {@link #insert} stay valid until the next
 * {@link #remove}, which may move entries. One thread mutates at a time; see the descriptor for
 * what concurrent readers may assume.
 */
public final class KeyTable
{
    /** Returned by {@link #find} for an absent key and by {@link #insert} when the table is full. */
    public static final int NONE = -1;

    // Little-endian whatever the host, like every layout in the pool file: another process, another
    // architecture or another language reads the same bytes the same way.
    private static final ValueLayout.OfInt JAVA_INT = ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong JAVA_LONG = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle INT_HANDLE = JAVA_INT.varHandle();
    private static final VarHandle LONG_HANDLE = JAVA_LONG.varHandle();
    // Every slot field is naturally aligned (the region is 8-byte aligned, slots are 32 bytes), so the
    // plain accesses of the probe loops skip the per-access alignment check the aligned layouts make.
    private static final ValueLayout.OfLong PLAIN_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt PLAIN_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    // Value and Flags are adjacent ints at an 8-byte boundary (offsets 16 and 20), so one long access moves
    // both: filling or moving a slot publishes value and occupied bit in a single release store, still after
    // the keys, and a reader's acquiring load of the Flags int alone sees either the old or the new word.
    // Every release store costs more than the store itself: the segment's checks are redone after it.
    private static final long VALUE_FLAGS_OFFSET = VALUE_OFFSET;
    // Little-endian: Value (offset 16) is the long's low half and Flags (offset 20) its high half.
    private static final int FLAGS_SHIFT = 32;

    private final MemorySegment region;
    private final long mask;
    private final long maxEntries;
    private final long seed;
    private long size;

    private KeyTable(final MemorySegment region)
    {
        this.region = region;
        this.mask = region.get(JAVA_LONG, SLOT_COUNT_OFFSET) - 1;
        this.maxEntries = region.get(JAVA_LONG, MAX_ENTRIES_OFFSET);
        this.seed = region.get(JAVA_LONG, SEED_OFFSET);
        this.size = (long)LONG_HANDLE.getAcquire(region, (long)SIZE_OFFSET);
    }

    /**
     * Formats an empty table in {@code region}.
     *
     * @param region     at least {@link KeyTableDescriptor#regionLength(long)} bytes, 8-byte aligned
     * @param maxEntries the most entries the table will accept
     * @return the table
     */
    public static KeyTable format(final MemorySegment region, final long maxEntries)
    {
        final long slots = KeyTableDescriptor.slotCountFor(maxEntries);
        final long length = KeyTableDescriptor.regionLength(maxEntries);
        if (region.byteSize() < length)
        {
            throw new IllegalArgumentException("region of " + region.byteSize() + " bytes is smaller than the " + length + " needed for maxEntries=" + maxEntries);
        }
        region.asSlice(0, length).fill((byte)0);
        region.set(JAVA_INT, SLOT_LENGTH_OFFSET, SLOT_LENGTH);
        region.set(JAVA_LONG, SLOT_COUNT_OFFSET, slots);
        region.set(JAVA_LONG, MAX_ENTRIES_OFFSET, maxEntries);
        region.set(JAVA_LONG, SEED_OFFSET, ThreadLocalRandom.current().nextLong());
        LONG_HANDLE.setRelease(region, (long)SIZE_OFFSET, 0L);
        INT_HANDLE.setRelease(region, (long)MAGIC_OFFSET, MAGIC);
        return new KeyTable(region);
    }

    /**
     * Attaches to a table formatted earlier, possibly by another process.
     *
     * @param region the table's region
     * @return the table
     * @throws IllegalStateException if the region does not hold a formatted table
     */
    public static KeyTable attach(final MemorySegment region)
    {
        final int magic = (int)INT_HANDLE.getAcquire(region, (long)MAGIC_OFFSET);
        if (magic != MAGIC)
        {
            throw new IllegalStateException("no key table here: magic=0x" + Integer.toHexString(magic));
        }
        final int slotLength = region.get(JAVA_INT, SLOT_LENGTH_OFFSET);
        if (slotLength != SLOT_LENGTH)
        {
            throw new IllegalStateException("key table slot length " + slotLength + " is not " + SLOT_LENGTH);
        }
        return new KeyTable(region);
    }

    /** @return the number of entries */
    public long size()
    {
        return size;
    }

    /** @return the most entries the table accepts */
    public long maxEntries()
    {
        return maxEntries;
    }

    /** @return the number of slots, for sweeping with {@link #isOccupied} */
    public long slotCount()
    {
        return mask + 1;
    }

    private static long mix(final long x)
    {
        long z = x;
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    private long home(final long keyHigh, final long keyLow)
    {
        return mix(keyHigh ^ keyLow ^ seed) & mask;
    }

    private static long offset(final long slot)
    {
        return HEADER_LENGTH + slot * SLOT_LENGTH;
    }

    private static long valueFlags(final int value, final int flags)
    {
        return ((long)flags << FLAGS_SHIFT) | (value & 0xFFFF_FFFFL);
    }

    private static int flagsOf(final long valueFlags)
    {
        return (int)(valueFlags >>> FLAGS_SHIFT);
    }

    /**
     * @param slot a slot index
     * @return whether the slot holds an entry
     */
    public boolean isOccupied(final long slot)
    {
        return ((int)INT_HANDLE.getAcquire(region, offset(slot) + FLAGS_OFFSET) & OCCUPIED) != 0;
    }

    /**
     * @param keyHigh the key's high half
     * @param keyLow  the key's low half
     * @return the slot holding the key, or {@link #NONE}
     */
    public int find(final long keyHigh, final long keyLow)
    {
        final MemorySegment r = region;
        long slot = home(keyHigh, keyLow);
        while (true)
        {
            final long at = offset(slot);
            if (((int)INT_HANDLE.getAcquire(r, at + FLAGS_OFFSET) & OCCUPIED) == 0)
            {
                return NONE;
            }
            // The low half first: it tells keys apart as well as the high half, and a namespace such as the
            // replay's shares one high half across all its keys.
            if (r.get(PLAIN_LONG, at + KEY_LOW_OFFSET) == keyLow && r.get(PLAIN_LONG, at + KEY_HIGH_OFFSET) == keyHigh)
            {
                return (int)slot;
            }
            slot = (slot + 1) & mask;
        }
    }

    /**
     * Finds the key's slot, or claims one with value {@code -1}, flags 0 and aux 0.
     *
     * @param keyHigh the key's high half
     * @param keyLow  the key's low half
     * @return the slot, or {@link #NONE} when the key is absent and the table holds {@link #maxEntries()}
     */
    public int insert(final long keyHigh, final long keyLow)
    {
        final MemorySegment r = region;
        long slot = home(keyHigh, keyLow);
        while (true)
        {
            final long at = offset(slot);
            if ((r.get(PLAIN_INT, at + FLAGS_OFFSET) & OCCUPIED) == 0)
            {
                if (size >= maxEntries)
                {
                    return NONE;
                }
                r.set(PLAIN_LONG, at + KEY_HIGH_OFFSET, keyHigh);
                r.set(PLAIN_LONG, at + KEY_LOW_OFFSET, keyLow);
                r.set(PLAIN_LONG, at + AUX_OFFSET, 0L);
                LONG_HANDLE.setRelease(r, at + VALUE_FLAGS_OFFSET, valueFlags(-1, OCCUPIED));
                size++;
                LONG_HANDLE.setRelease(r, (long)SIZE_OFFSET, size);
                return (int)slot;
            }
            if (r.get(PLAIN_LONG, at + KEY_LOW_OFFSET) == keyLow && r.get(PLAIN_LONG, at + KEY_HIGH_OFFSET) == keyHigh)
            {
                return (int)slot;
            }
            slot = (slot + 1) & mask;
        }
    }

    /**
     * Removes a key, shifting later entries of its probe run back so lookups need no tombstones.
     *
     * @param keyHigh the key's high half
     * @param keyLow  the key's low half
     * @return whether the key was present
     */
    public boolean remove(final long keyHigh, final long keyLow)
    {
        final long slot = slotOfOwnKey(keyHigh, keyLow);
        if (slot == NONE)
        {
            return false;
        }
        removeAt(slot);
        return true;
    }

    /**
     * {@link #find} for the writer, which reads only what it wrote itself and so needs no acquiring load:
     * each one costs more than the load, the segment's checks being redone after it.
     */
    private long slotOfOwnKey(final long keyHigh, final long keyLow)
    {
        final MemorySegment r = region;
        long slot = home(keyHigh, keyLow);
        while (true)
        {
            final long at = offset(slot);
            if ((r.get(PLAIN_INT, at + FLAGS_OFFSET) & OCCUPIED) == 0)
            {
                return NONE;
            }
            if (r.get(PLAIN_LONG, at + KEY_LOW_OFFSET) == keyLow && r.get(PLAIN_LONG, at + KEY_HIGH_OFFSET) == keyHigh)
            {
                return slot;
            }
            slot = (slot + 1) & mask;
        }
    }

    /**
     * Removes the entry in a slot (see {@link #remove}).
     *
     * @param slot an occupied slot
     */
    public void removeAt(final long slot)
    {
        final long next = (slot + 1) & mask;
        if ((flagsOf(region.get(PLAIN_LONG, offset(next) + VALUE_FLAGS_OFFSET)) & OCCUPIED) == 0)
        {
            // The common case below the load limit: nothing follows, so nothing shifts. Kept apart from the
            // shifting loop so that this path is small enough to inline into callers.
            vacate(slot);
        }
        else
        {
            shiftBack(slot, next);
        }
    }

    private void shiftBack(final long slot, final long first)
    {
        final MemorySegment r = region;
        final long m = mask;
        long hole = slot;
        long next = first;
        while (true)
        {
            final long at = offset(next);
            final long valueFlags = r.get(PLAIN_LONG, at + VALUE_FLAGS_OFFSET);
            if ((flagsOf(valueFlags) & OCCUPIED) == 0)
            {
                break;
            }
            final long keyHigh = r.get(PLAIN_LONG, at + KEY_HIGH_OFFSET);
            final long keyLow = r.get(PLAIN_LONG, at + KEY_LOW_OFFSET);
            // The entry may fill the hole unless its home lies cyclically in (hole, next], that is unless it is
            // nearer its home than the hole is: one comparison of probe distances instead of two range cases.
            if (((next - home(keyHigh, keyLow)) & m) >= ((next - hole) & m))
            {
                final long dst = offset(hole);
                r.set(PLAIN_LONG, dst + KEY_HIGH_OFFSET, keyHigh);
                r.set(PLAIN_LONG, dst + KEY_LOW_OFFSET, keyLow);
                r.set(PLAIN_LONG, dst + AUX_OFFSET, r.get(PLAIN_LONG, at + AUX_OFFSET));
                LONG_HANDLE.setRelease(r, dst + VALUE_FLAGS_OFFSET, valueFlags);
                hole = next;
            }
            next = (next + 1) & m;
        }
        vacate(hole);
    }

    private void vacate(final long slot)
    {
        INT_HANDLE.setRelease(region, offset(slot) + FLAGS_OFFSET, 0);
        size--;
        LONG_HANDLE.setRelease(region, (long)SIZE_OFFSET, size);
    }

    /**
     * @param slot an occupied slot
     * @return the key's high half
     */
    public long keyHigh(final long slot)
    {
        return region.get(PLAIN_LONG, offset(slot) + KEY_HIGH_OFFSET);
    }

    /**
     * @param slot an occupied slot
     * @return the key's low half
     */
    public long keyLow(final long slot)
    {
        return region.get(PLAIN_LONG, offset(slot) + KEY_LOW_OFFSET);
    }

    /**
     * @param slot an occupied slot
     * @return the slot's value
     */
    public int value(final long slot)
    {
        return region.get(PLAIN_INT, offset(slot) + VALUE_OFFSET);
    }

    /**
     * @param slot  an occupied slot
     * @param value the new value
     */
    public void value(final long slot, final int value)
    {
        INT_HANDLE.setRelease(region, offset(slot) + VALUE_OFFSET, value);
    }

    /**
     * @param slot an occupied slot
     * @return the slot's user flags (31 bits)
     */
    public int flags(final long slot)
    {
        return region.get(PLAIN_INT, offset(slot) + FLAGS_OFFSET) & USER_FLAGS_MASK;
    }

    /**
     * @param slot  an occupied slot
     * @param flags the new user flags (31 bits)
     */
    public void flags(final long slot, final int flags)
    {
        INT_HANDLE.setRelease(region, offset(slot) + FLAGS_OFFSET, OCCUPIED | (flags & USER_FLAGS_MASK));
    }

    /**
     * @param slot an occupied slot
     * @return the slot's auxiliary word
     */
    public long aux(final long slot)
    {
        return region.get(PLAIN_LONG, offset(slot) + AUX_OFFSET);
    }

    /**
     * @param slot an occupied slot
     * @param aux  the new auxiliary word
     */
    public void aux(final long slot, final long aux)
    {
        region.set(PLAIN_LONG, offset(slot) + AUX_OFFSET, aux);
    }
}
