package io.kvtier.engine.core;

/**
 * A bounded FIFO of fixed-width records of longs, for the engine thread's deadline queues. Because
 * every entry of one queue has the same timeout, arrival order is deadline order, so the head is
 * always the next to expire.
 */
final class LongRing
{
    private final long[] values;
    private final int width;
    private final int capacity;
    private long head;
    private long tail;

    LongRing(final int capacity, final int width)
    {
        this.capacity = capacity;
        this.width = width;
        this.values = new long[capacity * width];
    }

    int size()
    {
        return (int)(tail - head);
    }

    boolean isEmpty()
    {
        return head == tail;
    }

    boolean isFull()
    {
        return tail - head == capacity;
    }

    /** Appends a record of {@code width} longs; the caller makes room first. */
    void add(final long a, final long b, final long c)
    {
        if (isFull())
        {
            throw new IllegalStateException("ring of " + capacity + " records is full");
        }
        final int at = (int)(tail % capacity) * width;
        values[at] = a;
        if (width > 1)
        {
            values[at + 1] = b;
        }
        if (width > 2)
        {
            values[at + 2] = c;
        }
        tail++;
    }

    long peek(final int field)
    {
        return values[(int)(head % capacity) * width + field];
    }

    void poll()
    {
        head++;
    }
}
