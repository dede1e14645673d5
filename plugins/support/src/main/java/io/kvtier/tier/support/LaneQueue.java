package io.kvtier.tier.support;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;

/**
 * A bounded queue for many producers and many consumers that never blocks and never allocates: an
 * array of slots, each with a sequence number saying whether it is free for the producer of a given
 * position or holds the element for the consumer of that position (Vyukov's bounded MPMC design).
 * One lane of {@link JobLanes}, which does the waiting; here only {@link #offer} and {@link #poll}.
 *
 * @param <E> the element type
 */
final class LaneQueue<E>
{
    private static final VarHandle SEQUENCES = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle HEAD;
    private static final VarHandle TAIL;

    static
    {
        try
        {
            final MethodHandles.Lookup lookup = MethodHandles.lookup();
            HEAD = lookup.findVarHandle(LaneQueue.class, "head", long.class);
            TAIL = lookup.findVarHandle(LaneQueue.class, "tail", long.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final int mask;
    private final long[] sequences;
    private final Object[] elements;
    @SuppressWarnings("unused") // through HEAD
    private volatile long head;
    @SuppressWarnings("unused") // through TAIL
    private volatile long tail;

    /**
     * @param requestedCapacity the most elements held, rounded up to a power of two, at least 2
     */
    LaneQueue(final int requestedCapacity)
    {
        if (requestedCapacity < 1 || requestedCapacity > 1 << 30)
        {
            throw new IllegalArgumentException("capacity=" + requestedCapacity + " is outside [1, 2^30]");
        }
        // With one slot a sequence cannot tell a full slot from a free one.
        final int capacity = Math.max(2, 1 << (32 - Integer.numberOfLeadingZeros(requestedCapacity - 1)));
        mask = capacity - 1;
        sequences = new long[capacity];
        elements = new Object[capacity];
        for (int i = 0; i < capacity; i++)
        {
            sequences[i] = i;
        }
    }

    /** @return the most elements held */
    int capacity()
    {
        return mask + 1;
    }

    /**
     * @param element the element to add at the tail
     * @return false, with nothing changed, when the queue is full
     */
    boolean offer(final E element)
    {
        Objects.requireNonNull(element, "element");
        long position = (long)TAIL.getOpaque(this);
        while (true)
        {
            final int index = (int)position & mask;
            final long lag = (long)SEQUENCES.getAcquire(sequences, index) - position;
            if (lag == 0)
            {
                final long seen = (long)TAIL.compareAndExchange(this, position, position + 1);
                if (seen == position)
                {
                    elements[index] = element;
                    SEQUENCES.setRelease(sequences, index, position + 1);
                    return true;
                }
                position = seen;
            }
            else if (lag < 0)
            {
                // The slot still holds the element of the lap before: full.
                return false;
            }
            else
            {
                position = (long)TAIL.getVolatile(this);
            }
        }
    }

    /** @return the element at the head, removed, or {@code null} when the queue is empty */
    E poll()
    {
        long position = (long)HEAD.getOpaque(this);
        while (true)
        {
            final int index = (int)position & mask;
            final long lag = (long)SEQUENCES.getAcquire(sequences, index) - (position + 1);
            if (lag == 0)
            {
                final long seen = (long)HEAD.compareAndExchange(this, position, position + 1);
                if (seen == position)
                {
                    @SuppressWarnings("unchecked")
                    final E element = (E)elements[index];
                    elements[index] = null;
                    SEQUENCES.setRelease(sequences, index, position + mask + 1);
                    return element;
                }
                position = seen;
            }
            else if (lag < 0)
            {
                // Nothing published at this position yet: empty, or a producer between its claim and its store.
                return null;
            }
            else
            {
                position = (long)HEAD.getVolatile(this);
            }
        }
    }

    /** @return whether no element is published at the head; a hint, exact only when quiescent */
    boolean isEmpty()
    {
        final long position = (long)HEAD.getVolatile(this);
        return (long)SEQUENCES.getAcquire(sequences, (int)position & mask) != position + 1;
    }
}
