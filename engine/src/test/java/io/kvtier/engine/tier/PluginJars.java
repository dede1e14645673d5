package io.kvtier.engine.tier;

import io.kvtier.spi.StorageTierProvider;

import java.io.IOException;
import java.io.OutputStream;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;

import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

/**
 * Builds tier plugins at test time the way a third party would, with what the JDK has: javac through
 * {@link ToolProvider} against nothing but the SPI (plus any extra class path given), and the jar
 * through {@link JarOutputStream}.
 */
public final class PluginJars
{
    private PluginJars()
    {
    }

    /** @return where the engine's SPI classes are: its jar, or the reactor's {@code spi/target/classes} */
    public static Path spiLocation()
    {
        return locationOf(StorageTierProvider.class);
    }

    /**
     * @param type a class
     * @return the jar or directory it was loaded from
     */
    public static Path locationOf(final Class<?> type)
    {
        try
        {
            return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
        }
        catch (final URISyntaxException ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    /**
     * Compiles sources against the SPI and the given class path.
     *
     * @param sources   Java sources by binary class name, e.g. {@code com.example.Tier}
     * @param classPath more to compile against, besides the SPI
     * @param out       the directory to write classes into
     * @return {@code out}
     * @throws AssertionError with javac's diagnostics if compilation fails
     */
    public static Path compile(final Map<String, String> sources, final List<Path> classPath, final Path out) throws IOException
    {
        final JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        if (javac == null)
        {
            throw new IllegalStateException("no system Java compiler: tests need a JDK, not a JRE");
        }
        Files.createDirectories(out);
        final List<JavaFileObject> units = new ArrayList<>();
        sources.forEach((name, text) -> units.add(new Source(name, text)));
        final List<String> path = new ArrayList<>();
        path.add(spiLocation().toString());
        classPath.forEach(p -> path.add(p.toString()));
        final List<String> options = List.of("--release", "25", "-proc:none", "-classpath", String.join(java.io.File.pathSeparator, path),
            "-d", out.toString());
        final StringWriter diagnostics = new StringWriter();
        try (StandardJavaFileManager files = javac.getStandardFileManager(null, null, StandardCharsets.UTF_8))
        {
            if (!javac.getTask(diagnostics, files, null, options, null, units).call())
            {
                throw new AssertionError("javac failed on " + sources.keySet() + ":\n" + diagnostics);
            }
        }
        return out;
    }

    /**
     * Writes a jar of a directory of classes and resources.
     *
     * @param classes    what to put in it
     * @param manifest   main attributes of its manifest besides the version
     * @param jar        the jar to write
     * @param extraFiles more entries, by path inside the jar, e.g. a service file
     * @return {@code jar}
     */
    public static Path jar(final Path classes, final Map<String, String> manifest, final Map<String, String> extraFiles, final Path jar)
        throws IOException
    {
        final Manifest mf = new Manifest();
        mf.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        manifest.forEach((key, value) -> mf.getMainAttributes().putValue(key, value));
        Files.createDirectories(jar.toAbsolutePath().getParent());
        try (OutputStream file = Files.newOutputStream(jar);
             JarOutputStream out = new JarOutputStream(file, mf);
             Stream<Path> entries = classes == null ? Stream.empty() : Files.walk(classes))
        {
            for (final Path entry : entries.filter(Files::isRegularFile).sorted().toList())
            {
                out.putNextEntry(new JarEntry(classes.relativize(entry).toString().replace('\\', '/')));
                out.write(Files.readAllBytes(entry));
                out.closeEntry();
            }
            for (final Map.Entry<String, String> extra : extraFiles.entrySet())
            {
                out.putNextEntry(new JarEntry(extra.getKey()));
                out.write(extra.getValue().getBytes(StandardCharsets.UTF_8));
                out.closeEntry();
            }
        }
        catch (final UncheckedIOException ex)
        {
            throw ex.getCause();
        }
        return jar;
    }

    /**
     * @param providerClass the provider's binary name
     * @return the service file registering it, by its path inside a jar
     */
    public static Map<String, String> serviceFile(final String providerClass)
    {
        return Map.of("META-INF/services/" + StorageTierProvider.class.getName(), providerClass + "\n");
    }

    /** A source held in memory. */
    private static final class Source extends SimpleJavaFileObject
    {
        private final String text;

        Source(final String className, final String text)
        {
            super(java.net.URI.create("string:///" + className.replace('.', '/') + Kind.SOURCE.extension), Kind.SOURCE);
            this.text = text;
        }

        @Override
        public CharSequence getCharContent(final boolean ignoreEncodingErrors)
        {
            return text;
        }
    }
}
