package io.kvtier.collections;

/**
 * Layout of a {@link KeyTable} region. Little-endian words on every host (the pool file's one byte order); the region starts 64-byte aligned.
 *
 * <pre>
 * Header (64 bytes)
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                        Magic "KTB1"                           |  0
 *  +---------------------------------------------------------------+
 *  |                        Slot Length (32)                       |  4
 *  +---------------------------------------------------------------+
 *  |                  Slot Count (power of two)                    |  8
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                     Max Entries                               | 16
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                     Hash Seed                                 | 24
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                Size (entries, store-release)                  | 32
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                     Reserved (24 bytes)                       | 40
 *  +---------------------------------------------------------------+
 *
 * Slot (32 bytes), slot i at 64 + 32 * i
 *  +---------------------------------------------------------------+
 *  |                     Key High                                  |  0
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                     Key Low                                   |  8
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                     Value (int, -1 = none)                    | 16
 *  +---------------------------------------------------------------+
 *  |O|                   Flags (31 user bits)                      | 20
 *  +---------------------------------------------------------------+
 *  |                     Aux (long, user data)                     | 24
 *  |                                                               |
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * <p>O is the occupied bit (bit 31 of Flags), written last with release semantics when a slot is
 * filled. Probing is linear from {@code mix(keyHigh ^ keyLow ^ seed) & (slotCount - 1)}, where
 * {@code mix} is the SplitMix64 finaliser. Deletion shifts later entries back, so there are no
 * tombstones. There is one writer at a time; readers in other processes treat what they find as a
 * hint and confirm it against the record the value points to.
 */
public final class KeyTableDescriptor
{
    /** "KTB1" little-endian. */
    public static final int MAGIC = 0x3142544B;
    /** Offset of the magic. */
    public static final int MAGIC_OFFSET = 0;
    /** Offset of the slot length. */
    public static final int SLOT_LENGTH_OFFSET = 4;
    /** Offset of the slot count. */
    public static final int SLOT_COUNT_OFFSET = 8;
    /** Offset of the entry limit. */
    public static final int MAX_ENTRIES_OFFSET = 16;
    /** Offset of the hash seed. */
    public static final int SEED_OFFSET = 24;
    /** Offset of the entry count. */
    public static final int SIZE_OFFSET = 32;
    /** Length of the header. */
    public static final int HEADER_LENGTH = 64;

    /** Length of one slot. */
    public static final int SLOT_LENGTH = 32;
    /** Offset of the key's high half within a slot. */
    public static final int KEY_HIGH_OFFSET = 0;
    /** Offset of the key's low half within a slot. */
    public static final int KEY_LOW_OFFSET = 8;
    /** Offset of the value within a slot. */
    public static final int VALUE_OFFSET = 16;
    /** Offset of the flags within a slot. */
    public static final int FLAGS_OFFSET = 20;
    /** Offset of the auxiliary word within a slot. */
    public static final int AUX_OFFSET = 24;

    /** Occupied bit of the flags word. */
    public static final int OCCUPIED = 0x8000_0000;
    /** The bits callers may use. */
    public static final int USER_FLAGS_MASK = 0x7FFF_FFFF;

    private KeyTableDescriptor()
    {
    }

    /**
     * @param maxEntries the most entries the table must hold
     * @return slots for that many entries at a load factor of at most 3/4, a power of two
     */
    public static long slotCountFor(final long maxEntries)
    {
        if (maxEntries < 1)
        {
            throw new IllegalArgumentException("maxEntries=" + maxEntries + " must be at least 1");
        }
        final long wanted = Math.max(8, maxEntries + (maxEntries + 2) / 3);
        final long slots = Long.highestOneBit(wanted - 1) << 1;
        if (slots <= 0 || slots > (1L << 40))
        {
            throw new IllegalArgumentException("maxEntries=" + maxEntries + " is too large");
        }
        return slots;
    }

    /**
     * @param maxEntries the most entries the table must hold
     * @return bytes needed for the region
     */
    public static long regionLength(final long maxEntries)
    {
        return HEADER_LENGTH + slotCountFor(maxEntries) * SLOT_LENGTH;
    }

    /**
     * @param slot a slot index
     * @return the slot's offset from the start of the region
     */
    public static long slotOffset(final long slot)
    {
        return HEADER_LENGTH + slot * SLOT_LENGTH;
    }
}
