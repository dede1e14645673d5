package io.kvtier.engine.core;

/**
 * Work one thread does in a loop, in Aeron's shape: an {@link AgentRunner} calls {@link #doWork} over
 * and over on a thread it owns, and hands the work count to an {@link IdleStrategy}, which idles the
 * thread when the count says there was nothing to do.
 */
public interface Agent
{
    /**
     * One duty cycle. Must not block: everything else this thread serves waits meanwhile.
     *
     * @return how much work it found (0 when idle)
     */
    int doWork();

    /** On the agent's thread, before the first {@link #doWork}. */
    default void onStart()
    {
    }

    /** On the agent's thread, after the last {@link #doWork}. */
    default void onClose()
    {
    }

    /** @return the agent's name in logs */
    String roleName();
}
