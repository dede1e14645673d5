package io.kvtier.client.pool;

/**
 * Layout of the client pin table: for every page, one 4-byte entry per client slot, little-endian,
 * entry {@code (page, slot)} at {@code Pin Table Offset + 4 * (page * Client Slot Count + slot)}, so
 * a page's entries share a cache line or two.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |        Pin Count (16 bits)    |  Slot Generation (low 16 bits)|  one entry, CAS only
 *  +---------------------------------------------------------------+
 * </pre>
 * (Little-endian: the count is the entry's low half, the generation its high half.)
 *
 * <p>A client's pin of page {@code p} is a count in entry {@code (p, its slot)}, not in the page's
 * state word, so it has an owner. The pin protocol is a Dekker pair with eviction:
 * <ul>
 *   <li>client: CAS the entry up (volatile), then re-read the page's state word and its own slot word
 *       (volatile); if the page is no longer SERVING in the generation it pinned, or the slot is no
 *       longer its own, it takes the count back down and reports a miss;</li>
 *   <li>engine: CAS the state word SERVING(0 pins) → EVICTING, then read every entry of the page
 *       (volatile); any count above 0 puts the word back to SERVING, otherwise the page goes FREE.</li>
 * </ul>
 * In any order of those steps one side sees the other. An entry whose generation is not the slot's
 * current one belongs to a client that lost the slot: its count is void, and the slot's next holder
 * overwrites it.
 */
public final class PinTableDescriptor
{
    /** Length of one entry. */
    public static final int ENTRY_LENGTH = 4;
    /** Most pins one client can hold on one page. */
    public static final int MAX_COUNT = 0xFFFF;

    private PinTableDescriptor()
    {
    }

    /**
     * @param pageCount   pages
     * @param clientSlots client slots
     * @return bytes the table needs
     */
    public static long tableLength(final int pageCount, final int clientSlots)
    {
        return (long)pageCount * clientSlots * ENTRY_LENGTH;
    }

    /**
     * @param pinTableOffset where the table starts in the file
     * @param clientSlots    client slots
     * @param page           a page
     * @param slot           a slot
     * @return the entry's offset in the file
     */
    public static long entryOffset(final long pinTableOffset, final int clientSlots, final int page, final int slot)
    {
        return pinTableOffset + ((long)page * clientSlots + slot) * ENTRY_LENGTH;
    }

    /**
     * @param entry an entry
     * @return its pin count
     */
    public static int count(final int entry)
    {
        return entry & MAX_COUNT;
    }

    /**
     * @param entry an entry
     * @return the low 16 bits of the generation of the slot holder that wrote it
     */
    public static int generation(final int entry)
    {
        return entry >>> 16;
    }

    /**
     * @param generation a slot generation (its low 16 bits are kept)
     * @param count      a pin count
     * @return the entry
     */
    public static int entry(final int generation, final int count)
    {
        return ((generation & 0xFFFF) << 16) | (count & MAX_COUNT);
    }
}
