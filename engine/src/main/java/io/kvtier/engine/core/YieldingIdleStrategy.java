package io.kvtier.engine.core;

/** Yields the core at every idle step: low latency, and a core shared with others is shared, but never idle. */
final class YieldingIdleStrategy implements IdleStrategy
{
    @Override
    public void idle()
    {
        Thread.yield();
    }

    @Override
    public void reset()
    {
    }

    @Override
    public String alias()
    {
        return "yield";
    }
}
