package io.kvtier.engine.config;

/**
 * How the engine thread idles between duty cycles that found no work ({@code engine.idle-strategy}).
 */
public enum IdleStrategyKind
{
    /**
     * Spin for a budget that follows the gaps between requests (5 to 100 µs), then sleep at most 1 ms at a
     * time until woken; yield only to a client that has not read its answer (see docs/PERFORMANCE.md, issue 21).
     */
    ADAPTIVE("adaptive"),
    /** Spin, yield, then sleep at most 1 ms at a time until woken (the default): low latency, and an idle engine leaves its core idle. */
    BACKOFF("backoff"),
    /** Never sleep: a core of its own, the lowest latency. */
    SPIN("spin"),
    /** Yield at every step: a core that others may share, never idle. */
    YIELD("yield"),
    /** Sleep at once, at most 1 ms at a time until woken: no core spent waiting. */
    SLEEP("sleep");

    private final String configName;

    IdleStrategyKind(final String configName)
    {
        this.configName = configName;
    }

    /** @return the name used in settings */
    public String configName()
    {
        return configName;
    }

    /**
     * @param kind a value of the deprecated {@code pipeline.wait-strategy}
     * @return the idle strategy that waits as it did
     */
    public static IdleStrategyKind of(final WaitStrategyKind kind)
    {
        return switch (kind)
        {
            case PARK, SLEEPING -> BACKOFF;
            case BLOCKING -> SLEEP;
            case YIELDING -> YIELD;
            case BUSY_SPIN -> SPIN;
        };
    }

    /**
     * @param kind a value of the deprecated {@code ipc.idle-strategy}
     * @return the idle strategy that waits as it did
     */
    public static IdleStrategyKind of(final io.kvtier.client.protocol.IdleStrategy.Kind kind)
    {
        return switch (kind)
        {
            case BACKOFF -> BACKOFF;
            case SPIN -> SPIN;
            case SLEEP -> SLEEP;
            case ADAPTIVE, TIMED, AWAKE -> ADAPTIVE; // TIMED and AWAKE are a client's ways of waiting, ipc.idle-strategy does not offer them
        };
    }
}
