package io.kvtier.client.pool;

/**
 * Layout of one client slot: 64 bytes, one cache line, little-endian. Slot {@code s} is at
 * {@code Client Slots Offset + 64 * s}. A process that pins pages directly in the pool (not through
 * the engine's ring) first claims a slot; every pin it takes is counted under that slot in the pin
 * table ({@link PinTableDescriptor}), so that the engine can give the pins back when the process
 * dies or stops heartbeating.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |    State      |            Generation (24 bits)               |  0   slot word, CAS only
 *  +---------------------------------------------------------------+
 *  |                     PID of the claiming process               |  4
 *  +---------------------------------------------------------------+
 *  |          Heartbeat (epoch ms, store-release by the client)    |  8
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                     Flags (bit 0: holds its lock byte)        | 16
 *  +---------------------------------------------------------------+
 *  |                     Reserved                                  | 20
 *  +---------------------------------------------------------------+
 *  |                     Claimed At (epoch ms)                     | 24
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                     Reserved to 64                            | 32
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * <p>Slot word transitions (all CAS on the 64-bit word):
 * <ul>
 *   <li>FREE(g) → ACTIVE(g + 1, pid): a client claims the slot, then writes its heartbeat, takes the
 *       slot's lock byte ({@link PagePoolDescriptor#CLIENT_LOCK_BYTE_BASE} + s) and sets flag bit 0;</li>
 *   <li>ACTIVE(g, pid) → FREE(g): the client leaves, after giving back its pins;</li>
 *   <li>ACTIVE(g, pid) → RECLAIMING(g, pid) → FREE(g): the engine takes the slot back from a client
 *       whose lock byte is free (it died: the kernel drops the lock with the process), or whose PID is
 *       gone (a client without the lock), or whose heartbeat is older than the pool's client timeout.
 *       In between, the engine zeroes the slot's pin counts.</li>
 * </ul>
 * The generation tells a stalled client that it lost its slot, even after another process took it.
 */
public final class ClientSlotDescriptor
{
    /** Length of one slot. */
    public static final int SLOT_LENGTH = 64;
    /** Offset of the slot word. */
    public static final int SLOT_WORD_OFFSET = 0;
    /** Offset of the heartbeat. */
    public static final int HEARTBEAT_OFFSET = 8;
    /** Offset of the flags. */
    public static final int FLAGS_OFFSET = 16;
    /** Offset of the claim time. */
    public static final int CLAIMED_AT_OFFSET = 24;

    /** State: nobody holds the slot. */
    public static final int FREE = 0;
    /** State: a live client holds it. */
    public static final int ACTIVE = 1;
    /** State: the engine is taking it back. */
    public static final int RECLAIMING = 2;

    /** Flag: the client holds its lock byte, so a free lock byte means it died. */
    public static final int FLAG_LOCKED = 1;

    private static final long GENERATION_MASK = (1L << 24) - 1;

    private ClientSlotDescriptor()
    {
    }

    /**
     * @param clientSlotsOffset where the slots start in the file
     * @param slot              a slot
     * @return the slot's offset in the file
     */
    public static long slotOffset(final long clientSlotsOffset, final int slot)
    {
        return clientSlotsOffset + (long)slot * SLOT_LENGTH;
    }

    /**
     * @param slot a slot
     * @return the file offset of the byte its client keeps locked
     */
    public static long lockByte(final int slot)
    {
        return PagePoolDescriptor.CLIENT_LOCK_BYTE_BASE + slot;
    }

    /**
     * @param state      FREE, ACTIVE or RECLAIMING
     * @param generation the slot's generation (24 bits used)
     * @param pid        the holder's PID, 0 when free
     * @return the slot word
     */
    public static long word(final int state, final int generation, final int pid)
    {
        return (state & 0xFFL) | ((generation & GENERATION_MASK) << 8) | ((long)pid << 32);
    }

    /**
     * @param word a slot word
     * @return its state
     */
    public static int state(final long word)
    {
        return (int)(word & 0xFF);
    }

    /**
     * @param word a slot word
     * @return its generation
     */
    public static int generation(final long word)
    {
        return (int)((word >>> 8) & GENERATION_MASK);
    }

    /**
     * @param word a slot word
     * @return its holder's PID
     */
    public static int pid(final long word)
    {
        return (int)(word >>> 32);
    }
}
