package io.kvtier.engine.core;

import com.lmax.disruptor.AlertException;
import com.lmax.disruptor.Sequence;
import com.lmax.disruptor.SequenceBarrier;
import com.lmax.disruptor.WaitStrategy;
import io.kvtier.client.protocol.IdleStrategy;

/**
 * The engine thread's wait when it also has an {@link EngineDuty}: between batches it runs the duty,
 * and when neither the ring nor the duty has work it idles the duty's way, sleeping on the duty's
 * futex word, which both the duty's producers (IPC clients ring its doorbell) and the ring's
 * producers ({@link #signalAllWhenBlocking}) wake. Until a duty is installed it waits as
 * {@link SpinParkWaitStrategy} does.
 *
 * <p>The duty runs once at every call, even when events are ready, so that a busy ring cannot starve
 * the clients the duty serves.
 */
final class DutyCycleWaitStrategy implements WaitStrategy
{
    private static final System.Logger LOG = System.getLogger(DutyCycleWaitStrategy.class.getName());

    private final SpinParkWaitStrategy beforeDuty = new SpinParkWaitStrategy();
    private final IdleStrategy.WorkCheck ringHasWork = this::ringHasWork;
    private volatile EngineDuty duty;
    private Sequence waitedOn;
    private long waitedFor;

    void install(final EngineDuty engineDuty)
    {
        this.duty = engineDuty;
        beforeDuty.signalAllWhenBlocking(); // a thread parked the old way now waits the new way
    }

    @Override
    public long waitFor(final long sequence, final Sequence cursor, final Sequence dependentSequence, final SequenceBarrier barrier)
        throws AlertException, InterruptedException
    {
        final EngineDuty current = duty;
        if (current == null)
        {
            return beforeDuty.waitFor(sequence, cursor, dependentSequence, barrier);
        }
        waitedOn = dependentSequence;
        waitedFor = sequence;
        int work = runDuty(current);
        long available;
        while ((available = dependentSequence.get()) < sequence)
        {
            barrier.checkAlert();
            if (work > 0)
            {
                current.resetIdle();
            }
            else
            {
                current.idle(ringHasWork);
            }
            work = runDuty(current);
        }
        if (work > 0)
        {
            current.resetIdle();
        }
        return available;
    }

    private static int runDuty(final EngineDuty current)
    {
        try
        {
            return current.doWork();
        }
        catch (final RuntimeException ex)
        {
            // The duty keeps its own clients apart; whatever escapes it must not end the engine thread.
            LOG.log(System.Logger.Level.ERROR, "the engine thread's duty failed; it keeps running", ex);
            return 0;
        }
    }

    private boolean ringHasWork()
    {
        return waitedOn.get() >= waitedFor;
    }

    @Override
    public void signalAllWhenBlocking()
    {
        final EngineDuty current = duty;
        if (current == null)
        {
            beforeDuty.signalAllWhenBlocking();
        }
        else
        {
            current.wake();
        }
    }
}
