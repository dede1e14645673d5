package io.kvtier.spi;

/**
 * The {@link java.util.ServiceLoader} entry point of a tier plugin. Register the implementation in
 * {@code META-INF/services/io.kvtier.spi.StorageTierProvider}.
 */
public interface StorageTierProvider
{
    /** @return the type name operators write in {@code tier.<name>.type}, for example {@code posix} */
    String type();

    /** @return one line saying what the tier stores objects in */
    default String description()
    {
        return type();
    }

    /**
     * Validates the configuration and creates the tier. Checks everything it can here (reachable
     * directories and services, sizes that fit) so a bad value fails the engine at start, not later.
     *
     * @param config  the tier's settings, with the {@code tier.<name>.} prefix and {@code type} removed
     * @param context the engine's side of the tier
     * @return a ready tier
     * @throws TierConfigException naming the key, the value and what is allowed, for any bad or unknown setting
     */
    StorageTier create(TierConfig config, TierContext context);
}
