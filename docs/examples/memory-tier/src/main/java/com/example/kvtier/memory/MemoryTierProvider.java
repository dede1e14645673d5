package com.example.kvtier.memory;

import io.kvtier.spi.SpiVersion;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.StorageTierProvider;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierContext;
import io.kvtier.spi.TierUsage;

import java.util.Set;

/**
 * The {@code memory} tier type: page frames kept on the Java heap of the engine's process. Settings
 * ({@code tier.<name>.*}): {@code capacity}, the most bytes it holds (unbounded by default).
 */
public final class MemoryTierProvider implements StorageTierProvider
{
    @Override
    public String type()
    {
        return "memory";
    }

    @Override
    public SpiVersion spiVersion()
    {
        // javac copies both constants into this class: it answers the SPI this plugin was compiled
        // against, which the engine compares with its own before it uses the plugin.
        return new SpiVersion(SpiVersion.MAJOR, SpiVersion.MINOR);
    }

    @Override
    public String description()
    {
        return "page frames on the Java heap";
    }

    @Override
    public StorageTier create(final TierConfig config, final TierContext context)
    {
        // Every check happens here, so a bad value stops the engine at start; the errors of
        // TierConfig already name tier.<name>.<key>, the value and what is allowed.
        config.rejectUnknown(Set.of("capacity"));
        final long capacity = config.size("capacity", TierUsage.UNBOUNDED, context.objectSize(), Long.MAX_VALUE);
        return new MemoryTier(config.tierName(), capacity);
    }
}
