package io.kvtier.tier.faults;

import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierStatus;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * The batch the wrapped tier is handed: some keys of the engine's batch (or stand-ins, for a key
 * whose fault needs a scratch frame or another key), each with what happens when the wrapped tier
 * completes it. The keys and segments are copied out of the engine's batch before any of its keys
 * completes, so nothing here calls the engine's batch but {@code complete}.
 */
final class KeyView implements TierBatch
{
    /** What happens when the wrapped tier completes one key of the view. */
    @FunctionalInterface
    interface Done
    {
        /**
         * @param status what the wrapped tier answered
         */
        void completed(TierStatus status);
    }

    private final long[] high;
    private final long[] low;
    private final MemorySegment[] segments;
    private final Done[] done;
    private final AtomicIntegerArray completed;
    private int size;

    /**
     * @param capacity the most keys the view will hold
     */
    KeyView(final int capacity)
    {
        high = new long[capacity];
        low = new long[capacity];
        segments = new MemorySegment[capacity];
        done = new Done[capacity];
        completed = new AtomicIntegerArray(capacity);
    }

    /**
     * Adds a key; call only before the view is handed to the wrapped tier.
     *
     * @param keyHigh the key's high half
     * @param keyLow  its low half
     * @param segment its segment, or {@link MemorySegment#NULL}
     * @param action  what its completion does
     */
    void add(final long keyHigh, final long keyLow, final MemorySegment segment, final Done action)
    {
        high[size] = keyHigh;
        low[size] = keyLow;
        segments[size] = segment;
        done[size] = action;
        size++;
    }

    boolean isEmpty()
    {
        return size == 0;
    }

    @Override
    public int size()
    {
        return size;
    }

    @Override
    public long keyHigh(final int index)
    {
        return high[index];
    }

    @Override
    public long keyLow(final int index)
    {
        return low[index];
    }

    @Override
    public MemorySegment segment(final int index)
    {
        return segments[index];
    }

    @Override
    public void complete(final int index, final TierStatus status)
    {
        if (!completed.compareAndSet(index, 0, 1))
        {
            throw new IllegalStateException("key " + index + " of the faults tier's batch was already completed");
        }
        done[index].completed(status);
    }

    /**
     * Completes every key not completed yet: the wrapped tier threw, or the tier closed before the
     * view was handed over.
     *
     * @param status what those keys are answered
     */
    void completeRemaining(final TierStatus status)
    {
        for (int i = 0; i < size; i++)
        {
            if (completed.compareAndSet(i, 0, 1))
            {
                done[i].completed(status);
            }
        }
    }
}
