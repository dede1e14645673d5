package io.kvtier.engine.status;

import io.kvtier.engine.pool.CountersDescriptor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.EnumMap;
import java.util.Map;

/**
 * Writes and reads the counters region. The engine thread is the only writer of every counter, so an
 * increment is a plain read plus a store-opaque, not an atomic add; readers in any thread or process
 * load-opaque.
 */
public final class EngineCounters
{
    private static final VarHandle VALUE = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN).varHandle();

    private final MemorySegment region;

    /**
     * @param region the counters region of a pool
     */
    public EngineCounters(final MemorySegment region)
    {
        if (region.byteSize() < CountersDescriptor.REGION_LENGTH)
        {
            throw new IllegalArgumentException("counters region of " + region.byteSize() + " bytes, need " + CountersDescriptor.REGION_LENGTH);
        }
        this.region = region;
    }

    /**
     * Adds to a counter. Engine thread only.
     *
     * @param counter the counter
     * @param delta   the amount
     */
    public void add(final EngineCounter counter, final long delta)
    {
        final long offset = CountersDescriptor.valueOffset(counter.id());
        VALUE.setOpaque(region, offset, (long)VALUE.get(region, offset) + delta);
    }

    /**
     * Adds one to a counter. Engine thread only.
     *
     * @param counter the counter
     */
    public void increment(final EngineCounter counter)
    {
        add(counter, 1);
    }

    /**
     * Sets a gauge. Engine thread only.
     *
     * @param counter the gauge
     * @param value   its value
     */
    public void set(final EngineCounter counter, final long value)
    {
        VALUE.setOpaque(region, CountersDescriptor.valueOffset(counter.id()), value);
    }

    /**
     * @param counter a counter
     * @return its current value, from any thread
     */
    public long getOpaque(final EngineCounter counter)
    {
        return (long)VALUE.getOpaque(region, CountersDescriptor.valueOffset(counter.id()));
    }

    /** @return every counter's current value */
    public Map<EngineCounter, Long> snapshot()
    {
        final Map<EngineCounter, Long> values = new EnumMap<>(EngineCounter.class);
        for (final EngineCounter counter : EngineCounter.values())
        {
            values.put(counter, getOpaque(counter));
        }
        return values;
    }
}
