package io.kvtier.engine.status;

import io.kvtier.engine.pool.Counters;
import io.kvtier.client.pool.CountersDescriptor;
import io.kvtier.client.protocol.MessageType;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.Map;

/**
 * The engine's counters, by {@link EngineCounter}, over the pool's counters region. The engine thread
 * is the only writer of every counter, so an increment is a plain read plus a store-opaque, not an
 * atomic add; readers in any thread or process load-opaque, and find each counter's name, type and
 * description in the region itself ({@link Counters#forEach}).
 */
public final class EngineCounters
{
    private final Counters counters;
    private final EngineHistograms histograms = new EngineHistograms();

    /**
     * @param region the counters region of a pool
     */
    public EngineCounters(final MemorySegment region)
    {
        this.counters = new Counters(region);
    }

    /**
     * The latency histograms that go with these counters: on the heap, not in the region, so each
     * instance has its own, and those of the engine's own instance ({@code Engine.histograms()}) are the
     * ones its engine thread records into and the metrics endpoint reads.
     *
     * @return the histograms
     */
    public EngineHistograms histograms()
    {
        return histograms;
    }

    /**
     * Writes every counter's metadata record, so that other processes can list them. The pool's
     * owner calls it once, at start.
     */
    public void allocateAll()
    {
        for (final EngineCounter counter : EngineCounter.values())
        {
            counters.allocate(counter.id(), counter.type().typeId(), counter.label(), counter.description());
        }
        for (int type = 0; type < CountersDescriptor.REQUEST_TYPES; type++)
        {
            if (MessageType.isOperation(type))
            {
                counters.allocate(CountersDescriptor.FIRST_REQUEST_TYPE_ID + type, CountersDescriptor.TYPE_COUNTER,
                    "requests_" + MessageType.name(type).toLowerCase(java.util.Locale.ROOT), "Requests of type " + MessageType.name(type) + " the engine took.");
            }
        }
    }

    /**
     * Records how a tier runs, as an info record ({@link CountersDescriptor#TYPE_INFO}) that
     * {@code kvtier stat} shows. The pool's owner calls it once per tier, at start.
     *
     * @param index       the tier's index in configuration order
     * @param name        its name
     * @param description its type and {@code describe()} line
     */
    public void describeTier(final int index, final String name, final String description)
    {
        final byte[] full = ("tier_" + name).getBytes(StandardCharsets.UTF_8);
        // A record's name holds 52 bytes; a longer tier name is cut at a character boundary.
        int length = Math.min(full.length, CountersDescriptor.MAX_NAME_LENGTH);
        while (length < full.length && length > 0 && (full[length] & 0xC0) == 0x80)
        {
            length--;
        }
        counters.allocate(CountersDescriptor.FIRST_TIER_INFO_ID + index, CountersDescriptor.TYPE_INFO,
            new String(full, 0, length, StandardCharsets.UTF_8), description);
        for (int c = 0; c < CountersDescriptor.TIER_COUNTER_STRIDE; c++)
        {
            final String what = CountersDescriptor.TIER_COUNTER_NAMES.get(c);
            final boolean gauge = c == CountersDescriptor.TIER_USED_BYTES || c == CountersDescriptor.TIER_CAPACITY_BYTES
                || c == CountersDescriptor.TIER_OBJECTS;
            counters.allocate(CountersDescriptor.tierCounterId(index, c), gauge ? CountersDescriptor.TYPE_GAUGE : CountersDescriptor.TYPE_COUNTER,
                cut("l3_" + name + "_" + what), "Tier " + name + ": " + what.replace('_', ' ') + ".");
        }
    }

    private static String cut(final String name)
    {
        final byte[] full = name.getBytes(StandardCharsets.UTF_8);
        int length = Math.min(full.length, CountersDescriptor.MAX_NAME_LENGTH);
        while (length < full.length && length > 0 && (full[length] & 0xC0) == 0x80)
        {
            length--;
        }
        return new String(full, 0, length, StandardCharsets.UTF_8);
    }

    /**
     * Adds to one of a tier's counters. Each counter has one writer: the engine thread for counts, the
     * tier's call thread for its usage gauges.
     *
     * @param tier    the tier's index
     * @param counter a {@code CountersDescriptor.TIER_*} offset
     * @param delta   the amount
     */
    public void addTier(final int tier, final int counter, final long delta)
    {
        counters.addOpaque(CountersDescriptor.tierCounterId(tier, counter), delta);
    }

    /**
     * Sets one of a tier's gauges; its one writer only.
     *
     * @param tier    the tier's index
     * @param counter a {@code CountersDescriptor.TIER_*} offset
     * @param value   the value
     */
    public void setTier(final int tier, final int counter, final long value)
    {
        counters.valueOpaque(CountersDescriptor.tierCounterId(tier, counter), value);
    }

    /**
     * @param tier    the tier's index
     * @param counter a {@code CountersDescriptor.TIER_*} offset
     * @return the counter's value, from any thread
     */
    public long tierOpaque(final int tier, final int counter)
    {
        return counters.valueOpaque(CountersDescriptor.tierCounterId(tier, counter));
    }

    /**
     * Counts a request the engine took. Engine thread only.
     *
     * @param type its message type
     */
    public void countRequest(final int type)
    {
        if (type >= 0 && type < CountersDescriptor.REQUEST_TYPES && MessageType.isOperation(type))
        {
            counters.addOpaque(CountersDescriptor.FIRST_REQUEST_TYPE_ID + type, 1);
        }
    }

    /**
     * Records a tier's state as the value of its info record. Engine thread only.
     *
     * @param index the tier's index in configuration order
     * @param state {@link CountersDescriptor#TIER_IN_SERVICE}, {@link CountersDescriptor#TIER_STUCK} or
     *              {@link CountersDescriptor#TIER_OUT_OF_SERVICE}
     */
    public void tierState(final int index, final int state)
    {
        counters.valueOpaque(CountersDescriptor.FIRST_TIER_INFO_ID + index, state);
    }

    /**
     * @param index a tier's index in configuration order
     * @return its state, as {@link #tierState(int, int)} last recorded it, from any thread
     */
    public int tierStateOpaque(final int index)
    {
        return (int)counters.valueOpaque(CountersDescriptor.FIRST_TIER_INFO_ID + index);
    }

    /**
     * Adds to a counter. Engine thread only.
     *
     * @param counter the counter
     * @param delta   the amount
     */
    public void add(final EngineCounter counter, final long delta)
    {
        counters.addOpaque(counter.id(), delta);
    }

    /**
     * Adds one to a counter. Engine thread only.
     *
     * @param counter the counter
     */
    public void increment(final EngineCounter counter)
    {
        counters.addOpaque(counter.id(), 1);
    }

    /**
     * Sets a gauge. Engine thread only.
     *
     * @param counter the gauge
     * @param value   its value
     */
    public void set(final EngineCounter counter, final long value)
    {
        counters.valueOpaque(counter.id(), value);
    }

    /**
     * @param counter a counter
     * @return its current value, from any thread
     */
    public long getOpaque(final EngineCounter counter)
    {
        return counters.valueOpaque(counter.id());
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
