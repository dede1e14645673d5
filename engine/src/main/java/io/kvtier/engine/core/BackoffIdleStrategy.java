package io.kvtier.engine.core;

import java.util.function.BooleanSupplier;

/**
 * Spins, then yields, then sleeps on a {@link Sleeper} at most {@code maxSleepNanos} at a time, until
 * work is found; with no spins and no yields it sleeps at once. The yields matter when every core is
 * busy (clients checksumming large commits, say): a spinning engine thread would keep the very client
 * it waits for off the core it shares with it. Allocation-free; one thread.
 */
final class BackoffIdleStrategy implements IdleStrategy
{
    private final int maxSpins;
    private boolean spun;
    private final int maxYields;
    private final long maxSleepNanos;
    private final Sleeper sleeper;
    private final BooleanSupplier workAfterAnnouncing;
    private final IdleCounts counts;
    private int idleCount;

    /**
     * @param maxSpins            spins before the first yield
     * @param maxYields           yields before the first sleep
     * @param maxSleepNanos       the longest sleep: the bound on a wake-up that was missed, and how late a timer may fire
     * @param sleeper             where the thread sleeps, and how others wake it
     * @param workAfterAnnouncing whether work came in once the sleep was announced
     */
    BackoffIdleStrategy(final int maxSpins, final int maxYields, final long maxSleepNanos, final Sleeper sleeper,
                        final BooleanSupplier workAfterAnnouncing)
    {
        this(maxSpins, maxYields, maxSleepNanos, sleeper, workAfterAnnouncing, IdleCounts.NONE);
    }

    /**
     * @param maxSpins            spins before the first yield
     * @param maxYields           yields before the first sleep
     * @param maxSleepNanos       the longest sleep
     * @param sleeper             where the thread sleeps, and how others wake it
     * @param workAfterAnnouncing whether work came in once the sleep was announced
     * @param counts              where its yields and sleeps are counted
     */
    BackoffIdleStrategy(final int maxSpins, final int maxYields, final long maxSleepNanos, final Sleeper sleeper,
                        final BooleanSupplier workAfterAnnouncing, final IdleCounts counts)
    {
        this.counts = counts;
        this.maxSpins = maxSpins;
        this.maxYields = maxYields;
        this.maxSleepNanos = maxSleepNanos;
        this.sleeper = sleeper;
        this.workAfterAnnouncing = workAfterAnnouncing;
    }

    @Override
    public void idle()
    {
        final int count = idleCount;
        spun = count < maxSpins;
        if (count < maxSpins)
        {
            idleCount = count + 1;
            Thread.onSpinWait();
        }
        else if (count < maxSpins + maxYields)
        {
            idleCount = count + 1;
            counts.yielded();
            Thread.yield();
        }
        else
        {
            final long start = System.nanoTime();
            sleeper.sleep(maxSleepNanos, workAfterAnnouncing);
            counts.slept(System.nanoTime() - start);
        }
    }

    @Override
    public void reset()
    {
        idleCount = 0;
    }

    @Override
    public boolean lastStepSpun()
    {
        return spun;
    }

    @Override
    public String alias()
    {
        return maxSpins == 0 && maxYields == 0 ? "sleep" : "backoff";
    }
}
