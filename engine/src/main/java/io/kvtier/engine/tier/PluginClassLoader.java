package io.kvtier.engine.tier;

import io.kvtier.spi.StorageTierProvider;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.List;

/**
 * The class loader of one tier plugin: its own jars, the SPI of the engine, and the JDK; nothing else
 * of the engine's class path. Its parent is the platform class loader, so the JDK's classes come from
 * there, then the plugin's own jars; classes of {@code io.kvtier.spi} alone are taken from the loader
 * that loaded the engine's SPI, so a tier and the engine agree on the interfaces between them (a copy
 * of the SPI bundled in a plugin is never used). Two plugins may therefore bundle conflicting versions
 * of one library, and a plugin cannot reach the engine's internals or its dependencies.
 *
 * <p>A plugin's classes belong to this loader's unnamed module, with or without a module descriptor in
 * their jars, whether the engine runs on the class path or on the module path ({@code ./kvtier}): an
 * unnamed module reads every module, and {@code io.kvtier.spi} exports its package to all, so a plain
 * third-party jar keeps working (cli's {@code ModulePathIT}); the engine's other modules stay out of its
 * reach because this loader does not delegate to them.
 */
final class PluginClassLoader extends URLClassLoader
{
    private static final String SPI_PACKAGE = StorageTierProvider.class.getPackageName() + ".";

    static
    {
        registerAsParallelCapable();
    }

    private final ClassLoader spiLoader;
    private final Path place;

    /**
     * @param place where the plugin lies, for messages
     * @param jars  the plugin's jars
     */
    PluginClassLoader(final Path place, final List<URL> jars)
    {
        super("kvtier-plugin-" + place.getFileName(), jars.toArray(URL[]::new), ClassLoader.getPlatformClassLoader());
        this.spiLoader = StorageTierProvider.class.getClassLoader();
        this.place = place;
    }

    /** @return the plugin's directory or jar */
    Path place()
    {
        return place;
    }

    @Override
    protected Class<?> loadClass(final String name, final boolean resolve) throws ClassNotFoundException
    {
        if (name.startsWith(SPI_PACKAGE))
        {
            return spiLoader.loadClass(name);
        }
        return super.loadClass(name, resolve);
    }

    @Override
    public String toString()
    {
        return "PluginClassLoader[" + place + "]";
    }
}
