package io.kvtier.bench.ipc;

/**
 * The waiting both sides of the baseline do: spin with {@link Thread#onSpinWait()} for a while, then
 * yield the core between looks. Never sleeps, so the baseline is the best a shared-memory round trip
 * gets on this machine, with nothing of the protocol in it.
 */
final class SpinThenYield
{
    /** Spins before the first yield: about as long as a round trip takes when the other side is on a core. */
    static final int SPINS = 10_000;

    private SpinThenYield()
    {
    }

    /**
     * @param idleRounds how many times the caller has found nothing new so far
     */
    static void idle(final int idleRounds)
    {
        if (idleRounds < SPINS)
        {
            Thread.onSpinWait();
        }
        else
        {
            Thread.yield();
        }
    }
}
