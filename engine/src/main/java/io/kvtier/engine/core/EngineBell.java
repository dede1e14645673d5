package io.kvtier.engine.core;

import java.util.function.BooleanSupplier;

/**
 * Where the idle engine thread sleeps: parked, until the IPC adapter is attached; then on the IPC
 * control file's doorbell (a futex word), which both client processes and the engine's own producers
 * ring. Producers on the Disruptor ring wake it through {@link RingSignal}.
 */
final class EngineBell implements Sleeper
{
    private volatile Sleeper current = new ParkingSleeper();

    /**
     * Sleeps the new way from now on; a thread asleep the old way is woken into it.
     *
     * @param sleeper the new way
     */
    void use(final Sleeper sleeper)
    {
        final Sleeper old = current;
        current = sleeper;
        old.wake();
    }

    @Override
    public void sleep(final long maxNanos, final BooleanSupplier workAfterAnnouncing)
    {
        current.sleep(maxNanos, workAfterAnnouncing);
    }

    @Override
    public void wake()
    {
        current.wake();
    }

    @Override
    public boolean answerUnread()
    {
        return current.answerUnread();
    }
}
