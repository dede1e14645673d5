package io.kvtier.engine.core;

import com.lmax.disruptor.AlertException;
import com.lmax.disruptor.Sequence;
import com.lmax.disruptor.SequenceBarrier;
import com.lmax.disruptor.WaitStrategy;

import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * Spins briefly, yields a little, then parks the single consumer thread until a producer unparks it.
 * Unlike Disruptor's {@code BlockingWaitStrategy} it allocates nothing when it blocks (no condition
 * wait node), and unlike the yielding strategies it leaves an idle core idle. The yields matter when
 * the cores are all busy (clients checksumming large commits, say): a spinning engine thread would
 * keep the very client it waits for off the core it shares with it.
 *
 * <p>Correctness rests on a Dekker pair: the consumer announces {@code parked} and then re-reads
 * the cursor; a producer advances the cursor (a CAS, so a full fence) and then reads {@code parked}.
 * At least one of them sees the other. The park is also bounded, as a second line of defence.
 */
public final class SpinParkWaitStrategy implements WaitStrategy
{
    private static final int SPIN_TRIES = 100;
    private static final int YIELD_TRIES = 100;
    private static final long MAX_PARK_NANOS = 1_000_000;

    private final int spinTries;
    private final long maxParkNanos;
    private volatile Thread consumer;
    private volatile boolean parked;

    /** Spins 100 times, yields 100 times, then parks for at most 1 ms at a time. */
    public SpinParkWaitStrategy()
    {
        this(SPIN_TRIES, MAX_PARK_NANOS);
    }

    /**
     * @param spinTries    spins before the first park
     * @param maxParkNanos longest single park: the bound on a wake-up that was missed
     */
    SpinParkWaitStrategy(final int spinTries, final long maxParkNanos)
    {
        this.spinTries = spinTries;
        this.maxParkNanos = maxParkNanos;
    }

    @Override
    public long waitFor(final long sequence, final Sequence cursor, final Sequence dependentSequence, final SequenceBarrier barrier)
        throws AlertException
    {
        long available;
        int spins = spinTries;
        int yields = spinTries == 0 ? 0 : YIELD_TRIES;
        while ((available = dependentSequence.get()) < sequence)
        {
            barrier.checkAlert();
            if (spins > 0)
            {
                spins--;
                Thread.onSpinWait();
                continue;
            }
            if (yields > 0)
            {
                yields--;
                Thread.yield();
                continue;
            }
            if (consumer == null)
            {
                consumer = Thread.currentThread();
            }
            parked = true;
            // Sequence.get() is a plain load with an acquire fence, not a volatile load, so without a
            // full fence here it may be ordered before the volatile store above (store-load reordering):
            // the consumer would miss a producer that published in between, and sleep until the park
            // times out. The fence makes this the consumer half of the Dekker pair described above.
            VarHandle.fullFence();
            if (dependentSequence.get() < sequence)
            {
                LockSupport.parkNanos(this, maxParkNanos);
            }
            parked = false;
        }
        return available;
    }

    @Override
    public void signalAllWhenBlocking()
    {
        VarHandle.fullFence();
        if (parked)
        {
            final Thread thread = consumer;
            if (thread != null)
            {
                LockSupport.unpark(thread);
            }
        }
    }
}
