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

/**
 * Starts the configured tiers from the providers {@link TierPlugins} found: on the class path and in
 * {@code plugins.dir}.
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

    /**
     * @return every provider on the class path that this engine runs, by type
     * @throws ConfigException if two providers give one type, or one cannot be loaded
     */
    public static Map<String, StorageTierProvider> providers()
    {
        // The class path has no class loaders of its own to close, so the catalog can go at once.
        try (TierPlugins plugins = TierPlugins.discover(null))
        {
            return plugins.providers();
        }
    }

    /**
     * Starts every configured tier; if one fails, the ones already started are closed.
     *
     * @param tiers       the tier settings, in order
     * @param plugins     the providers to start them from; close it only after the tiers
     * @param objectSize  bytes per object (one page frame)
     * @param transferMemory the pool's frames, which every slice handed to a trusted tier lies in, or null;
     *                    a tier the engine does not trust is offered none, since the reads it makes land in
     *                    staging frames and the pool is not its to register
     * @param listener    told of objects a tier drops by itself
     * @return the started tiers
     * @throws ConfigException      for an unknown type, or one whose plugin is refused (its SPI version)
     * @throws TierConfigException  for a setting a tier rejects
     */
    public static List<TierHandle> start(final List<EngineConfig.TierSettings> tiers, final TierPlugins plugins, final long objectSize,
                                         final MemorySegment transferMemory, final RemovalListener listener)
    {
        plugins.warnAboutRefused(tiers.stream().map(EngineConfig.TierSettings::type).toList());
        final List<TierHandle> started = new ArrayList<>();
        try
        {
            for (final EngineConfig.TierSettings settings : tiers)
            {
                final StorageTierProvider provider = plugins.provider(settings);
                final int index = started.size();
                final boolean trusted = settings.trusted() != null ? settings.trusted() : !plugins.isFromPluginDirectory(settings.type());
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
                        return trusted ? Optional.ofNullable(transferMemory) : Optional.empty();
                    }
                };
                final StorageTier tier;
                // Libraries that look services up through the context class loader (gRPC, JAXB, ...) must
                // find the plugin's own jars; threads the tier starts here inherit it too.
                final Thread thread = Thread.currentThread();
                final ClassLoader engineLoader = thread.getContextClassLoader();
                thread.setContextClassLoader(provider.getClass().getClassLoader());
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
                finally
                {
                    thread.setContextClassLoader(engineLoader);
                }
                started.add(new TierHandle(index, settings.name(), settings.type(), tier, TierCapability.closure(tier.capabilities()), trusted));
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
