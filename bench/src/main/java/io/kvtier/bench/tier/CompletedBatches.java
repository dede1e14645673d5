package io.kvtier.bench.tier;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;

/**
 * Where a tier hands the benchmark's batches back, and how the benchmark's thread waits for them: as the
 * engine thread waits for its tiers' completions under its default idle strategy ({@code engine.idle-strategy
 * = backoff}): a hundred spins, a hundred yields, then sleeps of at most a millisecond, woken by a completion
 * only when it sleeps. A blocking queue made each hand-back a lock, a condition signal and a futex wake-up
 * whether the thread slept or not, a cost the engine does not pay and fio has no counterpart of.
 *
 * <p>One slot per batch in flight; a tier's thread puts a batch in its slot ({@link #completed}), the
 * benchmark's thread takes it ({@link #await}). The thread announces itself before it sleeps and looks at the
 * slots once more after, and a completer looks for it after filling a slot (both accesses volatile, so
 * sequentially consistent): either the second look sees the batch or the completer sees the sleeper and
 * wakes it.
 */
final class CompletedBatches
{
    /** Spins of the wait before it yields: the engine's backoff. */
    static final int SPINS = 100;
    /** Yields of the wait before it sleeps: the engine's backoff. */
    static final int YIELDS = 100;
    /** The longest sleep, the bound on a missed wake-up: the engine's. */
    static final long MAX_SLEEP_NANOS = 1_000_000;

    private static final VarHandle SLEEPER;

    static
    {
        try
        {
            SLEEPER = MethodHandles.lookup().findVarHandle(CompletedBatches.class, "sleeper", Thread.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final AtomicReferenceArray<BenchTierBatch> slots;
    @SuppressWarnings("unused") // through SLEEPER
    private volatile Thread sleeper;
    private long sleeps;

    /** @param batches how many batches can be in flight at once, each with a slot index in {@code [0, batches)} */
    CompletedBatches(final int batches)
    {
        slots = new AtomicReferenceArray<>(batches);
    }

    /**
     * A tier's thread: the batch's last key completed.
     *
     * @param slot  the batch's slot index
     * @param batch the batch
     */
    void completed(final int slot, final BenchTierBatch batch)
    {
        slots.set(slot, batch);
        final Thread waiting = (Thread)SLEEPER.getVolatile(this);
        if (waiting != null && SLEEPER.compareAndSet(this, waiting, null))
        {
            LockSupport.unpark(waiting);
        }
    }

    /**
     * The benchmark's thread: takes a completed batch, waiting for one.
     *
     * @param timeoutNanos how long to wait at most
     * @return the batch, or null when none completed in time
     */
    BenchTierBatch await(final long timeoutNanos)
    {
        final long deadline = System.nanoTime() + timeoutNanos;
        int idle = 0;
        while (true)
        {
            final BenchTierBatch batch = poll();
            if (batch != null)
            {
                return batch;
            }
            if (idle < SPINS)
            {
                Thread.onSpinWait();
            }
            else if (idle < SPINS + YIELDS)
            {
                Thread.yield();
            }
            else
            {
                if (System.nanoTime() - deadline >= 0)
                {
                    return null;
                }
                final Thread self = Thread.currentThread();
                SLEEPER.setVolatile(this, self);
                final BenchTierBatch late = poll();
                if (late == null)
                {
                    sleeps++;
                    LockSupport.parkNanos(this, MAX_SLEEP_NANOS);
                }
                // Fails when a completer claimed the announcement: its unpark is then spent or left as a permit.
                SLEEPER.compareAndSet(this, self, null);
                if (late != null)
                {
                    return late;
                }
            }
            idle++;
        }
    }

    /** @return how often {@link #await} slept, for tests */
    long sleeps()
    {
        return sleeps;
    }

    private BenchTierBatch poll()
    {
        for (int i = 0; i < slots.length(); i++)
        {
            // Volatile, not plain: after the announcement this is the Dekker pattern's second look.
            if (slots.get(i) != null)
            {
                final BenchTierBatch batch = slots.getAndSet(i, null);
                if (batch != null)
                {
                    return batch;
                }
            }
        }
        return null;
    }
}
