package io.kvtier.tck;

import java.util.Map;
import java.util.Objects;

/**
 * A configuration a tier must refuse, and the key its error has to name.
 *
 * @param description what is wrong, shown as the test's name
 * @param config      the settings without the {@code tier.<name>.} prefix
 * @param expectedKey the fully qualified key the {@link io.kvtier.spi.TierConfigException} must name,
 *                    for example {@code tier.contract.capacity}
 */
public record InvalidConfig(String description, Map<String, String> config, String expectedKey)
{
    /**
     * Copies the map so a test cannot change it afterwards.
     *
     * @param description what is wrong
     * @param config      the settings
     * @param expectedKey the key the error must name
     */
    public InvalidConfig
    {
        Objects.requireNonNull(description, "description");
        Objects.requireNonNull(expectedKey, "expectedKey");
        config = Map.copyOf(config);
    }

    /**
     * @param config      the settings
     * @param expectedKey the key the error must name
     * @return an entry described by its key
     */
    public static InvalidConfig of(final Map<String, String> config, final String expectedKey)
    {
        return new InvalidConfig(expectedKey + " in " + config, config, expectedKey);
    }
}
