package io.kvtier.engine.core;

/**
 * Work the engine thread does between Disruptor batches, as Aeron's driver conductor polls its
 * clients' command rings itself: today the IPC adapter, which reads the shared-memory client rings
 * and hands each request straight to the engine ({@link Pipeline#handleOnEngineThread}) instead of
 * through the ring, saving a thread hop per request. Installed once with {@link Pipeline#installDuty};
 * every method but {@link #wake} runs on the engine thread.
 */
public interface EngineDuty
{
    /**
     * One pass over the duty's sources. Must not block: the engine thread serves everyone.
     *
     * @return how much work it found (0 when idle)
     */
    int doWork();

    /** @return whether work is waiting, looked at once more after the engine announced its sleep */
    boolean hasWork();

    /**
     * Idles once (spin, yield or a bounded sleep, as the duty's idle strategy says). A sleep skips when
     * {@code ringHasWork} or {@link #hasWork} says there is work after the sleep was announced.
     *
     * @param ringHasWork whether the engine's ring has events
     */
    void idle(io.kvtier.client.protocol.IdleStrategy.WorkCheck ringHasWork);

    /** Work was found: the next idle starts from spinning again. */
    void resetIdle();

    /** Any thread: wakes the engine thread if it sleeps in {@link #idle}. */
    void wake();
}
