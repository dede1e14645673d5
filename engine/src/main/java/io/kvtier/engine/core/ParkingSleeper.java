package io.kvtier.engine.core;

import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Sleeps in {@link LockSupport#parkNanos}, and is woken by an unpark: for wakers in this process. It
 * allocates nothing when it sleeps, unlike a lock and condition, which allocate a wait node each time.
 *
 * <p>The announcement is a volatile {@code parked}; the sleeper fences after it, because the work it
 * then looks at may be read with a plain load and an acquire fence (a Disruptor sequence), which a
 * volatile store may otherwise be reordered after (store-load reordering), and the sleeper would miss
 * a waker that published in between.
 */
final class ParkingSleeper implements Sleeper
{
    private volatile Thread sleeper;
    private volatile boolean parked;

    @Override
    public void sleep(final long maxNanos, final BooleanSupplier workAfterAnnouncing)
    {
        if (sleeper == null)
        {
            sleeper = Thread.currentThread();
        }
        parked = true;
        VarHandle.fullFence();
        if (!workAfterAnnouncing.getAsBoolean())
        {
            LockSupport.parkNanos(this, maxNanos);
        }
        parked = false;
    }

    @Override
    public void wake()
    {
        VarHandle.fullFence();
        if (parked)
        {
            final Thread thread = sleeper;
            if (thread != null)
            {
                LockSupport.unpark(thread);
            }
        }
    }
}
