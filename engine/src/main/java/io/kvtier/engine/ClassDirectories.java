package io.kvtier.engine;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

/**
 * Loads, once per JVM and before the engine serves, every class of kvtier's own modules that the JVM would
 * otherwise read from a directory on first use.
 *
 * <p>Why: a class loader opens a file to read a class from a directory (a development build, surefire, an
 * exploded module), and the JVM remembers a class that failed to load. An engine that reaches its
 * open-files limit before it first serves a request then fails to load a class of the request path, and
 * fails the same way on every later duty cycle with {@code NoClassDefFoundError}: alive, and serving no
 * client ever again (the chaos campaign found it). Classes in jars are not at risk, since the loader keeps
 * each jar open once it read from it, and the JDK's own classes come from its mapped module image; so only
 * directories are walked, and classes are loaded without being initialised (no static initialiser runs
 * early).
 */
final class ClassDirectories
{
    private static final System.Logger LOG = System.getLogger(ClassDirectories.class.getName());
    private static final AtomicBoolean DONE = new AtomicBoolean();

    private ClassDirectories()
    {
    }

    /**
     * Loads the classes of the engine's modules (engine, client, spi, collections, native access, device)
     * where they come from directories; later calls do nothing.
     */
    static void loadEngineClasses()
    {
        if (DONE.compareAndSet(false, true))
        {
            load(Engine.class, io.kvtier.client.protocol.ErrorCode.class, io.kvtier.spi.StorageTier.class,
                io.kvtier.collections.KeyTable.class, io.kvtier.nativeaccess.NativeAccess.class, io.kvtier.device.CopyExecutor.class);
        }
    }

    /**
     * Loads every class found in the directory each anchor class came from, by the anchor's loader.
     *
     * @param anchors one class of each module to load
     * @return how many classes were loaded (found in directories)
     */
    static int load(final Class<?>... anchors)
    {
        final long started = System.nanoTime();
        final Set<Path> seen = new LinkedHashSet<>();
        int loaded = 0;
        int failed = 0;
        for (final Class<?> anchor : anchors)
        {
            final Path root = directoryOf(anchor);
            if (root == null || !seen.add(root))
            {
                continue;
            }
            try (Stream<Path> files = Files.walk(root))
            {
                for (final Path file : (Iterable<Path>)files.filter(ClassDirectories::isClassFile)::iterator)
                {
                    final String relative = root.relativize(file).toString();
                    final String name = relative.substring(0, relative.length() - ".class".length()).replace(file.getFileSystem().getSeparator(), ".");
                    try
                    {
                        Class.forName(name, false, anchor.getClassLoader());
                        loaded++;
                    }
                    catch (final ClassNotFoundException | LinkageError ex)
                    {
                        // A class that cannot load now (an optional dependency absent) would not load later either: not this one's concern.
                        failed++;
                        LOG.log(System.Logger.Level.DEBUG, "not preloading " + name + ": " + ex);
                    }
                }
            }
            catch (final IOException | RuntimeException ex)
            {
                LOG.log(System.Logger.Level.WARNING, "could not list the classes in " + root + " to load them before serving (" + ex
                    + "); an engine that reaches its open-files limit before it first serves may then fail to load them");
            }
        }
        if (!seen.isEmpty())
        {
            LOG.log(System.Logger.Level.DEBUG, "loaded " + loaded + " classes from " + seen + " before serving (" + failed + " could not load) in "
                + (System.nanoTime() - started) / 1_000_000 + " ms");
        }
        return loaded;
    }

    /** @return the directory a class was read from, or null when it came from a jar, the JDK's image or nowhere known */
    private static Path directoryOf(final Class<?> anchor)
    {
        final Path path = CodeSources.pathOf(anchor);
        return path != null && Files.isDirectory(path) ? path : null;
    }

    private static boolean isClassFile(final Path file)
    {
        final String name = file.getFileName().toString();
        return name.endsWith(".class") && !name.equals("module-info.class") && !name.equals("package-info.class");
    }
}
