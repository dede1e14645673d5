package io.kvtier.engine.pool;

import io.kvtier.client.pool.CountersDescriptor;
import io.kvtier.client.pool.CountersReader;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

import static io.kvtier.client.protocol.LittleEndian.INT;
import static io.kvtier.client.protocol.LittleEndian.INT_HANDLE;
import static io.kvtier.client.protocol.LittleEndian.LONG_HANDLE;

/**
 * The owner's side of the counters region as {@link CountersDescriptor} lays it out: it names each
 * counter once, at start, then is the single writer of its value. Readers in any process use
 * {@link CountersReader}, which this class extends.
 */
public final class Counters extends CountersReader
{
    /**
     * @param region the counters region of a pool, {@link CountersDescriptor#REGION_LENGTH} bytes
     */
    public Counters(final MemorySegment region)
    {
        super(region);
    }

    /**
     * Names a counter and makes it visible to readers (the record state goes last, with release
     * semantics). Owner only, at start.
     *
     * @param id          a counter id
     * @param typeId      its type
     * @param name        its name, at most {@link CountersDescriptor#MAX_NAME_LENGTH} bytes of UTF-8
     * @param description what it counts, cut to {@link CountersDescriptor#MAX_DESCRIPTION_LENGTH} bytes
     */
    public void allocate(final int id, final int typeId, final String name, final String description)
    {
        final long record = CountersDescriptor.recordOffset(id);
        final byte[] nameBytes = name.getBytes(StandardCharsets.UTF_8);
        if (nameBytes.length > CountersDescriptor.MAX_NAME_LENGTH)
        {
            throw new IllegalArgumentException("counter name '" + name + "' is longer than " + CountersDescriptor.MAX_NAME_LENGTH + " bytes");
        }
        final byte[] descriptionBytes = cut(description.getBytes(StandardCharsets.UTF_8), CountersDescriptor.MAX_DESCRIPTION_LENGTH);
        region.asSlice(record, CountersDescriptor.RECORD_LENGTH).fill((byte)0);
        region.set(INT, record + CountersDescriptor.TYPE_ID_OFFSET, typeId);
        region.set(INT, record + CountersDescriptor.NAME_LENGTH_OFFSET, nameBytes.length);
        MemorySegment.copy(nameBytes, 0, region, ValueLayout.JAVA_BYTE, record + CountersDescriptor.NAME_OFFSET, nameBytes.length);
        region.set(INT, record + CountersDescriptor.DESCRIPTION_LENGTH_OFFSET, descriptionBytes.length);
        MemorySegment.copy(descriptionBytes, 0, region, ValueLayout.JAVA_BYTE, record + CountersDescriptor.DESCRIPTION_OFFSET, descriptionBytes.length);
        INT_HANDLE.setRelease(region, record + CountersDescriptor.RECORD_STATE_OFFSET, CountersDescriptor.RECORD_ALLOCATED);
    }

    /** Cuts UTF-8 bytes to a length without splitting a character. */
    private static byte[] cut(final byte[] utf8, final int max)
    {
        if (utf8.length <= max)
        {
            return utf8;
        }
        int end = max;
        while (end > 0 && (utf8[end] & 0xC0) == 0x80)
        {
            end--;
        }
        return java.util.Arrays.copyOf(utf8, end);
    }

    /**
     * Single writer only.
     *
     * @param id    a counter id
     * @param value its new value, stored opaque
     */
    public void valueOpaque(final int id, final long value)
    {
        LONG_HANDLE.setOpaque(region, CountersDescriptor.valueOffset(id), value);
    }

    /**
     * Adds to a value; single writer only, so a plain read and an opaque store, not an atomic add.
     *
     * @param id    a counter id
     * @param delta the amount
     */
    public void addOpaque(final int id, final long delta)
    {
        final long offset = CountersDescriptor.valueOffset(id);
        LONG_HANDLE.setOpaque(region, offset, (long)LONG_HANDLE.get(region, offset) + delta);
    }
}
