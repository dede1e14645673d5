package io.kvtier.client.pool;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

import static io.kvtier.client.protocol.LittleEndian.INT;
import static io.kvtier.client.protocol.LittleEndian.INT_HANDLE;
import static io.kvtier.client.protocol.LittleEndian.LONG_HANDLE;

/**
 * Reads the counters region as {@link CountersDescriptor} lays it out: the records that name the
 * counters, and their values. Needs nothing but the mapped region, so any process that maps the pool
 * reads names and values from it; the engine's writer extends this class.
 */
public class CountersReader
{
    /** The counters region, {@link CountersDescriptor#REGION_LENGTH} bytes or more. */
    protected final MemorySegment region;

    /**
     * @param region the counters region of a pool, {@link CountersDescriptor#REGION_LENGTH} bytes
     */
    public CountersReader(final MemorySegment region)
    {
        if (region.byteSize() < CountersDescriptor.REGION_LENGTH)
        {
            throw new IllegalArgumentException("counters region of " + region.byteSize() + " bytes, need " + CountersDescriptor.REGION_LENGTH);
        }
        this.region = region;
    }

    /** Receives each allocated counter. */
    @FunctionalInterface
    public interface CounterConsumer
    {
        /**
         * @param id          the counter's id
         * @param typeId      {@link CountersDescriptor#TYPE_COUNTER} or {@link CountersDescriptor#TYPE_GAUGE}
         * @param name        its name
         * @param description what it counts
         * @param value       its value, read opaque
         */
        void accept(int id, int typeId, String name, String description, long value);
    }

    /**
     * @param id a counter id
     * @return its record state, read with acquire semantics
     */
    public int recordStateAcquire(final int id)
    {
        return (int)INT_HANDLE.getAcquire(region, CountersDescriptor.recordOffset(id) + CountersDescriptor.RECORD_STATE_OFFSET);
    }

    /**
     * @param id a counter id
     * @return its value, read opaque (any thread, any process)
     */
    public long valueOpaque(final int id)
    {
        return (long)LONG_HANDLE.getOpaque(region, CountersDescriptor.valueOffset(id));
    }

    /**
     * Reads every allocated counter, in id order. Allocates (the names): for readers, not for the
     * engine's hot path.
     *
     * @param consumer receives each
     */
    public void forEach(final CounterConsumer consumer)
    {
        for (int id = 0; id < CountersDescriptor.MAX_COUNTERS; id++)
        {
            if (recordStateAcquire(id) != CountersDescriptor.RECORD_ALLOCATED)
            {
                continue;
            }
            final long record = CountersDescriptor.recordOffset(id);
            consumer.accept(id, region.get(INT, record + CountersDescriptor.TYPE_ID_OFFSET),
                text(record + CountersDescriptor.NAME_OFFSET, region.get(INT, record + CountersDescriptor.NAME_LENGTH_OFFSET),
                    CountersDescriptor.MAX_NAME_LENGTH),
                text(record + CountersDescriptor.DESCRIPTION_OFFSET, region.get(INT, record + CountersDescriptor.DESCRIPTION_LENGTH_OFFSET),
                    CountersDescriptor.MAX_DESCRIPTION_LENGTH),
                valueOpaque(id));
        }
    }

    private String text(final long offset, final int length, final int max)
    {
        final byte[] bytes = new byte[Math.clamp(length, 0, max)];
        MemorySegment.copy(region, ValueLayout.JAVA_BYTE, offset, bytes, 0, bytes.length);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
