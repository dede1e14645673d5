package io.kvtier.engine.core;

/**
 * How an agent's thread idles between duty cycles that found no work: {@link #idle(int)} is called after
 * every cycle with its work count, and a count above zero starts the next idle period from its
 * cheapest step again.
 */
public interface IdleStrategy
{
    /**
     * After one duty cycle.
     *
     * @param workCount what the cycle did; 0 idles one step, more {@linkplain #reset() resets}
     */
    default void idle(final int workCount)
    {
        if (workCount > 0)
        {
            reset();
        }
        else
        {
            idle();
        }
    }

    /** Idles one step: a spin, a yield, or a bounded sleep, as the strategy says. */
    void idle();

    /** Work was found: the next idle starts from the first step. */
    void reset();

    /**
     * @return whether the last idle step was a spin, a few nanoseconds: the agent may then leave the clock alone for a
     *         few cycles, where after a yield or a sleep, which may have lasted a time slice or a bounded sleep, it may not
     */
    default boolean lastStepSpun()
    {
        return false;
    }

    /** @return the name in settings */
    String alias();
}
