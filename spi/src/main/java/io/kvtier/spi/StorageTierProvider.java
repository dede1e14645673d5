package io.kvtier.spi;

/**
 * The {@link java.util.ServiceLoader} entry point of a tier plugin. Register the implementation in
 * {@code META-INF/services/io.kvtier.spi.StorageTierProvider}, and declare the SPI version the plugin
 * was built for with {@link #spiVersion()}.
 */
public interface StorageTierProvider
{
    /** @return the type name operators write in {@code tier.<name>.type}, for example {@code posix} */
    String type();

    /**
     * The SPI version this plugin was compiled against, which the engine checks before it uses the
     * provider (same major, minor no newer than the engine's). Implement it as
     * {@code return new SpiVersion(SpiVersion.MAJOR, SpiVersion.MINOR);}: javac inlines both constants,
     * so the method keeps answering the version of the SPI jar the plugin was built with, whatever SPI
     * the engine loads it next to. This default cannot know that version, so it declares none.
     *
     * <p>A provider that declares none here is checked against the {@link SpiVersion#MANIFEST_ATTRIBUTE}
     * of its jar's manifest instead; the engine refuses to load one from its plugin directory with
     * neither. The conformance kit fails a provider that declares none here.
     *
     * @return the version built for; {@link SpiVersion#UNDECLARED} by default
     */
    default SpiVersion spiVersion()
    {
        return SpiVersion.UNDECLARED;
    }

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
