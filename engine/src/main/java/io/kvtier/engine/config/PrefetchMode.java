package io.kvtier.engine.config;

/**
 * How a lookup waits for the L3 → pool prefetch it starts.
 */
public enum PrefetchMode
{
    /** No prefetch: L3 pages are loaded only when acquired. */
    OFF("off"),
    /** Start the prefetch and answer at once with what is in the pool now. */
    BEST_EFFORT("best-effort"),
    /** Answer when every prefetched page is in the pool and verified, or failed. */
    WAIT_COMPLETE("wait-complete"),
    /** Like wait-complete, but answer at {@code policy.prefetch.timeout} with what has arrived. */
    TIMEOUT("timeout");

    private final String configName;

    PrefetchMode(final String configName)
    {
        this.configName = configName;
    }

    /** @return the name used in settings */
    public String configName()
    {
        return configName;
    }
}
