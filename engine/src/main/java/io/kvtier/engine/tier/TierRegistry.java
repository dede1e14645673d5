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
import java.util.Set;
import java.util.function.Supplier;

/**
 * Starts the configured tiers from the providers {@link TierPlugins} found: on the class path and in
 * {@code plugins.dir}.
 */
public final class TierRegistry
{
    private static final System.Logger LOG = System.getLogger(TierRegistry.class.getName());

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
     * @throws TierConfigException  for a setting a tier rejects, or a plugin that returns null from
     *                              {@code create()} or throws (any exception or error but the JVM's own,
     *                              stack overflows aside) from it, {@code capabilities()} or {@code describe()}
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
                // Libraries that look services up through the context class loader (gRPC, JAXB, ...) must
                // find the plugin's own jars; threads the tier starts here inherit it too.
                final Thread thread = Thread.currentThread();
                final ClassLoader engineLoader = thread.getContextClassLoader();
                thread.setContextClassLoader(provider.getClass().getClassLoader());
                try
                {
                    started.add(startOne(settings, provider, plugins.found().get(settings.type()).place(), context, index, trusted));
                }
                finally
                {
                    thread.setContextClassLoader(engineLoader);
                }
            }
            return List.copyOf(started);
        }
        catch (final RuntimeException | Error ex)
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

    /**
     * Creates one tier and asks it what the engine records at start. The tier's own verdict on a setting
     * (a {@link TierConfigException} from {@code create}) passes through as it is; anything else the
     * plugin does wrong here, returning null or throwing any exception or error, is a tier that cannot
     * start, reported in one line naming the tier, its type, where its plugin came from and what happened.
     */
    private static TierHandle startOne(final EngineConfig.TierSettings settings, final StorageTierProvider provider, final String place,
                                       final TierContext context, final int index, final boolean trusted)
    {
        final StorageTier tier;
        try
        {
            tier = provider.create(new TierConfig(settings.name(), settings.settings()), context);
        }
        catch (final TierConfigException ex)
        {
            throw ex;
        }
        catch (final Throwable ex)
        {
            throw failedToStart(settings, place, "create() threw", ex);
        }
        if (tier == null)
        {
            throw failedToStart(settings, place, "its provider " + provider.getClass().getName() + " returned null from create(), which must"
                + " return a ready tier or throw a TierConfigException naming the setting at fault", null);
        }
        try
        {
            final Set<TierCapability> capabilities = ask(settings, place, "capabilities()", tier::capabilities);
            if (capabilities == null)
            {
                throw failedToStart(settings, place, "capabilities() returned null; it returns an empty set for none", null);
            }
            final String line = ask(settings, place, "describe()", tier::describe);
            final String description = line == null || line.isBlank() ? settings.type() : settings.type() + ": " + line;
            return new TierHandle(index, settings.name(), settings.type(), tier, TierCapability.closure(capabilities), description, trusted);
        }
        catch (final RuntimeException | Error ex)
        {
            try
            {
                tier.close();
            }
            catch (final Throwable suppressed)
            {
                ex.addSuppressed(suppressed);
            }
            throw ex;
        }
    }

    /** Calls a method of a just created tier, turning whatever it throws into a tier that cannot start. */
    private static <T> T ask(final EngineConfig.TierSettings settings, final String place, final String method, final Supplier<T> call)
    {
        try
        {
            return call.get();
        }
        catch (final Throwable ex)
        {
            throw failedToStart(settings, place, method + " threw", ex);
        }
    }

    /**
     * @param what  what the plugin did
     * @param cause what it threw, or null
     * @return the configuration error that stops the start; its stack trace goes to the log at DEBUG only,
     *         since the one line says what an operator needs
     * @throws VirtualMachineError as it is, but for a stack overflow: the JVM itself is in trouble, not the configuration
     */
    private static TierConfigException failedToStart(final EngineConfig.TierSettings settings, final String place, final String what,
                                                     final Throwable cause)
    {
        if (cause instanceof VirtualMachineError fatal && !(cause instanceof StackOverflowError))
        {
            throw fatal;
        }
        final String message = "tier " + settings.name() + " (type " + settings.type() + ", from " + place + ") failed to start: " + what
            + (cause == null ? "" : " " + oneLine(cause));
        LOG.log(System.Logger.Level.DEBUG, message, cause);
        return new TierConfigException(EngineConfig.TIER_PREFIX + settings.name(), message, cause);
    }

    /** @return the throwable's class and message on one line, and the first frame outside the JDK, which is usually the plugin's */
    static String oneLine(final Throwable thrown)
    {
        final String text = thrown.toString().replaceAll("\\s*\\R\\s*", " ");
        for (final StackTraceElement frame : thrown.getStackTrace())
        {
            final String className = frame.getClassName();
            if (!className.startsWith("java.") && !className.startsWith("jdk.") && !className.startsWith("sun."))
            {
                // Not the frame's toString(), which starts with the plugin's class loader name: the message names the plugin already.
                return text + " (at " + className + "." + frame.getMethodName() + "(" + frame.getFileName() + ":" + frame.getLineNumber() + "))";
            }
        }
        return text;
    }
}
