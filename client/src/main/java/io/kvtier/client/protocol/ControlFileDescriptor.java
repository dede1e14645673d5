package io.kvtier.client.protocol;

import java.lang.foreign.MemorySegment;

/**
 * The control file, {@code <pool.path>.ipc} (docs/ipc-protocol.md section 3): one per engine, 4096 bytes,
 * little-endian. The engine writes everything but the Doorbell, which a client clears when it wakes
 * the engine. A waiting client reads the Doorbell (volatile) as the engine's awake flag: 0 while the
 * engine thread is awake, 1 from its announced sleep until it wakes (docs/ipc-protocol.md section 5).
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |              Magic (u64) "KVTIPC01" (ASCII, byte 0 first)     |  0
 *  |                                                               |
 *  +-------------------------------+-------------------------------+
 *  |        Major Version (1)      |        Minor Version (0)      |  8
 *  +-------------------------------+-------------------------------+
 *  |   State (1 open, 2 closed; store-release, written last)       | 12
 *  +---------------------------------------------------------------+
 *  |                        Epoch (u64)                            | 16
 *  +---------------------------------------------------------------+
 *  |                     Engine PID (u64)                          | 24
 *  +---------------------------------------------------------------+
 *  |          ... reserved to 64 ...                               | 32
 *  +---------------------------------------------------------------+
 *  |   Engine Heartbeat (u64): +1 at least every 100 ms (release)  | 64
 *  +---------------------------------------------------------------+
 *  |          ... reserved to 128 ...                              | 72
 *  +---------------------------------------------------------------+
 *  |   Doorbell (u32 futex word): 1 asleep, 0 awake                | 128
 *  +---------------------------------------------------------------+
 *  |          ... reserved to 4096 ...                             | 132
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class ControlFileDescriptor
{
    /** "KVTIPC01" read as a little-endian u64: byte 0 is 'K'. */
    public static final long MAGIC = asciiLittleEndian("KVTIPC01");
    /** Offset of the magic. */
    public static final int MAGIC_OFFSET = 0;
    /** Offset of the u16 major version. */
    public static final int MAJOR_VERSION_OFFSET = 8;
    /** Offset of the u16 minor version. */
    public static final int MINOR_VERSION_OFFSET = 10;
    /** Offset of the state, stored last with release. */
    public static final int STATE_OFFSET = 12;
    /** Offset of the epoch. */
    public static final int EPOCH_OFFSET = 16;
    /** Offset of the engine's pid. */
    public static final int ENGINE_PID_OFFSET = 24;
    /** Offset of the engine heartbeat, on its own cache line. */
    public static final int ENGINE_HEARTBEAT_OFFSET = 64;
    /** Offset of the doorbell futex word, on its own cache line. */
    public static final int DOORBELL_OFFSET = 128;
    /** Length of the file. */
    public static final int LENGTH = 4096;

    /** State: the engine takes requests. */
    public static final int STATE_OPEN = 1;
    /** State: the engine stopped; reconnect through the socket. */
    public static final int STATE_CLOSED = 2;

    /** The longest the engine lets its heartbeat stand still, in milliseconds. */
    public static final int HEARTBEAT_PERIOD_MS = 100;

    private ControlFileDescriptor()
    {
    }

    /**
     * @param control the mapped control file
     * @return its State, read with acquire
     */
    public static int stateAcquire(final MemorySegment control)
    {
        return (int)LittleEndian.INT_HANDLE.getAcquire(control, (long)STATE_OFFSET);
    }

    /**
     * @param control the mapped control file
     * @param state   {@link #STATE_OPEN} or {@link #STATE_CLOSED}, stored with release
     */
    public static void stateRelease(final MemorySegment control, final int state)
    {
        LittleEndian.INT_HANDLE.setRelease(control, (long)STATE_OFFSET, state);
    }

    /**
     * @param control the mapped control file
     * @return its Engine Heartbeat, read with acquire
     */
    public static long engineHeartbeatAcquire(final MemorySegment control)
    {
        return (long)LittleEndian.LONG_HANDLE.getAcquire(control, (long)ENGINE_HEARTBEAT_OFFSET);
    }

    /**
     * @param control   the mapped control file
     * @param heartbeat the next value, stored with release
     */
    public static void engineHeartbeatRelease(final MemorySegment control, final long heartbeat)
    {
        LittleEndian.LONG_HANDLE.setRelease(control, (long)ENGINE_HEARTBEAT_OFFSET, heartbeat);
    }

    /**
     * @param control the mapped control file
     * @return its Epoch (written once, before the State)
     */
    public static long epochPlain(final MemorySegment control)
    {
        return control.get(LittleEndian.LONG, EPOCH_OFFSET);
    }

    /**
     * @param text eight ASCII characters
     * @return them as a little-endian u64, character 0 in the lowest byte
     */
    static long asciiLittleEndian(final String text)
    {
        long value = 0;
        for (int i = 7; i >= 0; i--)
        {
            value = (value << 8) | (text.charAt(i) & 0xFF);
        }
        return value;
    }
}
