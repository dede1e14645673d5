package io.kvtier.tier.mooncake;

import io.kvtier.spi.SpiVersion;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.StorageTierProvider;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierConfigException;
import io.kvtier.spi.TierContext;

import java.util.Map;

/**
 * The {@code mooncake} tier type: pages in a Mooncake Store cluster. Settings
 * ({@code tier.<name>.*}): {@code master} (required), {@code lib}, {@code metadata-server},
 * {@code local-hostname}, {@code protocol}, {@code device-name}, {@code global-segment-size},
 * {@code local-buffer-size}, {@code key-prefix}, {@code replicas}, {@code soft-pin}, {@code hard-pin},
 * {@code preferred-segments}, {@code prefer-local-segment}, {@code setup-retries},
 * {@code setup-timeout}, {@code lease-ttl}, {@code lease-wait}, {@code write-retries},
 * {@code write-backoff}, {@code replace-existing}, {@code io-threads} and {@code batch-keys}; docs/plugins/mooncake.md gives
 * their defaults and meaning.
 */
public final class MooncakeTierProvider implements StorageTierProvider
{
    private final Map<String, String> env;

    /** The provider {@link java.util.ServiceLoader} creates: reads the process environment. */
    public MooncakeTierProvider()
    {
        this(System.getenv());
    }

    /**
     * @param env where {@value MooncakeLibrary#LIBRARY_ENV_NAME} and {@value MooncakeLibrary#HOME_ENV_NAME} are read, for tests
     */
    MooncakeTierProvider(final Map<String, String> env)
    {
        this.env = Map.copyOf(env);
    }

    /** Compiled in: the SPI version this plugin was built against, which the engine checks. */
    @Override
    public SpiVersion spiVersion()
    {
        return new SpiVersion(SpiVersion.MAJOR, SpiVersion.MINOR);
    }

    @Override
    public String type()
    {
        return "mooncake";
    }

    @Override
    public String description()
    {
        return "Mooncake Store: a cluster's pooled DRAM (libmooncake_store.so, set lib, KVTIER_MOONCAKE_LIB or KVTIER_MOONCAKE_HOME)";
    }

    @Override
    public StorageTier create(final TierConfig config, final TierContext context)
    {
        final MooncakeSettings settings = MooncakeSettings.parse(config);
        final MooncakeLibrary.Location location = MooncakeLibrary.locate(settings.lib, config.qualified(MooncakeSettings.LIB), env);
        try
        {
            MooncakeLibrary.bind(location);
        }
        catch (final MooncakeUnavailableException ex)
        {
            // The library is the operator's to fix: name the setting that chooses it.
            throw new TierConfigException(config.qualified(MooncakeSettings.LIB), "tier " + config.tierName() + " (mooncake): " + ex.getMessage(), ex);
        }
        return MooncakeTier.open(config.tierName(), settings, context);
    }
}
