package io.kvtier.engine.core;

/**
 * Owns an {@link Agent}'s thread: calls {@link Agent#onStart}, then {@link Agent#doWork} and its
 * {@link IdleStrategy} in turn until {@link #close} asks it to stop, then {@link Agent#onClose}. An
 * exception out of a cycle is logged and the loop goes on: the thread serves everyone.
 */
final class AgentRunner
{
    private static final System.Logger LOG = System.getLogger(AgentRunner.class.getName());

    private final Agent agent;
    private final IdleStrategy idle;
    private final Sleeper sleeper;
    private final Thread thread;
    private volatile boolean running = true;

    /**
     * @param agent      the agent
     * @param idle       how its thread idles
     * @param sleeper    where the thread sleeps when it idles in a sleep, woken by {@link #close}
     * @param threadName the thread's name
     */
    AgentRunner(final Agent agent, final IdleStrategy idle, final Sleeper sleeper, final String threadName)
    {
        this.agent = agent;
        this.idle = idle;
        this.sleeper = sleeper;
        this.thread = Thread.ofPlatform().name(threadName).daemon(true).unstarted(this::run);
    }

    /** Starts the thread. */
    void start()
    {
        thread.start();
    }

    /** @return whether a stop was asked for */
    boolean isStopping()
    {
        return !running;
    }

    private void run()
    {
        try
        {
            agent.onStart();
        }
        catch (final RuntimeException | Error ex)
        {
            LOG.log(System.Logger.Level.ERROR, agent.roleName() + " failed to start; it runs anyway", ex);
        }
        while (running)
        {
            int work = 0;
            try
            {
                work = agent.doWork();
            }
            catch (final RuntimeException | Error ex)
            {
                LOG.log(System.Logger.Level.ERROR, agent.roleName() + " failed a duty cycle; it keeps running", ex);
            }
            idle.idle(work);
        }
        try
        {
            agent.onClose();
        }
        catch (final RuntimeException | Error ex)
        {
            LOG.log(System.Logger.Level.ERROR, agent.roleName() + " failed to stop cleanly", ex);
        }
    }

    /**
     * Asks the agent to stop after its current cycle, and waits for its thread to end.
     *
     * @param waitMillis how long to wait
     * @return whether the thread ended
     */
    boolean close(final long waitMillis)
    {
        running = false;
        sleeper.wake();
        try
        {
            thread.join(Math.max(1, waitMillis));
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        return !thread.isAlive();
    }
}
