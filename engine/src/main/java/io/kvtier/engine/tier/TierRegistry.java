package io.kvtier.engine.tier;

import io.kvtier.engine.config.ConfigException;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.StorageTierProvider;
import io.kvtier.spi.TierCapability;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierConfigException;
import io.kvtier.spi.TierContext;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.TreeMap;

/**
 * Starts the configured tiers from the providers on the class path.
 */
public final class TierRegistry
{
    /** Told when a tier drops an object by itself. */
    public interface RemovalListener
    {
        /**
         * @param tier    the tier's index
         * @param keyHigh the key's high half
         * @param keyLow  its low half
         */
        void objectRemoved(int tier, long keyHigh, long keyLow);
    }

    private TierRegistry()
    {
    }

    /** @return every provider on the class path, by type */
    public static Map<String, StorageTierProvider> providers()
    {
        final Map<String, StorageTierProvider> byType = new TreeMap<>();
        for (final StorageTierProvider provider : ServiceLoader.load(StorageTierProvider.class))
        {
            byType.putIfAbsent(provider.type(), provider);
        }
        return byType;
    }

    /**
     * Starts every configured tier; if one fails, the ones already started are closed.
     *
     * @param tiers       the tier settings, in order
     * @param objectSize  bytes per object (one page frame)
     * @param transferMemory the pool's frames, which every slice handed to a tier lies in, or null
     * @param listener    told of objects a tier drops by itself
     * @return the started tiers
     * @throws ConfigException      for an unknown type
     * @throws TierConfigException  for a setting a tier rejects
     */
    public static List<TierHandle> start(final List<EngineConfig.TierSettings> tiers, final long objectSize, final MemorySegment transferMemory,
                                         final RemovalListener listener)
    {
        final Map<String, StorageTierProvider> providers = providers();
        final List<TierHandle> started = new ArrayList<>();
        try
        {
            for (final EngineConfig.TierSettings settings : tiers)
            {
                final StorageTierProvider provider = providers.get(settings.type());
                if (provider == null)
                {
                    throw new ConfigException("tier." + settings.name() + ".type", "invalid tier." + settings.name() + ".type = \"" + settings.type()
                        + "\": no tier plugin of that type on the class path; available types: " + providers.keySet());
                }
                final int index = started.size();
                final TierContext context = new TierContext()
                {
                    @Override
                    public String tierName()
                    {
                        return settings.name();
                    }

                    @Override
                    public long objectSize()
                    {
                        return objectSize;
                    }

                    @Override
                    public void objectRemoved(final long keyHigh, final long keyLow)
                    {
                        listener.objectRemoved(index, keyHigh, keyLow);
                    }

                    @Override
                    public Optional<MemorySegment> transferMemory()
                    {
                        return Optional.ofNullable(transferMemory);
                    }
                };
                final StorageTier tier;
                try
                {
                    tier = provider.create(new TierConfig(settings.name(), settings.settings()), context);
                }
                catch (final TierConfigException ex)
                {
                    throw ex;
                }
                catch (final RuntimeException ex)
                {
                    throw new TierConfigException("tier." + settings.name(), "tier " + settings.name() + " (" + settings.type()
                        + ") failed to start: " + ex.getMessage(), ex);
                }
                started.add(new TierHandle(index, settings.name(), settings.type(), tier, TierCapability.closure(tier.capabilities())));
            }
            return List.copyOf(started);
        }
        catch (final RuntimeException ex)
        {
            for (final TierHandle handle : started)
            {
                try
                {
                    handle.tier().close();
                }
                catch (final RuntimeException suppressed)
                {
                    ex.addSuppressed(suppressed);
                }
            }
            throw ex;
        }
    }
}
