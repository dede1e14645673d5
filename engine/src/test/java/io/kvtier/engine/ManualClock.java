package io.kvtier.engine;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An engine clock that moves only when a test moves it, so that timeouts fire when the test says.
 * Public for the engine thread's part tests in {@code io.kvtier.engine.core}.
 */
public final class ManualClock implements EngineClock
{
    private final AtomicLong now = new AtomicLong(1_000_000_000_000L);

    @Override
    public long nanoTime()
    {
        return now.get();
    }

    /**
     * @param by how far to move the clock
     */
    public void advance(final Duration by)
    {
        now.addAndGet(by.toNanos());
    }
}
