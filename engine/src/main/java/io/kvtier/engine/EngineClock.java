package io.kvtier.engine;

/**
 * Where the engine reads the time for its leases, quarantine, L3 timeouts, prefetch deadlines and
 * negative-probe memory. {@link #SYSTEM} in production; tests drive a clock of their own so that a
 * timeout is reached because they said so, not because a starved machine was slow. The pool's
 * heartbeat and client liveness stay on the wall clock: other processes read them.
 */
@FunctionalInterface
public interface EngineClock
{
    /** {@link System#nanoTime()}. */
    EngineClock SYSTEM = System::nanoTime;

    /** @return a monotonic time in nanoseconds, comparable only with itself */
    long nanoTime();
}
