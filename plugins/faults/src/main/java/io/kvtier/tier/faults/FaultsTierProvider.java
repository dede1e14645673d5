package io.kvtier.tier.faults;

import io.kvtier.spi.SpiVersion;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.StorageTierProvider;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierConfigException;
import io.kvtier.spi.TierContext;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.TreeSet;

/**
 * The {@code faults} tier type: wraps a tier of another type ({@code tier.<name>.wrap}, its settings as
 * {@code tier.<name>.wrap.<key>}) and injects faults into it ({@code faults}, {@code seed}, {@code slow},
 * {@code stall}, {@code fault-log}, {@code fault-control}, {@code unsafe-late-write}); the module's README gives each setting and
 * fault kind.
 */
public final class FaultsTierProvider implements StorageTierProvider
{
    /** The provider {@link ServiceLoader} creates. */
    public FaultsTierProvider()
    {
    }

    @Override
    public String type()
    {
        return "faults";
    }

    @Override
    public SpiVersion spiVersion()
    {
        return new SpiVersion(SpiVersion.MAJOR, SpiVersion.MINOR);
    }

    @Override
    public String description()
    {
        return "another tier type with faults injected on a seeded schedule (kvtier chaos)";
    }

    @Override
    public StorageTier create(final TierConfig config, final TierContext context)
    {
        final FaultSettings settings = FaultSettings.parse(config);
        // A tier the engine does not trust is offered no transfer memory: its reads land in staging frames.
        final boolean trusted = context.transferMemory().isPresent();
        if (trusted && settings.rates.rate(FaultKind.LATE_WRITE) > 0 && !settings.unsafeLateWrite)
        {
            throw config.invalid(FaultSettings.FAULTS, config.string(FaultSettings.FAULTS), "no late-write on a tier the engine trusts: late-write"
                + " writes into the memory of reads the tier completed, which for a trusted tier are the pool pages clients are served from;"
                + " set tier." + config.tierName() + ".trusted = false, so that its reads land in the engine's staging frames (or "
                + config.qualified(FaultSettings.UNSAFE_LATE_WRITE) + " = true to let wrong bytes reach clients, to prove a checker sees them)", null);
        }
        final StorageTierProvider provider = wrappedProvider(config, settings);
        if (trusted && settings.unsafeLateWrite)
        {
            context.logger().log(System.Logger.Level.WARNING, "faults tier " + config.tierName() + ": " + config.qualified(FaultSettings.UNSAFE_LATE_WRITE)
                + " = true on a tier the engine trusts: late writes reach pool pages clients are served from");
        }
        final FaultLog log;
        try
        {
            log = FaultLog.open(settings.faultLog);
        }
        catch (final IOException | RuntimeException ex)
        {
            throw config.invalid(FaultSettings.FAULT_LOG, String.valueOf(settings.faultLog), "a file that can be opened for appending, but "
                + ex, ex);
        }
        try
        {
            // Named tier.<name>.wrap, so the wrapped tier's errors name its settings as the operator wrote them.
            final StorageTier wrapped = provider.create(new TierConfig(config.tierName() + "." + FaultSettings.WRAP, settings.wrapped),
                wrappedContext(context));
            if (wrapped == null)
            {
                throw new TierConfigException(config.qualified(FaultSettings.WRAP), "the " + settings.wrap + " provider of "
                    + config.qualified(FaultSettings.WRAP) + " returned no tier");
            }
            final FaultsTier tier = new FaultsTier(settings, settings.wrap, wrapped, log, trusted, context.logger());
            if (!settings.seedGiven)
            {
                context.logger().log(System.Logger.Level.INFO, "faults tier " + config.tierName() + ": no " + config.qualified(FaultSettings.SEED)
                    + ", drew seed " + settings.seed + " (set it to replay this schedule)");
            }
            return tier;
        }
        catch (final RuntimeException | Error ex)
        {
            log.close();
            throw ex;
        }
    }

    /** The wrapped tier's provider, found as the engine finds any: by its type, among those this provider's class loader sees. */
    private static StorageTierProvider wrappedProvider(final TierConfig config, final FaultSettings settings)
    {
        final TreeSet<String> types = new TreeSet<>();
        for (final StorageTierProvider provider : ServiceLoader.load(StorageTierProvider.class, FaultsTierProvider.class.getClassLoader()))
        {
            if (provider.type().equals(settings.wrap))
            {
                return provider;
            }
            types.add(provider.type());
        }
        throw config.invalid(FaultSettings.WRAP, settings.wrap, "the type of a tier provider this one can see: " + types
            + " (a plugin from plugins.dir is seen when its jars are in the faults plugin's own directory)", null);
    }

    /** The engine's context under the same name, so that what the wrapped tier reports (removals, logs) reaches the engine as this tier's. */
    private static TierContext wrappedContext(final TierContext context)
    {
        return new TierContext()
        {
            @Override
            public String tierName()
            {
                return context.tierName();
            }

            @Override
            public long objectSize()
            {
                return context.objectSize();
            }

            @Override
            public void objectRemoved(final long keyHigh, final long keyLow)
            {
                context.objectRemoved(keyHigh, keyLow);
            }

            @Override
            public SpiVersion spiVersion()
            {
                return context.spiVersion();
            }

            @Override
            public Optional<MemorySegment> transferMemory()
            {
                return context.transferMemory();
            }

            @Override
            public System.Logger logger()
            {
                return context.logger();
            }
        };
    }
}
