package io.kvtier.client.pool;

import io.kvtier.collections.KeyTableDescriptor;

/**
 * Layout of the pool file. All words little-endian. Offsets of every region are recorded in the
 * header so a client maps the file and finds everything without knowing the engine's settings.
 *
 * <pre>
 * File
 * +--------------------------+ 0
 * | Header (4 KiB)           |
 * +--------------------------+ 4096
 * | Counters (132 KiB)       |  CountersDescriptor: 512 x 8-byte values, then 512 x 256-byte records naming them
 * +--------------------------+ 139264 = Client Slots Offset
 * | Client Slots             |  ClientSlotDescriptor: Client Slot Count x 64 bytes, padded to 4 KiB
 * +--------------------------+ Metadata Offset
 * | Page Metadata            |  PageMetadataDescriptor: Page Count x 64 bytes, padded to 4 KiB
 * +--------------------------+ Pin Table Offset
 * | Client Pin Table         |  PinTableDescriptor: Page Count x Client Slot Count x 4 bytes, padded to 4 KiB
 * +--------------------------+ Index Offset
 * | Key Index                |  KeyTableDescriptor: key -> page, padded to 4 KiB
 * +--------------------------+ Data Offset (2 MiB aligned, for huge pages)
 * | Frame 0                  |  PageFrameDescriptor: Page Size payload bytes, then a 4 KiB trailer block
 * | Frame 1                  |
 * | ...                      |
 * +--------------------------+ File Length (2 MiB aligned)
 *
 * Header
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                     Magic "KVTPOOL1"                          |   0
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |          Layout Version (written last: the ready flag)        |   8
 *  +---------------------------------------------------------------+
 *  |          Pool State (1 open, 2 closed, 3 superseded)          |  12
 *  +---------------------------------------------------------------+
 *  |                     Page Size                                 |  16
 *  +---------------------------------------------------------------+
 *  |                     Frame Length                              |  24
 *  +---------------------------------------------------------------+
 *  |                     Page Count                                |  32
 *  +---------------------------------------------------------------+
 *  |                     Metadata Offset                           |  40
 *  +---------------------------------------------------------------+
 *  |                     Index Offset                              |  48
 *  +---------------------------------------------------------------+
 *  |                     Index Length                              |  56
 *  +---------------------------------------------------------------+
 *  |                     Data Offset                               |  64
 *  +---------------------------------------------------------------+
 *  |                     File Length                               |  72
 *  +---------------------------------------------------------------+
 *  |                     Counters Offset                           |  80
 *  +---------------------------------------------------------------+
 *  |                     Counters Length                           |  88
 *  +---------------------------------------------------------------+
 *  |                     Creator PID                               |  96
 *  +---------------------------------------------------------------+
 *  |                     Start Time (epoch ms)                     | 104
 *  +---------------------------------------------------------------+
 *  |          Epoch (+1 each time a new file replaces a dead pool) | 112
 *  +---------------------------------------------------------------+
 *  |                     Client Slot Count                         | 120
 *  +---------------------------------------------------------------+
 *  |          Client Timeout (ms without a client heartbeat)       | 124
 *  +---------------------------------------------------------------+
 *  |          Heartbeat (epoch ms, store-release), own cache line  | 128
 *  +---------------------------------------------------------------+
 *  |                     Reserved                                  | 136
 *  +---------------------------------------------------------------+
 *  |                     Client Slots Offset                       | 192
 *  +---------------------------------------------------------------+
 *  |                     Pin Table Offset                          | 200
 *  +---------------------------------------------------------------+
 *  |                     Pin Table Length                          | 208
 *  +---------------------------------------------------------------+
 *  |                     Reserved to 4096                          | 216
 *  +---------------------------------------------------------------+
 * </pre>
 * Every 8-byte field above spans two rows of the ruler; the diagram draws one row per field.
 *
 * <h2>Locks on the file</h2>
 * Byte ranges of the file are locked with open-file-description locks ({@code F_OFD_SETLK}), which
 * the kernel drops when their holder dies and which no other descriptor of the same process can
 * drop by closing. The locks guard nothing in those bytes; they only say who is alive.
 * <ul>
 *   <li>byte {@link #ENGINE_LOCK_BYTE}, write lock: held by the engine that owns the pool for as
 *       long as it runs;</li>
 *   <li>byte {@link #CLIENT_LOCK_BYTE_BASE} + slot, write lock: held by the client process that
 *       claimed that client slot (see {@link ClientSlotDescriptor}).</li>
 * </ul>
 *
 * <h2>Replacing a dead engine's pool</h2>
 * A new engine never reformats a file that clients may still map. It writes
 * {@link #STATE_SUPERSEDED} into the old header, builds a new file under a temporary name and
 * renames it over the old one; old mappings keep the old inode and its bytes, and a client that sees
 * the state change (or a different epoch at the path) maps the new file.
 */
public final class PagePoolDescriptor
{
    /** "KVTPOOL1" as a little-endian long. */
    public static final long MAGIC = 0x314C4F4F5054564BL;
    /** Layout this code writes and reads: 2 added the epoch, client slots and the client pin table. */
    public static final int LAYOUT_VERSION = 3;
    /** Pool state: mapped by a running engine. */
    public static final int STATE_OPEN = 1;
    /** Pool state: the engine closed it cleanly. */
    public static final int STATE_CLOSED = 2;
    /** Pool state: a newer engine replaced this file at its path; clients map the new one. */
    public static final int STATE_SUPERSEDED = 3;
    /**
     * A heartbeat older than this means the pool's creator is gone even if its PID was reused: what a
     * second engine and a reader such as {@code kvtier stat} both go by.
     */
    public static final long HEARTBEAT_STALE_MS = 5_000;

    /** Offset of the magic. */
    public static final int MAGIC_OFFSET = 0;
    /** Offset of the layout version. */
    public static final int LAYOUT_VERSION_OFFSET = 8;
    /** Offset of the pool state. */
    public static final int POOL_STATE_OFFSET = 12;
    /** Offset of the page size. */
    public static final int PAGE_SIZE_OFFSET = 16;
    /** Offset of the frame length. */
    public static final int FRAME_LENGTH_OFFSET = 24;
    /** Offset of the page count. */
    public static final int PAGE_COUNT_OFFSET = 32;
    /** Offset of the metadata offset. */
    public static final int METADATA_OFFSET_OFFSET = 40;
    /** Offset of the index offset. */
    public static final int INDEX_OFFSET_OFFSET = 48;
    /** Offset of the index length. */
    public static final int INDEX_LENGTH_OFFSET = 56;
    /** Offset of the data offset. */
    public static final int DATA_OFFSET_OFFSET = 64;
    /** Offset of the file length. */
    public static final int FILE_LENGTH_OFFSET = 72;
    /** Offset of the counters offset. */
    public static final int COUNTERS_OFFSET_OFFSET = 80;
    /** Offset of the counters length. */
    public static final int COUNTERS_LENGTH_OFFSET = 88;
    /** Offset of the creator's PID. */
    public static final int CREATOR_PID_OFFSET = 96;
    /** Offset of the start time. */
    public static final int START_TIME_OFFSET = 104;
    /** Offset of the epoch. */
    public static final int EPOCH_OFFSET = 112;
    /** Offset of the number of client slots. */
    public static final int CLIENT_SLOT_COUNT_OFFSET = 120;
    /** Offset of the client timeout in milliseconds. */
    public static final int CLIENT_TIMEOUT_MS_OFFSET = 124;
    /** Offset of the heartbeat, alone on its cache line. */
    public static final int HEARTBEAT_OFFSET = 128;
    /** Offset of the client slots' offset. */
    public static final int CLIENT_SLOTS_OFFSET_OFFSET = 192;
    /** Offset of the pin table's offset. */
    public static final int PIN_TABLE_OFFSET_OFFSET = 200;
    /** Offset of the pin table's length. */
    public static final int PIN_TABLE_LENGTH_OFFSET = 208;

    /** The byte the owning engine keeps write-locked. */
    public static final long ENGINE_LOCK_BYTE = 0;
    /** Client slot {@code s} keeps byte {@code CLIENT_LOCK_BYTE_BASE + s} write-locked. */
    public static final long CLIENT_LOCK_BYTE_BASE = 1024;
    /** Most client slots a pool can have (their lock bytes stay inside the header). */
    public static final int MAX_CLIENT_SLOTS = 1024;

    /** Length of the header region. */
    public static final int HEADER_LENGTH = 4096;
    /** Where the counters start. */
    public static final int COUNTERS_OFFSET = HEADER_LENGTH;
    /** Where the client slots start. */
    public static final int CLIENT_SLOTS_OFFSET = COUNTERS_OFFSET + CountersDescriptor.REGION_LENGTH;
    /** Alignment of the data region and the file length, for 2 MiB huge pages. */
    public static final long DATA_ALIGNMENT = 2L << 20;
    /** Alignment of every region. */
    public static final long REGION_ALIGNMENT = 4096;

    private PagePoolDescriptor()
    {
    }

    /**
     * @param value a size or offset
     * @param alignment a power of two
     * @return value rounded up to the alignment
     */
    public static long align(final long value, final long alignment)
    {
        return (value + alignment - 1) & -alignment;
    }

    /**
     * Where each region of a pool of a given shape goes.
     *
     * @param pageSize          payload bytes per page
     * @param frameLength       bytes per frame
     * @param pageCount         pages
     * @param clientSlots       client slots
     * @param countersOffset    where the counters start
     * @param countersLength    their length
     * @param clientSlotsOffset where the client slots start
     * @param metadataOffset    where the page metadata starts
     * @param pinTableOffset    where the client pin table starts
     * @param pinTableLength    its length
     * @param indexOffset       where the key index starts
     * @param indexLength       its length
     * @param dataOffset        where frame 0 starts
     * @param fileLength        the file's length
     */
    public record Layout(long pageSize, long frameLength, int pageCount, int clientSlots, long countersOffset, long countersLength,
                         long clientSlotsOffset, long metadataOffset,
                         long pinTableOffset, long pinTableLength, long indexOffset, long indexLength, long dataOffset, long fileLength)
    {
    }

    /**
     * @param pageSize     payload bytes per page, a multiple of 4096
     * @param pageCount    pages
     * @param indexEntries entries of the key index
     * @param clientSlots  processes that may pin pages directly, at most {@link #MAX_CLIENT_SLOTS}
     * @return the regions of the file
     */
    public static Layout layout(final long pageSize, final int pageCount, final long indexEntries, final int clientSlots)
    {
        if (pageSize <= 0 || pageSize % REGION_ALIGNMENT != 0)
        {
            throw new IllegalArgumentException("pageSize=" + pageSize + " must be a positive multiple of 4096");
        }
        if (clientSlots < 0 || clientSlots > MAX_CLIENT_SLOTS)
        {
            throw new IllegalArgumentException("clientSlots=" + clientSlots + " must be from 0 to " + MAX_CLIENT_SLOTS);
        }
        final long frameLength = PageFrameDescriptor.frameLength(pageSize);
        final long clientSlotsLength = align((long)clientSlots * ClientSlotDescriptor.SLOT_LENGTH, REGION_ALIGNMENT);
        final long metadataOffset = CLIENT_SLOTS_OFFSET + clientSlotsLength;
        final long metadataLength = align((long)pageCount * PageMetadataDescriptor.ENTRY_LENGTH, REGION_ALIGNMENT);
        final long pinTableOffset = metadataOffset + metadataLength;
        final long pinTableLength = align(PinTableDescriptor.tableLength(pageCount, clientSlots), REGION_ALIGNMENT);
        final long indexOffset = pinTableOffset + pinTableLength;
        final long indexLength = align(KeyTableDescriptor.regionLength(indexEntries), REGION_ALIGNMENT);
        final long dataOffset = align(indexOffset + indexLength, DATA_ALIGNMENT);
        final long fileLength = align(dataOffset + (long)pageCount * frameLength, DATA_ALIGNMENT);
        return new Layout(pageSize, frameLength, pageCount, clientSlots, COUNTERS_OFFSET, CountersDescriptor.REGION_LENGTH, CLIENT_SLOTS_OFFSET, metadataOffset, pinTableOffset, pinTableLength,
            indexOffset, indexLength, dataOffset, fileLength);
    }
}
