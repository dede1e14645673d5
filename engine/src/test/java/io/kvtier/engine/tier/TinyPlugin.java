package io.kvtier.engine.tier;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A tier plugin jar built at test time: a provider of a given type whose tiers store nothing, whose
 * {@code describe()} reports the version of a bundled helper class ({@code com.example.shared.Helper},
 * the same name in every plugin), whether the engine's classes are visible to it and whether
 * {@code create} ran with the plugin's loader as context class loader, and which declares
 * its SPI version in code, in its manifest, or not at all. A test may make it misbehave: a statement
 * run first in one of its methods ({@link #first}), a bundled class left out of its jar ({@link #without}).
 */
public final class TinyPlugin
{
    /** What {@code spiVersion()} returns, as Java source: the usual declaration, with the SPI's constants inlined. */
    public static final String BUILT_FOR_THIS_SPI = "new SpiVersion(SpiVersion.MAJOR, SpiVersion.MINOR)";

    private final String type;
    private String spiVersion = BUILT_FOR_THIS_SPI;
    private String helperVersion = "1.0";
    private final Map<String, String> manifest = new LinkedHashMap<>();
    private boolean registered = true;
    private final Map<String, String> first = new LinkedHashMap<>();
    private final Set<String> leftOut = new HashSet<>();

    private TinyPlugin(final String type)
    {
        this.type = type;
    }

    /**
     * @param type the tier type it provides
     * @return a plugin declaring this SPI in code and bundling helper 1.0
     */
    public static TinyPlugin ofType(final String type)
    {
        return new TinyPlugin(type);
    }

    /**
     * @param expression Java source for what {@code spiVersion()} returns, or null not to override it
     * @return this
     */
    public TinyPlugin spiVersion(final String expression)
    {
        this.spiVersion = expression;
        return this;
    }

    /**
     * @param version what the bundled helper class reports
     * @return this
     */
    public TinyPlugin helperVersion(final String version)
    {
        this.helperVersion = version;
        return this;
    }

    /**
     * @param key   a main attribute of the jar's manifest
     * @param value its value
     * @return this
     */
    public TinyPlugin manifest(final String key, final String value)
    {
        manifest.put(key, value);
        return this;
    }

    /**
     * @param method    one of the plugin's methods: {@code type}, {@code create} (the provider's), or
     *                  {@code capabilities}, {@code describe}, {@code usage}, {@code close} (its tiers')
     * @param statement Java source run first in it, e.g. {@code if (true) return null;}
     * @return this
     */
    public TinyPlugin first(final String method, final String statement)
    {
        if (!Set.of("type", "create", "capabilities", "describe", "usage", "close").contains(method))
        {
            throw new IllegalArgumentException("no method " + method + " to put a statement in");
        }
        first.put(method, statement);
        return this;
    }

    /**
     * @param className a class the plugin is compiled with, e.g. {@code com.example.shared.Helper}
     * @return this, building a jar without it, so using it throws {@link NoClassDefFoundError}
     */
    public TinyPlugin without(final String className)
    {
        leftOut.add(className);
        return this;
    }

    /** @return this, building a jar without a service file, so it registers no provider */
    public TinyPlugin unregistered()
    {
        registered = false;
        return this;
    }

    /**
     * Compiles the plugin and writes its jar.
     *
     * @param jar     the jar to write
     * @param scratch a directory for its classes
     * @return {@code jar}
     */
    public Path buildJar(final Path jar, final Path scratch) throws IOException
    {
        final String pkg = "com.example.tiny." + type.replaceAll("[^a-z0-9]", "");
        final Map<String, String> sources = new LinkedHashMap<>();
        sources.put(pkg + ".Provider", providerSource(pkg));
        sources.put("com.example.shared.Helper", """
            package com.example.shared;

            public final class Helper
            {
                public static String version()
                {
                    return "%s";
                }
            }
            """.formatted(helperVersion));
        final Path classes = PluginJars.compile(sources, List.of(), Files.createTempDirectory(scratch, type + "-classes"));
        for (final String className : leftOut)
        {
            Files.delete(classes.resolve(className.replace('.', '/') + ".class"));
        }
        return PluginJars.jar(classes, manifest, registered ? PluginJars.serviceFile(pkg + ".Provider") : Map.of(), jar);
    }

    /** @return the statement a test put first in the method, or nothing */
    private String statement(final String method)
    {
        return first.getOrDefault(method, "");
    }

    private String providerSource(final String pkg)
    {
        final String versionMethod = spiVersion == null ? "" : """
                @Override
                public SpiVersion spiVersion()
                {
                    return %s;
                }
            """.formatted(spiVersion);
        return """
            package %s;

            import io.kvtier.spi.*;

            public final class Provider implements StorageTierProvider
            {
                @Override
                public String type()
                {
                    %s
                    return "%s";
                }

            %s
                @Override
                public StorageTier create(final TierConfig config, final TierContext context)
                {
                    %s
                    config.rejectUnknown(java.util.Set.of());
                    final boolean ownContextLoader = Thread.currentThread().getContextClassLoader() == Provider.class.getClassLoader();
                    return new StorageTier()
                    {
                        public String name() { return config.tierName(); }
                        public java.util.Set<TierCapability> capabilities() { %s return java.util.Set.of(); }
                        public String describe()
                        {
                            %s
                            return "helper " + com.example.shared.Helper.version() + ", engine visible: " + visible("io.kvtier.engine.Engine")
                                + ", own context loader at create: " + ownContextLoader + ", spi " + context.spiVersion();
                        }
                        public void exists(final TierBatch b) { all(b, TierStatus.NOT_FOUND); }
                        public void read(final TierBatch b) { all(b, TierStatus.NOT_FOUND); }
                        public void write(final TierBatch b) { all(b, TierStatus.REJECTED); }
                        public void remove(final TierBatch b) { all(b, TierStatus.NOT_FOUND); }
                        public TierUsage usage() { %s return new TierUsage(0, TierUsage.UNBOUNDED, 0); }
                        public void close() { %s }
                    };
                }

                private static void all(final TierBatch batch, final TierStatus status)
                {
                    for (int i = 0; i < batch.size(); i++)
                    {
                        batch.complete(i, status);
                    }
                }

                private static boolean visible(final String className)
                {
                    try
                    {
                        Class.forName(className, false, Provider.class.getClassLoader());
                        return true;
                    }
                    catch (final ClassNotFoundException ex)
                    {
                        return false;
                    }
                }
            }
            """.formatted(pkg, statement("type"), type, versionMethod, statement("create"), statement("capabilities"), statement("describe"),
            statement("usage"), statement("close"));
    }
}
