package io.kvtier.tier.support;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The workers' hand-off in two lanes: an urgent one (reads and probes, which a client waits for) and a
 * bulk one (backups and removes), so a backlog of writes never sits in front of a read. Each lane is a
 * {@link LaneQueue}, which never waits; the parking of idle workers is done here, once for both lanes,
 * and allocates nothing.
 *
 * <p>{@link #take} always empties the urgent lane first. Workers busy with a bulk job also look at the
 * urgent lane between keys ({@link #pollUrgent}), so a read waits for at most the one key each worker
 * is on, never for the rest of a batch or the batches queued behind it. Priority is strict: while
 * reads keep coming, backups wait (the engine bounds the batches it has in flight per tier).
 *
 * <h2>Parking</h2>
 * Over both queues at once: a worker that finds both lanes empty spins
 * briefly, then announces itself (its thread in its own slot, then the waiting count), issues a full
 * fence and polls both lanes once more before it parks. A producer, after the offer that publishes an
 * element, issues a full fence and reads the waiting count; when it is not zero it claims one announced
 * worker by compare-and-set of its slot and unparks it. Each side stores, fences, then loads what the
 * other stored (a Dekker pattern), so either the worker's recheck sees the element or the producer
 * sees the worker and wakes it. A worker leaving the slow path with an element while more are visible
 * and others are parked passes a wake-up on. Parks are bounded by {@link #MAX_PARK_NANOS}
 * as a second line of defence.
 *
 * @param <E> the element type
 */
final class JobLanes<E>
{
    /** The longest park: should a wake-up still be lost, a worker finds its job at most this late. */
    static final long MAX_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** Polls an idle worker makes, with a spin-wait hint between them, before it announces itself and parks. */
    static final int SPIN_POLLS = 64;

    private static final VarHandle WAITERS = MethodHandles.arrayElementVarHandle(Thread[].class);
    private static final VarHandle WAITING;

    static
    {
        try
        {
            WAITING = MethodHandles.lookup().findVarHandle(JobLanes.class, "waiting", int.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final LaneQueue<E> urgent;
    private final LaneQueue<E> bulk;
    private final Thread[] waiters;
    private final long maxParkNanos;
    @SuppressWarnings("unused") // through WAITING
    private volatile int waiting;

    /**
     * @param capacity  the most elements each lane holds (rounded up to a power of two)
     * @param consumers how many threads call {@link #take}, with indexes {@code [0, consumers)}
     */
    JobLanes(final int capacity, final int consumers)
    {
        this(capacity, consumers, MAX_PARK_NANOS);
    }

    /**
     * @param capacity     as for {@link #JobLanes(int, int)}
     * @param consumers    as for {@link #JobLanes(int, int)}
     * @param maxParkNanos the longest park; tests make it hours, so a lost wake-up shows as a hang
     */
    JobLanes(final int capacity, final int consumers, final long maxParkNanos)
    {
        urgent = new LaneQueue<>(capacity);
        bulk = new LaneQueue<>(capacity);
        waiters = new Thread[consumers];
        this.maxParkNanos = maxParkNanos;
    }

    /** @return the most elements each lane holds */
    int capacity()
    {
        return urgent.capacity();
    }

    /**
     * @param element an element for the urgent lane
     * @return false, with nothing changed, when the lane is full
     */
    boolean offerUrgent(final E element)
    {
        return published(urgent.offer(element));
    }

    /**
     * @param element an element for the bulk lane
     * @return false, with nothing changed, when the lane is full
     */
    boolean offerBulk(final E element)
    {
        return published(bulk.offer(element));
    }

    private boolean published(final boolean offered)
    {
        if (offered && waiters.length != 0)
        {
            // Dekker, producer side: the publication (in offer), then the announcements.
            VarHandle.fullFence();
            if ((int)WAITING.getVolatile(this) != 0)
            {
                unparkOne();
            }
        }
        return offered;
    }

    /** @return the head of the urgent lane, or {@code null} when it is empty; never waits */
    E pollUrgent()
    {
        return urgent.poll();
    }

    /** @return the head of the urgent lane, else of the bulk lane, or {@code null} when both are empty; never waits */
    E poll()
    {
        final E element = urgent.poll();
        return element != null ? element : bulk.poll();
    }

    /**
     * Takes the head of the urgent lane, else of the bulk lane, waiting for one.
     *
     * @param consumer this thread's index; no two threads may wait with the same index at once
     * @return the element
     * @throws InterruptedException if interrupted while waiting (the interrupt status is cleared)
     */
    E take(final int consumer) throws InterruptedException
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
                interrupted = Thread.interrupted();
                if (!interrupted)
                {
                    LockSupport.parkNanos(this, maxParkNanos);
                    interrupted = Thread.interrupted();
                }
            }
            // Fails when a producer claimed the slot; its unpark is then spent or left as a permit.
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

    private void passWakeUpOn()
    {
        if ((int)WAITING.getVolatile(this) != 0 && (!urgent.isEmpty() || !bulk.isEmpty()))
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
