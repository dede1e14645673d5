package io.kvtier.tier.posix;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Where things are in the slab layout's files ({@code layout = slab}): extent files of equal slots,
 * each slot one object's bytes, with the slots' frame headers packed in a table ahead of them. Every
 * number is little-endian. Nothing is written in place but a slot's frame header (a new frame's, or a
 * tombstone's zeros), so a slot is always one of: free (no valid header), a whole frame, or a torn one
 * that its CRC32Cs give away.
 *
 * <p>An extent, {@code <dir>/slab-<6 decimal digits>.kvs}, preallocated whole up to its tail area when
 * it is made:
 * <pre>
 *   offset 0                           extent header block, HEADER_BLOCK bytes
 *   HEADER_BLOCK + i * HEADER_ENTRY    slot i's frame header, HEADER_ENTRY bytes: the header table, rounded
 *                                      up to whole HEADER_BLOCKs ({@link #tableBytes})
 *   HEADER_BLOCK + tableBytes(slots)
 *     + i * slotBytes                  slot i's bytes ({@link #slotBytes}): the object, less its last
 *                                      HEADER_BLOCK when objects are at least two blocks long; every slot
 *                                      stays aligned for O_DIRECT
 *   extentBytes(slots, slotBytes)
 *     + i * HEADER_BLOCK               slot i's tail block: the tail area, not preallocated (a hole until an
 *                                      object's last block is spilled there, see below)
 * </pre>
 * <b>Why the last block is apart.</b> An engine page frame ends in a 4 KiB block that holds its 72-byte
 * trailer and zeros ({@code PageFrameDescriptor}). Format 3 keeps the first {@link #TAIL_BYTES} bytes of
 * that block in the frame header ({@link #FORM_TRIMMED}) and stores the rest of the object in the slot, so
 * a 16 KiB page costs 16 KiB and 128 header bytes on disk (0.8%), not 20 KiB (25%). An object whose last
 * block holds anything past its first {@code TAIL_BYTES} bytes, which the engine's frames never do but a
 * tier must store any bytes, is stored whole: its last block goes to the slot's tail block
 * ({@link #FORM_SPILLED}). Objects shorter than the slot are stored in it as they are ({@link #FORM_WHOLE}).
 * Format 2 stored the whole frame in a slot and a 64-byte header; format 1 gave each slot a whole header
 * block of its own in front of its payload. Extents of an earlier format are not read: the start-up scan
 * deletes them, saying why.
 * <p>A header is written through the page cache (it is too small for O_DIRECT), the slot's bytes as the
 * tier's I/O path says. A table block holds the headers of 32 slots, so a power loss that tears one may
 * tear the header being written and, at worst, bring back a neighbour's earlier state (a frame whose
 * CRC32Cs then decide, or one a tombstone had cleared, as a lost tombstone would).</p>
 * The extent header, at offset 0 of the file:
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |            magic "KVSLABEX" (u64, EXTENT_MAGIC)               |  0
 *  +---------------------------------------------------------------+
 *  |                    format version (u32)                       |  8
 *  +---------------------------------------------------------------+
 *  |              header block bytes (u32, HEADER_BLOCK)           | 12
 *  +---------------------------------------------------------------+
 *  |                     slot bytes (u64)                          | 16
 *  +---------------------------------------------------------------+
 *  |    object bytes (u64): the objects' size rounded to a block   | 24
 *  +---------------------------------------------------------------+
 *  |                   slots in this extent (u32)                  | 32
 *  +---------------------------------------------------------------+
 *  |                    extent number (u32)                        | 36
 *  +---------------------------------------------------------------+
 *  |                CRC32C of bytes 0 to 39 (u32)                  | 40
 *  +---------------------------------------------------------------+
 *  |                 zeros to the end of the block                 | 44
 *  +---------------------------------------------------------------+
 * </pre>
 * A frame header, at {@code HEADER_BLOCK + i * HEADER_ENTRY} for slot i:
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |             magic "KVSLABFR" (u64, FRAME_MAGIC)               |  0
 *  +---------------------------------------------------------------+
 *  |                    format version (u32)                       |  8
 *  +---------------------------------------------------------------+
 *  |                 object length in bytes (u32)                  | 12
 *  +---------------------------------------------------------------+
 *  |                        key high (u64)                         | 16
 *  +---------------------------------------------------------------+
 *  |                        key low (u64)                          | 24
 *  +---------------------------------------------------------------+
 *  |   sequence (u64): the tier's write counter, higher is newer   | 32
 *  +---------------------------------------------------------------+
 *  |  CRC32C of the stored bytes (u32): the object's first         | 40
 *  |  storedBytes(form, length), those outside this header         |
 *  +---------------------------------------------------------------+
 *  |  form (u32): 0 whole in the slot, 1 trimmed, 2 spilled        | 44
 *  +---------------------------------------------------------------+
 *  |  tail (TAIL_BYTES = 72 bytes): when trimmed, the first bytes  | 48
 *  |  of the object's last block, whose other bytes are zeros;     |
 *  |  zeros otherwise                                              |
 *  +---------------------------------------------------------------+
 *  |                       zeros (u32)                             | 120
 *  +---------------------------------------------------------------+
 *  |                CRC32C of bytes 0 to 123 (u32)                 | 124
 *  +---------------------------------------------------------------+ 128
 * </pre>
 * Why each field: the header's own CRC32C tells a whole header from a torn one or old garbage, and covers
 * a trimmed object's tail; the stored bytes' CRC32C tells a whole slot from a torn one; the sequence tells,
 * when a crash left two whole frames of one key (a rewrite whose old slot was not yet cleared), which is
 * newer. A slot is freed by writing zeros over its frame header (a tombstone) before it can be reused, so
 * a deleted frame is never found again, and a slot whose tombstone could not be written is not reused.
 */
final class SlabDescriptor
{
    /** Bytes of a header block; also the alignment of every slot and payload in an extent. */
    static final int HEADER_BLOCK = 4096;
    /** "KVSLABEX" read as a little-endian u64. */
    static final long EXTENT_MAGIC = magic("KVSLABEX");
    /** "KVSLABFR" read as a little-endian u64. */
    static final long FRAME_MAGIC = magic("KVSLABFR");
    /** The format these classes write and read; another is not read. */
    static final int VERSION = 3;
    /** Bytes of a frame header's entry in an extent's header table. */
    static final int HEADER_ENTRY = 128;
    /** Bytes of an object's last block a trimmed frame's header keeps: an engine frame's whole trailer. */
    static final int TAIL_BYTES = io.kvtier.spi.TrailerBlock.TRAILER_BYTES;
    /** The object is in its slot as it is: it is no longer than the slot. */
    static final int FORM_WHOLE = 0;
    /** The object's last block is its header's tail and zeros; the slot holds the rest. */
    static final int FORM_TRIMMED = 1;
    /** The slot holds the object but its last block, which is in the slot's tail block. */
    static final int FORM_SPILLED = 2;

    static final long EXTENT_MAGIC_OFFSET = 0;
    static final long EXTENT_VERSION_OFFSET = 8;
    static final long EXTENT_HEADER_BLOCK_OFFSET = 12;
    static final long EXTENT_SLOT_BYTES_OFFSET = 16;
    static final long EXTENT_OBJECT_BYTES_OFFSET = 24;
    static final long EXTENT_SLOTS_OFFSET = 32;
    static final long EXTENT_NUMBER_OFFSET = 36;
    static final long EXTENT_CRC_OFFSET = 40;

    static final long FRAME_MAGIC_OFFSET = 0;
    static final long FRAME_VERSION_OFFSET = 8;
    static final long FRAME_LENGTH_OFFSET = 12;
    static final long FRAME_KEY_HIGH_OFFSET = 16;
    static final long FRAME_KEY_LOW_OFFSET = 24;
    static final long FRAME_SEQUENCE_OFFSET = 32;
    static final long FRAME_STORED_CRC_OFFSET = 40;
    static final long FRAME_FORM_OFFSET = 44;
    static final long FRAME_TAIL_OFFSET = 48;
    static final long FRAME_CRC_OFFSET = 124;

    static final String EXTENT_PREFIX = "slab-";
    static final String EXTENT_SUFFIX = ".kvs";
    static final String LOCK_FILE = ".kvtier-slab.lock";

    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** Zeros to compare a last block with: never written, so shared by every thread. */
    private static final MemorySegment ZEROS = java.lang.foreign.Arena.global().allocate(HEADER_BLOCK);

    private SlabDescriptor()
    {
    }

    private static long magic(final String text)
    {
        long value = 0;
        for (int i = 7; i >= 0; i--)
        {
            value = (value << 8) | (text.charAt(i) & 0xFF);
        }
        return value;
    }

    /**
     * @param objectSize the engine's page frame size
     * @return the bytes an object takes at most: the object size rounded up to a header block
     */
    static long objectBytes(final long objectSize)
    {
        return (objectSize + HEADER_BLOCK - 1) / HEADER_BLOCK * HEADER_BLOCK;
    }

    /**
     * @param objectSize the engine's page frame size
     * @return the bytes of a slot: {@link #objectBytes} less the last block, which a trimmed frame keeps in its header,
     *         when objects take two blocks or more; else all of them
     */
    static long slotBytes(final long objectSize)
    {
        final long object = objectBytes(objectSize);
        return object >= 2L * HEADER_BLOCK ? object - HEADER_BLOCK : object;
    }

    /**
     * @param form      a frame's form
     * @param length    its object's length
     * @param slotBytes the slab's slot bytes
     * @return the object's bytes stored outside its header, which the header's stored CRC32C covers: all but a trimmed
     *         object's last block
     */
    static long storedBytes(final int form, final long length, final long slotBytes)
    {
        return form == FORM_TRIMMED ? slotBytes : length;
    }

    /**
     * @param slots slots in an extent
     * @return the bytes of its header table: a {@link #HEADER_ENTRY} a slot, rounded up to whole header blocks
     */
    static long tableBytes(final int slots)
    {
        return ((long)slots * HEADER_ENTRY + HEADER_BLOCK - 1) / HEADER_BLOCK * HEADER_BLOCK;
    }

    /**
     * @param slots     slots in an extent
     * @param slotBytes bytes of a slot
     * @return the bytes of the extent file up to its tail area: its header block, header table and slots, all
     *         preallocated
     */
    static long extentBytes(final int slots, final long slotBytes)
    {
        return HEADER_BLOCK + tableBytes(slots) + slots * slotBytes;
    }

    /**
     * @param extentBytes the most bytes of an extent file
     * @param slotBytes   bytes of a slot
     * @return the most slots an extent of at most {@code extentBytes} holds, 0 when not even one
     */
    static int slotsFitting(final long extentBytes, final long slotBytes)
    {
        long slots = Math.max(0, (extentBytes - HEADER_BLOCK) / (slotBytes + HEADER_ENTRY));
        slots = Math.min(slots, Integer.MAX_VALUE - 1);
        while (slots > 0 && extentBytes(Math.toIntExact(slots), slotBytes) > extentBytes)
        {
            slots--;
        }
        while (extentBytes(Math.toIntExact(slots + 1), slotBytes) <= extentBytes && slots < Integer.MAX_VALUE - 1)
        {
            slots++;
        }
        return (int)slots;
    }

    /**
     * @param slot a slot's index within its extent
     * @return the offset of its frame header in the extent file
     */
    static long headerOffset(final int slot)
    {
        return HEADER_BLOCK + (long)slot * HEADER_ENTRY;
    }

    /**
     * @param slot      a slot's index within its extent
     * @param slots     slots in the extent
     * @param slotBytes bytes of a slot
     * @return the offset of its payload in the extent file
     */
    static long payloadOffset(final int slot, final int slots, final long slotBytes)
    {
        return HEADER_BLOCK + tableBytes(slots) + slot * slotBytes;
    }

    /**
     * @param slot      a slot's index within its extent
     * @param slots     slots in the extent
     * @param slotBytes bytes of a slot
     * @return the offset of its tail block in the extent file, past the preallocated part
     */
    static long tailOffset(final int slot, final int slots, final long slotBytes)
    {
        return extentBytes(slots, slotBytes) + (long)slot * HEADER_BLOCK;
    }

    /**
     * @param number the extent's number
     * @return its file name
     */
    static String extentName(final int number)
    {
        return EXTENT_PREFIX + String.format(java.util.Locale.ROOT, "%06d", number) + EXTENT_SUFFIX;
    }

    /**
     * @param name a file name in the tier's directory
     * @return the extent number it names, or -1 when it is not an extent's name
     */
    static int extentNumber(final String name)
    {
        if (!name.startsWith(EXTENT_PREFIX) || !name.endsWith(EXTENT_SUFFIX)
            || name.length() != EXTENT_PREFIX.length() + 6 + EXTENT_SUFFIX.length())
        {
            return -1;
        }
        int number = 0;
        for (int i = EXTENT_PREFIX.length(); i < EXTENT_PREFIX.length() + 6; i++)
        {
            final char c = name.charAt(i);
            if (c < '0' || c > '9')
            {
                return -1;
            }
            number = number * 10 + (c - '0');
        }
        return number;
    }

    /**
     * Writes an extent header into the start of {@code block}, whose other bytes must be zero.
     *
     * @param block       a header block
     * @param crc         a checksum to reuse
     * @param slotBytes   bytes of a slot
     * @param objectBytes bytes an object takes at most
     * @param slots       slots in the extent
     * @param number      the extent's number
     */
    static void putExtentHeader(final MemorySegment block, final HeaderCrc crc, final long slotBytes, final long objectBytes, final int slots,
                                final int number)
    {
        block.set(U64, EXTENT_MAGIC_OFFSET, EXTENT_MAGIC);
        block.set(U32, EXTENT_VERSION_OFFSET, VERSION);
        block.set(U32, EXTENT_HEADER_BLOCK_OFFSET, HEADER_BLOCK);
        block.set(U64, EXTENT_SLOT_BYTES_OFFSET, slotBytes);
        block.set(U64, EXTENT_OBJECT_BYTES_OFFSET, objectBytes);
        block.set(U32, EXTENT_SLOTS_OFFSET, slots);
        block.set(U32, EXTENT_NUMBER_OFFSET, number);
        block.set(U32, EXTENT_CRC_OFFSET, crc.of(block, EXTENT_CRC_OFFSET));
    }

    /**
     * @param block       an extent's first bytes, at least {@code EXTENT_CRC_OFFSET + 4} of them
     * @param crc         a checksum to reuse
     * @param slotBytes   the slot bytes the tier expects
     * @param objectBytes the object bytes the tier expects
     * @param number      the number the file's name gives
     * @return how many slots the extent holds, or -1 with why in nothing: when the header is not whole, or
     *         describes another geometry or another extent
     */
    static int extentSlots(final MemorySegment block, final HeaderCrc crc, final long slotBytes, final long objectBytes, final int number)
    {
        if (block.get(U64, EXTENT_MAGIC_OFFSET) != EXTENT_MAGIC
            || block.get(U32, EXTENT_CRC_OFFSET) != crc.of(block, EXTENT_CRC_OFFSET)
            || block.get(U32, EXTENT_VERSION_OFFSET) != VERSION
            || block.get(U32, EXTENT_HEADER_BLOCK_OFFSET) != HEADER_BLOCK
            || block.get(U64, EXTENT_SLOT_BYTES_OFFSET) != slotBytes
            || block.get(U64, EXTENT_OBJECT_BYTES_OFFSET) != objectBytes
            || block.get(U32, EXTENT_NUMBER_OFFSET) != number)
        {
            return -1;
        }
        final int slots = block.get(U32, EXTENT_SLOTS_OFFSET);
        return slots > 0 ? slots : -1;
    }

    /**
     * @param block an extent's first bytes, at least {@code EXTENT_CRC_OFFSET + 4} of them
     * @param crc   a checksum to reuse
     * @return whether they are a whole extent header of a format older than {@link #VERSION}
     */
    static boolean isEarlierFormat(final MemorySegment block, final HeaderCrc crc)
    {
        return block.get(U64, EXTENT_MAGIC_OFFSET) == EXTENT_MAGIC
            && block.get(U32, EXTENT_CRC_OFFSET) == crc.of(block, EXTENT_CRC_OFFSET)
            && extentVersion(block) < VERSION;
    }

    /**
     * @param block an extent's first bytes
     * @return the format version its header names
     */
    static int extentVersion(final MemorySegment block)
    {
        return block.get(U32, EXTENT_VERSION_OFFSET);
    }

    /**
     * Writes a frame header into {@code entry}, every one of its {@link #HEADER_ENTRY} bytes.
     *
     * @param entry     a header entry
     * @param crc       a checksum to reuse
     * @param length    the object's length
     * @param keyHigh   the key's high half
     * @param keyLow    the key's low half
     * @param sequence  the write's sequence number
     * @param storedCrc the CRC32C of the object's {@link #storedBytes}
     * @param form      {@link #FORM_WHOLE}, {@link #FORM_TRIMMED} or {@link #FORM_SPILLED}
     * @param object    the object, whose last block's first bytes a trimmed frame keeps
     * @param tailStart where that block starts in {@code object}
     */
    static void putFrameHeader(final MemorySegment entry, final HeaderCrc crc, final int length, final long keyHigh, final long keyLow,
                               final long sequence, final int storedCrc, final int form, final MemorySegment object, final long tailStart)
    {
        entry.set(U64, FRAME_MAGIC_OFFSET, FRAME_MAGIC);
        entry.set(U32, FRAME_VERSION_OFFSET, VERSION);
        entry.set(U32, FRAME_LENGTH_OFFSET, length);
        entry.set(U64, FRAME_KEY_HIGH_OFFSET, keyHigh);
        entry.set(U64, FRAME_KEY_LOW_OFFSET, keyLow);
        entry.set(U64, FRAME_SEQUENCE_OFFSET, sequence);
        entry.set(U32, FRAME_STORED_CRC_OFFSET, storedCrc);
        entry.set(U32, FRAME_FORM_OFFSET, form);
        final long kept = form == FORM_TRIMMED ? Math.min(TAIL_BYTES, length - tailStart) : 0;
        if (kept > 0)
        {
            MemorySegment.copy(object, tailStart, entry, FRAME_TAIL_OFFSET, kept);
        }
        MemorySegment.copy(ZEROS, 0, entry, FRAME_TAIL_OFFSET + kept, FRAME_CRC_OFFSET - FRAME_TAIL_OFFSET - kept);
        entry.set(U32, FRAME_CRC_OFFSET, crc.of(entry, FRAME_CRC_OFFSET));
    }

    /**
     * @param object    a trimmed object's bytes
     * @param tailStart where its last block starts in them
     * @return whether that block is nothing but its first {@link #TAIL_BYTES} bytes and zeros, so that the frame header
     *         can keep it
     */
    static boolean trimmable(final MemorySegment object, final long tailStart)
    {
        return io.kvtier.spi.TrailerBlock.holdsOnlyATrailer(object, tailStart);
    }

    /**
     * Puts a trimmed frame's last block back: the header's tail, then zeros.
     *
     * @param entry     the frame's header, checked whole
     * @param object    the object read, its slot's bytes in place
     * @param tailStart where its last block starts in it
     */
    static void restoreTail(final MemorySegment entry, final MemorySegment object, final long tailStart)
    {
        final long kept = Math.min(TAIL_BYTES, object.byteSize() - tailStart);
        MemorySegment.copy(entry, FRAME_TAIL_OFFSET, object, tailStart, kept);
        io.kvtier.spi.TrailerBlock.restore(object, tailStart + kept);
    }

    /**
     * @param header a frame header's {@link #HEADER_ENTRY} bytes
     * @param crc    a checksum to reuse
     * @return whether it is a whole frame header of this format (its magic, version and CRC32C agree)
     */
    static boolean isFrame(final MemorySegment header, final HeaderCrc crc)
    {
        return header.get(U64, FRAME_MAGIC_OFFSET) == FRAME_MAGIC
            && header.get(U32, FRAME_VERSION_OFFSET) == VERSION
            && header.get(U32, FRAME_CRC_OFFSET) == crc.of(header, FRAME_CRC_OFFSET);
    }

    static int frameLength(final MemorySegment header)
    {
        return header.get(U32, FRAME_LENGTH_OFFSET);
    }

    static long frameKeyHigh(final MemorySegment header)
    {
        return header.get(U64, FRAME_KEY_HIGH_OFFSET);
    }

    static long frameKeyLow(final MemorySegment header)
    {
        return header.get(U64, FRAME_KEY_LOW_OFFSET);
    }

    static long frameSequence(final MemorySegment header)
    {
        return header.get(U64, FRAME_SEQUENCE_OFFSET);
    }

    static int frameStoredCrc(final MemorySegment header)
    {
        return header.get(U32, FRAME_STORED_CRC_OFFSET);
    }

    static int frameForm(final MemorySegment header)
    {
        return header.get(U32, FRAME_FORM_OFFSET);
    }
}
