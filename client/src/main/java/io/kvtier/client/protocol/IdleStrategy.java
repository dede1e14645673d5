package io.kvtier.client.protocol;

import java.lang.invoke.VarHandle;

/**
 * How one end of the IPC protocol waits for work (docs/ipc-protocol.md section 5): spin, then yield,
 * then sleep on a futex word, each sleep bounded so that a wake-up lost to a crash costs at most that
 * bound. The sleep is the Dekker half of the sleeper: announce it (store 1 in the word, full fence),
 * look for work once more, and only then sleep; the other side stores its work, fences, and wakes the
 * sleeper if the word reads 1. Shared by the engine (on the control file's Doorbell) and the client
 * (on its Client Sleeping word). Allocation-free; one thread.
 */
public final class IdleStrategy
{
    /** The longest one sleep lasts. */
    public static final long MAX_SLEEP_NANOS = 1_000_000;

    private static final int SPINS = 100;
    private static final int YIELDS = 50;

    /** What the sleeper looks at once more after announcing its sleep. */
    @FunctionalInterface
    public interface WorkCheck
    {
        /** @return whether there is work: the sleep is skipped */
        boolean hasWork();
    }

    /** The three strategies of {@code ipc.idle-strategy}. */
    public enum Kind
    {
        /** Spin, yield, then sleep at most 1 ms at a time (the default). */
        BACKOFF,
        /** Never sleep: a core per waiter, the lowest latency. */
        SPIN,
        /** Sleep at once: no core spent waiting. */
        SLEEP;

        /** @return the name in settings */
        public String configName()
        {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    private final Kind kind;
    private final long sleepNanos;
    private int idleCount;

    /**
     * @param kind       the strategy
     * @param sleepNanos the longest sleep, at most {@link #MAX_SLEEP_NANOS} is what the protocol expects
     */
    public IdleStrategy(final Kind kind, final long sleepNanos)
    {
        this.kind = kind;
        this.sleepNanos = sleepNanos;
    }

    /** @return the strategy */
    public Kind kind()
    {
        return kind;
    }

    /** Work was found: the next idle starts from spinning again. */
    public void reset()
    {
        idleCount = 0;
    }

    /**
     * Idles once: a spin, a yield, or a bounded sleep on {@code word}, depending on the strategy and on
     * how long this side has found nothing.
     *
     * @param word  the word this side sleeps on
     * @param check looked at after the sleep is announced; work there skips the sleep
     */
    public void idle(final FutexWord word, final WorkCheck check)
    {
        final int count = idleCount;
        if (count < Integer.MAX_VALUE)
        {
            idleCount = count + 1;
        }
        switch (kind)
        {
            case SPIN -> Thread.onSpinWait();
            case SLEEP -> sleep(word, check);
            case BACKOFF ->
            {
                if (count < SPINS)
                {
                    Thread.onSpinWait();
                }
                else if (count < SPINS + YIELDS)
                {
                    Thread.yield();
                }
                else
                {
                    sleep(word, check);
                }
            }
            default -> throw new IllegalStateException("unknown idle strategy " + kind);
        }
    }

    private void sleep(final FutexWord word, final WorkCheck check)
    {
        word.setVolatile(1);
        VarHandle.fullFence();
        if (!check.hasWork())
        {
            word.await(1, sleepNanos);
        }
        word.setVolatile(0);
    }

    /**
     * The waker's half: after publishing work (a release store), fence, and wake the sleeper if its
     * word says it sleeps.
     *
     * @param word the sleeper's word
     */
    public static void wake(final FutexWord word)
    {
        VarHandle.fullFence();
        word.wakeIfSleeping();
    }
}
