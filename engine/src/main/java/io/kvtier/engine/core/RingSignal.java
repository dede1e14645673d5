package io.kvtier.engine.core;

import com.lmax.disruptor.Sequence;
import com.lmax.disruptor.SequenceBarrier;
import com.lmax.disruptor.WaitStrategy;

/**
 * The ring's producers' half of the engine thread's idling: every publication wakes the engine thread
 * if it sleeps. Nothing waits through it: the engine thread polls the ring ({@code EventPoller}) and
 * idles per its {@link IdleStrategy}.
 */
final class RingSignal implements WaitStrategy
{
    private final Sleeper sleeper;

    /** @param sleeper where the engine thread sleeps */
    RingSignal(final Sleeper sleeper)
    {
        this.sleeper = sleeper;
    }

    @Override
    public long waitFor(final long sequence, final Sequence cursor, final Sequence dependentSequence, final SequenceBarrier barrier)
    {
        throw new UnsupportedOperationException("the engine thread polls its ring; nothing waits on it");
    }

    @Override
    public void signalAllWhenBlocking()
    {
        sleeper.wake();
    }
}
