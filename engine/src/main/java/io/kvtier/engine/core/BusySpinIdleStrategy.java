package io.kvtier.engine.core;

/** Never gives the core up: the lowest latency, for a thread with a core of its own. */
final class BusySpinIdleStrategy implements IdleStrategy
{
    @Override
    public void idle()
    {
        Thread.onSpinWait();
    }

    @Override
    public void reset()
    {
    }

    @Override
    public boolean lastStepSpun()
    {
        return true;
    }

    @Override
    public String alias()
    {
        return "spin";
    }
}
