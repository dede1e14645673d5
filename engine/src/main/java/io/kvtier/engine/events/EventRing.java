package io.kvtier.engine.events;

import static io.kvtier.engine.events.EventRingDescriptor.HEADER_LENGTH;
import static io.kvtier.engine.events.EventRingDescriptor.HEAD_OFFSET;
import static io.kvtier.engine.events.EventRingDescriptor.KEY_HIGH_OFFSET;
import static io.kvtier.engine.events.EventRingDescriptor.KEY_LOW_OFFSET;
import static io.kvtier.engine.events.EventRingDescriptor.MEDIUM_OFFSET;
import static io.kvtier.engine.events.EventRingDescriptor.RECORD_LENGTH;
import static io.kvtier.engine.events.EventRingDescriptor.TAG_OFFSET;
import static io.kvtier.engine.events.EventRingDescriptor.TAIL_OFFSET;
import static io.kvtier.engine.events.EventRingDescriptor.TYPE_OFFSET;

import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * A single-producer, single-consumer ring of fixed-size event records off the heap
 * ({@link EventRingDescriptor}). The engine thread is the one producer: it records without allocating
 * and without waiting, and when the ring is full it drops the event and counts it ({@code events_dropped}).
 * The publisher thread is the one consumer ({@link #poll}). It is the engine's {@link PageEvents} when
 * events are on.
 */
public final class EventRing implements PageEvents
{
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    /** Receives the records {@link #poll} reads, one call each. */
    @FunctionalInterface
    public interface Handler
    {
        /**
         * @param type         {@link EventRingDescriptor#TYPE_STORED}, {@code TYPE_REMOVED} or {@code TYPE_CLEARED}
         * @param medium       {@link PageEvents#POOL} or a tier's medium
         * @param keyHigh      the page key's high half
         * @param keyLow       its low half
         * @param namespaceTag the namespace tag
         */
        void onEvent(int type, int medium, long keyHigh, long keyLow, long namespaceTag);
    }

    private final MemorySegment ring;
    private final int capacity;
    private final int mask;
    private final EngineCounters counters;
    /** The producer's copy of the tail (only it writes the tail). */
    private long tail;
    /** The producer's last view of the head, refreshed only when the ring looks full. */
    private long headCache;

    /**
     * @param capacity records, a power of two
     * @param counters where recorded and dropped events are counted
     */
    public EventRing(final int capacity, final EngineCounters counters)
    {
        if (capacity < 1 || Integer.bitCount(capacity) != 1)
        {
            throw new IllegalArgumentException("event ring capacity=" + capacity + " is not a power of two");
        }
        this.capacity = capacity;
        this.mask = capacity - 1;
        this.counters = counters;
        // Freed when nothing refers to the ring: the publisher may still drain it after the engine closed.
        this.ring = Arena.ofAuto().allocate(EventRingDescriptor.length(capacity), 64);
    }

    /** @return records the ring holds */
    public int capacity()
    {
        return capacity;
    }

    @Override
    public void stored(final long keyHigh, final long keyLow, final long namespaceTag, final int medium)
    {
        offer(EventRingDescriptor.TYPE_STORED, medium, keyHigh, keyLow, namespaceTag);
    }

    @Override
    public void removed(final long keyHigh, final long keyLow, final long namespaceTag, final int medium)
    {
        offer(EventRingDescriptor.TYPE_REMOVED, medium, keyHigh, keyLow, namespaceTag);
    }

    @Override
    public void cleared()
    {
        offer(EventRingDescriptor.TYPE_CLEARED, 0, 0, 0, 0);
    }

    /**
     * Records one event, or drops and counts it when the ring is full. Producer only.
     *
     * @param type         an {@link EventRingDescriptor} record type
     * @param medium       its medium
     * @param keyHigh      the page key's high half
     * @param keyLow       its low half
     * @param namespaceTag the namespace tag
     * @return whether it was recorded
     */
    boolean offer(final int type, final int medium, final long keyHigh, final long keyLow, final long namespaceTag)
    {
        if (tail - headCache >= capacity)
        {
            headCache = headAcquire();
            if (tail - headCache >= capacity)
            {
                counters.increment(EngineCounter.EVENTS_DROPPED);
                return false;
            }
        }
        final long at = HEADER_LENGTH + (tail & mask) * (long)RECORD_LENGTH;
        ring.set(ValueLayout.JAVA_INT, at + TYPE_OFFSET, type);
        ring.set(ValueLayout.JAVA_INT, at + MEDIUM_OFFSET, medium);
        ring.set(ValueLayout.JAVA_LONG, at + KEY_HIGH_OFFSET, keyHigh);
        ring.set(ValueLayout.JAVA_LONG, at + KEY_LOW_OFFSET, keyLow);
        ring.set(ValueLayout.JAVA_LONG, at + TAG_OFFSET, namespaceTag);
        tail++;
        tailRelease(tail);
        counters.increment(EngineCounter.EVENTS_RECORDED);
        return true;
    }

    /**
     * Reads up to {@code limit} records, oldest first, and frees them for the producer. Consumer only.
     *
     * @param handler gets each record
     * @param limit   most records to read
     * @return records read
     */
    public int poll(final Handler handler, final int limit)
    {
        final long head = (long)LONG.getOpaque(ring, (long)HEAD_OFFSET);
        final long available = tailAcquire() - head;
        final int count = (int)Math.min(available, limit);
        int read = 0;
        try
        {
            while (read < count)
            {
                final long at = HEADER_LENGTH + ((head + read) & mask) * (long)RECORD_LENGTH;
                // Counted as read before the handler sees it: a record the handler throws on is passed once, never
                // again, and the records before it are not passed twice.
                read++;
                handler.onEvent(ring.get(ValueLayout.JAVA_INT, at + TYPE_OFFSET), ring.get(ValueLayout.JAVA_INT, at + MEDIUM_OFFSET),
                    ring.get(ValueLayout.JAVA_LONG, at + KEY_HIGH_OFFSET), ring.get(ValueLayout.JAVA_LONG, at + KEY_LOW_OFFSET),
                    ring.get(ValueLayout.JAVA_LONG, at + TAG_OFFSET));
            }
        }
        finally
        {
            if (read > 0)
            {
                headRelease(head + read);
            }
        }
        return count;
    }

    /** @return records written and not yet read, as the consumer would see them */
    public long pendingAcquire()
    {
        return tailAcquire() - headAcquire();
    }

    /** @return records written, as the consumer may read them */
    private long tailAcquire()
    {
        return (long)LONG.getAcquire(ring, (long)TAIL_OFFSET);
    }

    /** Publishes records written up to {@code value}. */
    private void tailRelease(final long value)
    {
        LONG.setRelease(ring, (long)TAIL_OFFSET, value);
    }

    /** @return records read, whose slots the producer may reuse */
    private long headAcquire()
    {
        return (long)LONG.getAcquire(ring, (long)HEAD_OFFSET);
    }

    /** Frees the slots of records read up to {@code value}. */
    private void headRelease(final long value)
    {
        LONG.setRelease(ring, (long)HEAD_OFFSET, value);
    }
}
