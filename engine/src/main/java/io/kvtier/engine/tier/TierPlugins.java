package io.kvtier.engine.tier;

import io.kvtier.engine.CodeSources;
import io.kvtier.engine.config.ConfigException;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.config.EngineSettings;
import io.kvtier.spi.SpiVersion;
import io.kvtier.spi.StorageTierProvider;

import java.io.IOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.TreeMap;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.stream.Stream;

/**
 * The tier providers an engine can use: those on its class path (the built-in POSIX tier, tests) and
 * those in {@code plugins.dir}, each of the latter loaded by a {@link PluginClassLoader} of its own.
 *
 * <p>Every provider's SPI version is checked: the one its {@link StorageTierProvider#spiVersion()}
 * declares, else the {@link SpiVersion#MANIFEST_ATTRIBUTE} of its jar. A plugin from the directory that
 * declares neither, or one built for an SPI this engine does not run, is <em>refused</em>: it stays out
 * of the available types, and only a tier configured with its type fails the start, with the reason, so
 * a stale plugin left in the directory does not take down the tiers that do not use it. A provider on
 * the class path that declares nothing is taken as built with the engine, since the class path is one
 * loader assembled with the engine's own SPI.
 *
 * <p>Mistakes in how plugins are laid out fail discovery outright, each naming what was wrong: a
 * {@code plugins.dir} that is missing, not a directory or unreadable, a plugin with no jar or no
 * provider, a jar that cannot be read, a provider that cannot be loaded, and a type provided twice
 * (naming both places).
 */
public final class TierPlugins implements AutoCloseable
{
    private static final System.Logger LOG = System.getLogger(TierPlugins.class.getName());
    private static final String SERVICE_FILE = "META-INF/services/" + StorageTierProvider.class.getName();
    private static final String DIR_KEY = EngineSettings.PLUGINS_DIR.key();

    /**
     * A provider the engine runs.
     *
     * @param provider the provider
     * @param place    where it was found, for messages: the class path entry, or the plugin's directory or jar
     * @param builtFor the SPI version it was built for
     */
    public record Found(StorageTierProvider provider, String place, SpiVersion builtFor)
    {
    }

    private final SpiVersion engineVersion;
    private final Map<String, Found> available = new TreeMap<>();
    private final Map<String, String> refused = new TreeMap<>();
    private final Map<String, String> places = new LinkedHashMap<>();
    private final List<PluginClassLoader> loaders = new ArrayList<>();
    private final java.util.Set<String> fromDirectory = new java.util.TreeSet<>();

    private TierPlugins(final SpiVersion engineVersion)
    {
        this.engineVersion = engineVersion;
    }

    /**
     * Finds the providers on the class path and, when given, in a plugin directory.
     *
     * @param pluginsDir the {@code plugins.dir} setting; null or empty for none
     * @return the providers found; close it after the tiers created from them
     * @throws ConfigException naming what is wrong with a plugin or the directory
     */
    public static TierPlugins discover(final Path pluginsDir)
    {
        final TierPlugins plugins = new TierPlugins(SpiVersion.current());
        try
        {
            plugins.scanClassPath();
            if (pluginsDir != null && !pluginsDir.toString().isEmpty())
            {
                plugins.scanDirectory(pluginsDir);
            }
            return plugins;
        }
        catch (final RuntimeException | Error ex)
        {
            plugins.close();
            throw ex;
        }
    }

    /** @return the providers the engine runs, by type */
    public Map<String, StorageTierProvider> providers()
    {
        final Map<String, StorageTierProvider> byType = new TreeMap<>();
        available.forEach((type, found) -> byType.put(type, found.provider()));
        return Collections.unmodifiableMap(byType);
    }

    /** @return the providers the engine runs, with where each was found, by type */
    public Map<String, Found> found()
    {
        return Collections.unmodifiableMap(available);
    }

    /**
     * @param type a tier type the engine runs
     * @return whether its provider came from {@code plugins.dir} (not the engine's class path)
     */
    public boolean isFromPluginDirectory(final String type)
    {
        return fromDirectory.contains(type);
    }

    /** @return why each refused type is refused, by type */
    public Map<String, String> refused()
    {
        return Collections.unmodifiableMap(refused);
    }

    /**
     * @param tier a configured tier
     * @return the provider of its type
     * @throws ConfigException for a type that is refused, with the reason, or that no provider has
     */
    public StorageTierProvider provider(final EngineConfig.TierSettings tier)
    {
        final String key = EngineConfig.TIER_PREFIX + tier.name() + ".type";
        final Found found = available.get(tier.type());
        if (found != null)
        {
            return found.provider();
        }
        final String reason = refused.get(tier.type());
        if (reason != null)
        {
            throw new ConfigException(key, "invalid " + key + " = \"" + tier.type() + "\": " + reason);
        }
        throw new ConfigException(key, "invalid " + key + " = \"" + tier.type() + "\": no tier plugin of that type on the class path"
            + (loaders.isEmpty() ? "" : " or in " + DIR_KEY) + "; available types: " + available.keySet());
    }

    /**
     * Logs each refused plugin that no configured tier uses, since it would otherwise go unnoticed.
     *
     * @param configuredTypes the types of the configured tiers
     */
    public void warnAboutRefused(final Collection<String> configuredTypes)
    {
        refused.forEach((type, reason) ->
        {
            if (!configuredTypes.contains(type))
            {
                LOG.log(System.Logger.Level.WARNING, "{0}; no tier uses type ''{1}'', so the engine starts without it", reason, type);
            }
        });
    }

    /** Closes the plugins' class loaders: call it after closing every tier they created. */
    @Override
    public void close()
    {
        for (final PluginClassLoader loader : loaders)
        {
            try
            {
                loader.close();
            }
            catch (final IOException ex)
            {
                LOG.log(System.Logger.Level.WARNING, "closing the class loader of plugin " + loader.place() + " failed", ex);
            }
        }
        loaders.clear();
    }

    private void scanClassPath()
    {
        final Iterator<StorageTierProvider> providers = ServiceLoader.load(StorageTierProvider.class).iterator();
        while (true)
        {
            final StorageTierProvider provider;
            try
            {
                if (!providers.hasNext())
                {
                    return;
                }
                provider = providers.next();
            }
            catch (final ServiceConfigurationError | LinkageError ex)
            {
                throw new ConfigException(null, "a tier provider on the class path cannot be loaded: " + ex.getMessage(), ex);
            }
            add(provider, "the class path (" + location(provider.getClass()) + ")", false);
        }
    }

    private void scanDirectory(final Path dir)
    {
        final String setting = DIR_KEY + " = \"" + dir + "\"";
        if (!Files.exists(dir))
        {
            throw new ConfigException(DIR_KEY, "invalid " + setting + ": no such directory");
        }
        if (!Files.isDirectory(dir))
        {
            throw new ConfigException(DIR_KEY, "invalid " + setting + ": not a directory; it must be a directory holding one"
                + " subdirectory or jar per plugin");
        }
        for (final Path entry : list(dir, "invalid " + setting))
        {
            final String name = entry.getFileName().toString();
            if (name.startsWith("."))
            {
                continue;
            }
            if (Files.isDirectory(entry))
            {
                loadPlugin(entry, "plugin directory " + entry, jarsOf(entry));
            }
            else if (name.endsWith(".jar"))
            {
                loadPlugin(entry, "plugin jar " + entry, List.of(checkedJar(entry, "plugin jar " + entry)));
            }
            else
            {
                LOG.log(System.Logger.Level.DEBUG, "{0}: ignoring {1}, which is neither a plugin directory nor a jar", DIR_KEY, entry);
            }
        }
    }

    private static List<Path> list(final Path dir, final String what)
    {
        try (Stream<Path> entries = Files.list(dir))
        {
            return entries.sorted().toList();
        }
        catch (final IOException ex)
        {
            // An unreadable directory lands here too (AccessDeniedException), named with the OS's reason.
            throw new ConfigException(DIR_KEY, what + ": cannot list " + dir + " (check its permissions): " + ex, ex);
        }
    }

    private static List<Path> jarsOf(final Path pluginDir)
    {
        final String what = "plugin directory " + pluginDir;
        final List<Path> jars = new ArrayList<>();
        for (final Path entry : list(pluginDir, what))
        {
            if (entry.getFileName().toString().endsWith(".jar") && !Files.isDirectory(entry))
            {
                jars.add(checkedJar(entry, what));
            }
        }
        if (jars.isEmpty())
        {
            throw new ConfigException(DIR_KEY, what + " holds no jar: put the plugin's jar and the jars it needs directly inside it");
        }
        return jars;
    }

    /** Opens a jar once, so an unreadable or corrupt one is named here rather than lost inside a class loader. */
    private static Path checkedJar(final Path jar, final String what)
    {
        try (JarFile ignored = new JarFile(jar.toFile()))
        {
            return jar;
        }
        catch (final IOException | SecurityException ex)
        {
            throw new ConfigException(DIR_KEY, what + ": cannot read " + jar + " as a jar: " + ex.getMessage(), ex);
        }
    }

    private void loadPlugin(final Path place, final String what, final List<Path> jars)
    {
        final List<URL> urls = new ArrayList<>();
        for (final Path jar : jars)
        {
            try
            {
                urls.add(jar.toUri().toURL());
            }
            catch (final MalformedURLException ex)
            {
                throw new ConfigException(DIR_KEY, what + ": cannot use " + jar + ": " + ex.getMessage(), ex);
            }
        }
        final PluginClassLoader loader = new PluginClassLoader(place, urls);
        loaders.add(loader);
        final Iterator<StorageTierProvider> providers = ServiceLoader.load(StorageTierProvider.class, loader).iterator();
        int found = 0;
        while (true)
        {
            final StorageTierProvider provider;
            try
            {
                if (!providers.hasNext())
                {
                    break;
                }
                provider = providers.next();
            }
            catch (final ServiceConfigurationError | LinkageError ex)
            {
                // A plugin built for another SPI may not even link; its manifest may still say why.
                throw new ConfigException(DIR_KEY, what + ": its tier provider cannot be loaded: " + ex.getMessage()
                    + (ex.getCause() == null ? "" : ": " + TierRegistry.oneLine(ex.getCause())) + manifestHint(jars), ex);
            }
            if (provider.getClass().getClassLoader() != loader)
            {
                continue;
            }
            final String type = add(provider, what, true);
            found++;
            LOG.log(System.Logger.Level.INFO, "{0}: tier type ''{1}'' ({2})", what, type,
                available.containsKey(type) ? "built for SPI " + available.get(type).builtFor() : "refused");
        }
        if (found == 0)
        {
            throw new ConfigException(DIR_KEY, what + " holds no tier provider: none of its jars lists one in " + SERVICE_FILE);
        }
    }

    /** @return the provider's type, now either available or refused */
    private String add(final StorageTierProvider provider, final String place, final boolean fromDirectory)
    {
        final String key = fromDirectory ? DIR_KEY : null;
        final String type;
        final SpiVersion declared;
        try
        {
            type = provider.type();
            declared = provider.spiVersion();
        }
        catch (final Throwable ex)
        {
            if (ex instanceof VirtualMachineError fatal && !(ex instanceof StackOverflowError))
            {
                throw fatal;
            }
            LOG.log(System.Logger.Level.DEBUG, place + ": tier provider " + provider.getClass().getName() + " failed", ex);
            throw new ConfigException(key, place + ": tier provider " + provider.getClass().getName()
                + " failed to give its type and SPI version: " + TierRegistry.oneLine(ex), ex);
        }
        if (type == null || type.isBlank())
        {
            throw new ConfigException(key, place + ": tier provider " + provider.getClass().getName() + " gives no type");
        }
        if (declared == null)
        {
            throw new ConfigException(key, place + ": tier provider " + provider.getClass().getName() + " returned null from spiVersion();"
                + " it returns new SpiVersion(SpiVersion.MAJOR, SpiVersion.MINOR)");
        }
        final String other = places.putIfAbsent(type, place);
        if (other != null)
        {
            throw new ConfigException(key, "tier type '" + type + "' is provided twice: by " + other + " and by " + place
                + "; remove one of them");
        }
        SpiVersion builtFor = declared.isDeclared() ? declared : manifestVersion(provider.getClass(), place, key);
        if (!builtFor.isDeclared())
        {
            if (fromDirectory)
            {
                refused.put(type, "tier plugin '" + type + "' (" + place + ") declares no SPI version: its provider's spiVersion()"
                    + " must return new SpiVersion(SpiVersion.MAJOR, SpiVersion.MINOR), or its jar's manifest must carry "
                    + SpiVersion.MANIFEST_ATTRIBUTE + ": " + engineVersion);
                return type;
            }
            builtFor = engineVersion;
        }
        if (!engineVersion.runs(builtFor))
        {
            refused.put(type, "tier plugin '" + type + "' (" + place + ") was built for SPI " + builtFor + " but this engine runs SPI "
                + engineVersion + ", which takes plugins built for SPI " + engineVersion.major() + ".0 to " + engineVersion
                + " (the same major version, a minor version no newer); rebuild the plugin against kvtier-spi " + engineVersion);
            return type;
        }
        available.put(type, new Found(provider, place, builtFor));
        if (fromDirectory)
        {
            this.fromDirectory.add(type);
        }
        return type;
    }

    /** @return the version in the manifest of the jar a class came from, or {@link SpiVersion#UNDECLARED} */
    private static SpiVersion manifestVersion(final Class<?> type, final String place, final String key)
    {
        final Path jar = jarOf(type);
        if (jar == null)
        {
            return SpiVersion.UNDECLARED;
        }
        final String text = manifestAttribute(jar);
        if (text == null)
        {
            return SpiVersion.UNDECLARED;
        }
        try
        {
            return SpiVersion.parse(text);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new ConfigException(key, place + ": the manifest of " + jar + " has " + SpiVersion.MANIFEST_ATTRIBUTE + ": " + text
                + ", which is not major.minor, e.g. " + SpiVersion.current(), ex);
        }
    }

    private static String manifestHint(final List<Path> jars)
    {
        for (final Path jar : jars)
        {
            final String text = manifestAttribute(jar);
            if (text != null)
            {
                return " (" + jar.getFileName() + " says it was built for SPI " + text + "; this engine runs SPI " + SpiVersion.current() + ")";
            }
        }
        return "";
    }

    private static String manifestAttribute(final Path jar)
    {
        try (JarFile file = new JarFile(jar.toFile()))
        {
            final Manifest manifest = file.getManifest();
            return manifest == null ? null : manifest.getMainAttributes().getValue(SpiVersion.MANIFEST_ATTRIBUTE);
        }
        catch (final IOException ex)
        {
            return null;
        }
    }

    private static Path jarOf(final Class<?> type)
    {
        final Path path = CodeSources.pathOf(type);
        return path != null && Files.isRegularFile(path) ? path : null;
    }

    private static String location(final Class<?> type)
    {
        final CodeSource source = type.getProtectionDomain().getCodeSource();
        return source == null || source.getLocation() == null ? type.getName() : source.getLocation().getPath();
    }
}
