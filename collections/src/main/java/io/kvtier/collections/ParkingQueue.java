package io.kvtier.collections;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A bounded multi-producer, multi-consumer hand-off queue that allocates nothing after construction,
 * with parking for idle consumers: non-blocking {@link #offer} and {@link #poll}, and a blocking
 * {@link #take(int)} for a fixed set of consumer threads, each with its own index.
 *
 * <p>{@code java.util.concurrent.ArrayBlockingQueue} allocates an AQS node every time a consumer
 * blocks or its lock is contended; this queue is for hand-offs on paths that must allocate nothing.
 *
 * <h2>Ring</h2>
 * Dmitry Vyukov's bounded MPMC queue: a power-of-two ring of element slots, each with a sequence
 * number. Slot {@code i} starts at sequence {@code i}. A producer that finds sequence {@code p} at
 * position {@code p} claims the position by compare-and-set of the tail, stores the element and
 * publishes it with a release store of sequence {@code p + 1}; a consumer that finds {@code p + 1}
 * claims the position by compare-and-set of the head, takes the element and frees the slot for the
 * next lap with a release store of {@code p + capacity}. Each acquire load of a sequence pairs with
 * the release store before it, so the element is seen whole. Positions are claimed in order, so
 * elements are taken in the order their offers claimed positions (FIFO).
 *
 * <p>A slot being filled or emptied blocks its position until the claimant's release store, a few
 * instructions later: {@link #poll} answers empty while the head slot is still being filled, even if
 * later slots are already published, and {@link #offer} answers full while the slot it needs is still
 * being emptied. Neither happens in a quiescent queue.
 *
 * <h2>Parking</h2>
 * A consumer in {@link #take(int)} that finds the queue empty spins briefly, then announces itself:
 * it stores its thread in its own preallocated slot, then counts itself in the waiting count (the
 * announcement), issues a full fence, and polls once more (the recheck) before it parks. A producer,
 * after the release store that publishes an element, issues a full fence and reads the waiting
 * count; when it is not zero it claims one announced consumer by compare-and-set of its slot to
 * {@code null} and unparks it. Claiming makes each wake-up go to a different consumer. A consumer
 * withdraws its announcement after parking, whether it was claimed or not, before it polls again.
 *
 * <p>Both sides store, fence, then load what the other side stored: the consumer stores its
 * announcement and loads the sequence, the producer stores the sequence and loads the waiting count
 * (a Dekker pattern); a producer that sees the count also sees the slot, stored before it. The full fences forbid each side's load from being ordered before its store, so
 * in every interleaving either the consumer's recheck sees the element, or the producer sees the
 * consumer announced and unparks it; an unpark that comes before the park makes the park return at
 * once. A consumer that leaves the slow path with an element while more are visible and others are
 * parked passes a wake-up on, so one spent on a consumer that then took a different element (another
 * consumer's, or one behind a slot still being filled) is not lost.
 *
 * <p>Parks are bounded ({@link #MAX_PARK_NANOS}) as a second line of defence: should a wake-up still
 * be missed, a parked consumer polls again within that time.
 *
 * @param <E> the element type
 */
public final class ParkingQueue<E> extends ParkingQueueTrailingPadding
{
    /** The longest a consumer parks before it polls again, whether or not it was woken. */
    public static final long MAX_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    /** Polls a consumer makes, with a spin-wait hint between them, before it announces itself and parks. */
    public static final int SPIN_POLLS = 64;

    private static final VarHandle SEQUENCES = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle WAITERS = MethodHandles.arrayElementVarHandle(Thread[].class);

    private final int mask;
    private final long maxParkNanos;
    private final long[] sequences;
    private final Object[] elements;
    private final Thread[] waiters;

    /**
     * @param requestedCapacity the most elements held, rounded up to a power of two, at least 2
     * @param consumers         how many threads call {@link #take(int)}, with indexes {@code [0, consumers)};
     *                          0 for a queue used only through {@link #offer} and {@link #poll}
     */
    public ParkingQueue(final int requestedCapacity, final int consumers)
    {
        this(requestedCapacity, consumers, MAX_PARK_NANOS);
    }

    /**
     * @param requestedCapacity as for {@link #ParkingQueue(int, int)}
     * @param consumers         as for {@link #ParkingQueue(int, int)}
     * @param maxParkNanos      the longest park, at least 1: what a lost wake-up would cost, and how often an idle
     *                          consumer wakes to poll; tests make it hours, so a lost wake-up shows as a hang
     */
    public ParkingQueue(final int requestedCapacity, final int consumers, final long maxParkNanos)
    {
        if (maxParkNanos < 1)
        {
            throw new IllegalArgumentException("maxParkNanos=" + maxParkNanos + " must be at least 1");
        }
        if (requestedCapacity < 1 || requestedCapacity > 1 << 30)
        {
            throw new IllegalArgumentException("capacity=" + requestedCapacity + " is outside [1, 2^30]");
        }
        if (consumers < 0)
        {
            throw new IllegalArgumentException("consumers=" + consumers + " is negative");
        }
        // Vyukov's sequences tell a full slot from a free one only with at least two slots.
        final int capacity = Math.max(2, 1 << (32 - Integer.numberOfLeadingZeros(requestedCapacity - 1)));
        mask = capacity - 1;
        sequences = new long[capacity];
        elements = new Object[capacity];
        for (int i = 0; i < capacity; i++)
        {
            sequences[i] = i;
        }
        waiters = new Thread[consumers];
        this.maxParkNanos = maxParkNanos;
    }

    /** @return the most elements held */
    public int capacity()
    {
        return mask + 1;
    }

    /** @return how many consumer indexes {@link #take(int)} accepts */
    public int consumers()
    {
        return waiters.length;
    }

    /**
     * Adds an element at the tail, unparking a consumer parked in {@link #take(int)} if there is one.
     *
     * @param element the element
     * @return false, with nothing changed, when the queue is full
     * @throws NullPointerException if the element is null
     */
    public boolean offer(final E element)
    {
        Objects.requireNonNull(element, "element");
        long position = (long)TAIL.getOpaque(this);
        while (true)
        {
            final int index = (int)position & mask;
            final long difference = (long)SEQUENCES.getAcquire(sequences, index) - position;
            if (difference == 0)
            {
                final long witness = (long)TAIL.compareAndExchange(this, position, position + 1);
                if (witness == position)
                {
                    elements[index] = element;
                    SEQUENCES.setRelease(sequences, index, position + 1);
                    if (waiters.length != 0)
                    {
                        // Dekker, producer side: the publication above, then the announcements.
                        VarHandle.fullFence();
                        if ((int)WAITING.getVolatile(this) != 0)
                        {
                            unparkOne();
                        }
                    }
                    return true;
                }
                position = witness;
            }
            else if (difference < 0)
            {
                // The slot still holds the element of the previous lap.
                return false;
            }
            else
            {
                // Another producer claimed this position first.
                position = (long)TAIL.getVolatile(this);
            }
        }
    }

    /**
     * Removes the element at the head, without waiting.
     *
     * @return the element, or {@code null} when the queue is empty
     */
    public E poll()
    {
        long position = (long)HEAD.getOpaque(this);
        while (true)
        {
            final int index = (int)position & mask;
            final long difference = (long)SEQUENCES.getAcquire(sequences, index) - (position + 1);
            if (difference == 0)
            {
                final long witness = (long)HEAD.compareAndExchange(this, position, position + 1);
                if (witness == position)
                {
                    @SuppressWarnings("unchecked")
                    final E element = (E)elements[index];
                    elements[index] = null;
                    SEQUENCES.setRelease(sequences, index, position + mask + 1);
                    return element;
                }
                position = witness;
            }
            else if (difference < 0)
            {
                // Not yet published at this position: empty, or a producer is between claim and publish.
                return null;
            }
            else
            {
                // Another consumer took this position first.
                position = (long)HEAD.getVolatile(this);
            }
        }
    }

    /**
     * Removes the element at the head, waiting for one: polls {@link #SPIN_POLLS} times, then parks
     * until a producer unparks it (or at most {@link #MAX_PARK_NANOS}, then polls again).
     *
     * @param consumer this thread's index in {@code [0, consumers())}; no two threads may wait with
     *                 the same index at once
     * @return the element
     * @throws InterruptedException if the thread is interrupted while waiting (its interrupt status is cleared)
     * @throws IndexOutOfBoundsException if the index is outside {@code [0, consumers())}
     */
    public E take(final int consumer) throws InterruptedException
    {
        Objects.checkIndex(consumer, waiters.length);
        final E element = poll();
        return element != null ? element : takeSlowly(consumer);
    }

    private E takeSlowly(final int consumer) throws InterruptedException
    {
        final Thread self = Thread.currentThread();
        while (true)
        {
            for (int i = 0; i < SPIN_POLLS; i++)
            {
                Thread.onSpinWait();
                final E element = poll();
                if (element != null)
                {
                    passWakeUpOn();
                    return element;
                }
            }

            WAITERS.setVolatile(waiters, consumer, self);
            WAITING.getAndAdd(this, 1);
            // Dekker, consumer side: the announcement above, then the recheck.
            VarHandle.fullFence();
            final E element = poll();
            boolean interrupted = false;
            if (element == null)
            {
                // Checked before parking too: a pending interrupt makes every park return at once.
                interrupted = Thread.interrupted();
                if (!interrupted)
                {
                    LockSupport.parkNanos(this, maxParkNanos);
                    interrupted = Thread.interrupted();
                }
            }
            // Fails when a producer claimed this slot; its unpark then is either spent or left as a
            // permit that makes a later park return at once, which the loop takes in its stride.
            WAITERS.compareAndSet(waiters, consumer, self, null);
            WAITING.getAndAdd(this, -1);

            if (element != null)
            {
                passWakeUpOn();
                return element;
            }
            if (interrupted)
            {
                passWakeUpOn();
                throw new InterruptedException();
            }
        }
    }

    /**
     * @return whether the head slot holds a published element; exact only when no thread is offering
     *         or polling
     */
    public boolean isEmpty()
    {
        final long position = (long)HEAD.getVolatile(this);
        return (long)SEQUENCES.getAcquire(sequences, (int)position & mask) != position + 1;
    }

    /** @return how many elements are held or being offered or polled; exact only when quiescent */
    public int size()
    {
        // Head first: it never passes the tail, so the difference is never negative when read in this order.
        final long head = (long)HEAD.getVolatile(this);
        final long tail = (long)TAIL.getVolatile(this);
        return (int)Math.min(Math.max(0, tail - head), mask + 1);
    }

    private void passWakeUpOn()
    {
        if ((int)WAITING.getVolatile(this) != 0 && !isEmpty())
        {
            unparkOne();
        }
    }

    private void unparkOne()
    {
        for (int i = 0; i < waiters.length; i++)
        {
            final Thread waiter = (Thread)WAITERS.getVolatile(waiters, i);
            if (waiter != null && WAITERS.compareAndSet(waiters, i, waiter, null))
            {
                LockSupport.unpark(waiter);
                return;
            }
        }
    }
}

/** Keeps the tail off the cache lines of the object header and of whatever precedes the queue. */
abstract class ParkingQueueTailPadding
{
    long p01, p02, p03, p04, p05, p06, p07, p08, p09, p10, p11, p12, p13, p14, p15, p16;
}

/** The producers' position, and the count of waiting consumers they read after every offer. */
abstract class ParkingQueueTail extends ParkingQueueTailPadding
{
    static final VarHandle TAIL;
    static final VarHandle WAITING;

    static
    {
        try
        {
            final MethodHandles.Lookup lookup = MethodHandles.lookup();
            TAIL = lookup.findVarHandle(ParkingQueueTail.class, "tail", long.class);
            WAITING = lookup.findVarHandle(ParkingQueueTail.class, "waiting", int.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    volatile long tail;
    volatile int waiting;
}

/** Two cache lines between the producers' tail and the consumers' head, adjacent-line prefetch included. */
abstract class ParkingQueueHeadPadding extends ParkingQueueTail
{
    long p17, p18, p19, p20, p21, p22, p23, p24, p25, p26, p27, p28, p29, p30, p31, p32;
}

/** The consumers' position. */
abstract class ParkingQueueHead extends ParkingQueueHeadPadding
{
    static final VarHandle HEAD;

    static
    {
        try
        {
            HEAD = MethodHandles.lookup().findVarHandle(ParkingQueueHead.class, "head", long.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    volatile long head;
}

/**
 * Keeps the head off the read-mostly fields of the queue that follow it; a class of its own because
 * the JVM orders the fields of one class as it likes, but lays out a superclass's before a subclass's.
 */
abstract class ParkingQueueTrailingPadding extends ParkingQueueHead
{
    long p33, p34, p35, p36, p37, p38, p39, p40, p41, p42, p43, p44, p45, p46, p47, p48;
}
