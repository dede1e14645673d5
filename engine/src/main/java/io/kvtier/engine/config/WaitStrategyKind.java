package io.kvtier.engine.config;

/**
 * How the pipeline thread waits for work.
 */
public enum WaitStrategyKind
{
    /** Spin briefly, then park until a producer unparks it: low latency, idle CPU stays idle, no allocation. */
    PARK("park"),
    /** Disruptor's lock and condition: lowest CPU, allocates a wait node each time it blocks. */
    BLOCKING("blocking"),
    /** Disruptor's spin, yield, then sleep. */
    SLEEPING("sleeping"),
    /** Disruptor's spin then yield: burns a core. */
    YIELDING("yielding"),
    /** Disruptor's busy spin: burns a core, lowest latency, for pinned cores only. */
    BUSY_SPIN("busy-spin");

    private final String configName;

    WaitStrategyKind(final String configName)
    {
        this.configName = configName;
    }

    /** @return the name used in settings */
    public String configName()
    {
        return configName;
    }
}
