package io.kvtier.cli;

import io.kvtier.spi.StorageTierProvider;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.spi.ToolProvider;
import java.util.stream.Stream;

/**
 * Builds a tier plugin jar at test time as its third-party author would: the JDK's javac against the
 * SPI alone, then the JDK's jar tool. The sources are the guide's own example
 * ({@code docs/examples/memory-tier}), or a provider a test writes.
 */
final class ThirdPartyPlugin
{
    /** The complete plugin that docs/writing-a-tier.md walks through, seen from the cli module. */
    static final Path MEMORY_TIER = Path.of("..", "docs", "examples", "memory-tier");

    private static final String SERVICE_FILE = "META-INF/services/" + StorageTierProvider.class.getName();

    private ThirdPartyPlugin()
    {
    }

    /**
     * @param jar     the jar to write
     * @param scratch a directory for the build
     * @return {@code jar}: the {@code memory} tier of the guide, built from its files as they are
     */
    static Path memoryTier(final Path jar, final Path scratch) throws IOException
    {
        final List<Path> sources;
        try (Stream<Path> files = Files.walk(MEMORY_TIER.resolve("src/main/java")))
        {
            sources = files.filter(file -> file.toString().endsWith(".java")).sorted().toList();
        }
        final Path classes = compile(sources, Files.createTempDirectory(scratch, "memory-tier-classes"));
        final Path resources = MEMORY_TIER.resolve("src/main/resources");
        try (Stream<Path> files = Files.walk(resources))
        {
            for (final Path file : files.filter(Files::isRegularFile).toList())
            {
                Files.createDirectories(classes.resolve(resources.relativize(file)).getParent());
                Files.copy(file, classes.resolve(resources.relativize(file)));
            }
        }
        return jar(classes, jar);
    }

    /**
     * A plugin of one type whose tiers store nothing (every key is missing, every write rejected), and
     * whose {@code create} and tiers' {@code usage} run a statement first, so a test can make them misbehave.
     *
     * @param type      the tier type it provides
     * @param create    Java source run first in {@code create}, e.g. {@code if (true) return null;}
     * @param usage     Java source run first in {@code usage}
     * @param jar       the jar to write
     * @param scratch   a directory for the build
     * @return {@code jar}
     */
    static Path misbehaving(final String type, final String create, final String usage, final Path jar, final Path scratch) throws IOException
    {
        final String pkg = "com.example.misbehaving." + type.replaceAll("[^a-z0-9]", "");
        final Path source = scratch.resolve(type + "-src").resolve(pkg.replace('.', '/')).resolve("Provider.java");
        Files.createDirectories(source.getParent());
        Files.writeString(source, """
            package %s;

            import io.kvtier.spi.*;

            public final class Provider implements StorageTierProvider
            {
                @Override
                public String type()
                {
                    return "%s";
                }

                @Override
                public SpiVersion spiVersion()
                {
                    return new SpiVersion(SpiVersion.MAJOR, SpiVersion.MINOR);
                }

                @Override
                public StorageTier create(final TierConfig config, final TierContext context)
                {
                    %s
                    config.rejectUnknown(java.util.Set.of());
                    return new StorageTier()
                    {
                        public String name() { return config.tierName(); }
                        public String describe() { return "stores nothing"; }
                        public void exists(final TierBatch batch) { all(batch, TierStatus.NOT_FOUND); }
                        public void read(final TierBatch batch) { all(batch, TierStatus.NOT_FOUND); }
                        public void write(final TierBatch batch) { all(batch, TierStatus.REJECTED); }
                        public void remove(final TierBatch batch) { all(batch, TierStatus.NOT_FOUND); }
                        public TierUsage usage() { %s return new TierUsage(0, TierUsage.UNBOUNDED, 0); }
                        public void close() { }
                    };
                }

                private static void all(final TierBatch batch, final TierStatus status)
                {
                    for (int i = 0; i < batch.size(); i++)
                    {
                        batch.complete(i, status);
                    }
                }
            }
            """.formatted(pkg, type, create, usage));
        final Path classes = compile(List.of(source), Files.createTempDirectory(scratch, type + "-classes"));
        Files.createDirectories(classes.resolve(SERVICE_FILE).getParent());
        Files.writeString(classes.resolve(SERVICE_FILE), pkg + ".Provider\n");
        return jar(classes, jar);
    }

    private static Path compile(final List<Path> sources, final Path classes)
    {
        final List<String> args = new ArrayList<>(List.of("--release", "25", "-proc:none", "-encoding", "UTF-8",
            "-classpath", spiLocation().toString(), "-d", classes.toString()));
        sources.forEach(source -> args.add(source.toString()));
        run("javac", args);
        return classes;
    }

    private static Path jar(final Path classes, final Path jar) throws IOException
    {
        Files.createDirectories(jar.toAbsolutePath().getParent());
        run("jar", List.of("--create", "--file", jar.toString(), "-C", classes.toString(), "."));
        return jar;
    }

    private static void run(final String tool, final List<String> args)
    {
        final ToolProvider provider = ToolProvider.findFirst(tool)
            .orElseThrow(() -> new IllegalStateException("no " + tool + " in this JDK: the tests need a JDK, not a JRE"));
        final StringWriter output = new StringWriter();
        final int code;
        try (PrintWriter out = new PrintWriter(output))
        {
            code = provider.run(out, out, args.toArray(String[]::new));
        }
        if (code != 0)
        {
            throw new AssertionError(tool + " " + args + " exited " + code + ":\n" + output);
        }
    }

    /** @return the SPI's jar, or its classes in the reactor: the one thing of kvtier a plugin compiles against */
    private static Path spiLocation()
    {
        try
        {
            return Path.of(StorageTierProvider.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        }
        catch (final URISyntaxException ex)
        {
            throw new IllegalStateException(ex);
        }
    }
}
