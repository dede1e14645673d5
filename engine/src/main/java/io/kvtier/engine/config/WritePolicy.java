package io.kvtier.engine.config;

/**
 * When a committed page is copied from the pool to L3.
 */
public enum WritePolicy
{
    /** Never; L3 is only read. */
    NONE("none"),
    /** As soon as it is committed. */
    WRITE_THROUGH("write-through"),
    /** Once it has been hit {@code policy.write.hit-threshold} times, so one-off pages never reach L3. */
    WRITE_THROUGH_SELECTIVE("write-through-selective"),
    /** When it is evicted from the pool; the page stays pinned until the copy ends. */
    WRITE_BACK("write-back");

    private final String configName;

    WritePolicy(final String configName)
    {
        this.configName = configName;
    }

    /** @return the name used in settings */
    public String configName()
    {
        return configName;
    }
}
