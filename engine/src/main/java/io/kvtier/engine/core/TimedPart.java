package io.kvtier.engine.core;

/**
 * A part of the engine thread with deadlines (leases, quarantine, L3 timeouts, prefetch waits). The
 * conductor calls every such part on each tick, on the engine thread, with the engine clock's time;
 * a part does what has come due and nothing else.
 */
interface TimedPart
{
    /**
     * @param nowNanos the engine clock's time
     */
    void onTime(long nowNanos);
}
