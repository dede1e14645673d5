package io.kvtier.tier.posix;

import io.kvtier.spi.StorageTierProvider;
import io.kvtier.tck.AbstractStorageTierContractTest;
import io.kvtier.tck.InvalidConfig;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The kit's hooks shared by every I/O path and both layouts of the POSIX tier; a subclass says only how
 * its tier differs ({@link #config}).
 */
abstract class PosixContract extends AbstractStorageTierContractTest
{
    /**
     * Builds a subclass's settings.
     *
     * @param scratchDir the tier's directory
     * @param layout     the {@code layout}, or null to leave it out so that the default is what runs
     * @param io         the {@code io} path, or null to leave it out so that the default is what runs
     * @param settings   the subclass's other settings, in key, value pairs
     * @return the settings
     */
    static Map<String, String> config(final Path scratchDir, final PageLayout layout, final IoPath io, final String... settings)
    {
        if (settings.length % 2 != 0)
        {
            throw new IllegalArgumentException("settings come in key, value pairs; got " + settings.length + " strings");
        }
        final Map<String, String> config = new LinkedHashMap<>();
        config.put("dir", scratchDir.toString());
        if (layout != null)
        {
            config.put("layout", layout.name().toLowerCase(Locale.ROOT));
        }
        if (io != null)
        {
            config.put("io", io.settingValue);
        }
        for (int i = 0; i < settings.length; i += 2)
        {
            config.put(settings[i], settings[i + 1]);
        }
        return Map.copyOf(config);
    }

    /** The provider with LibC in use where it can be; {@link PosixTierChannelContractTest} forces it off. */
    @Override
    protected StorageTierProvider provider()
    {
        return new PosixTierProvider();
    }

    @Override
    protected Map<String, String> boundedConfig(final Path scratchDir, final long capacityBytes)
    {
        final Map<String, String> config = new HashMap<>(validConfig(scratchDir));
        config.put("capacity", Long.toString(capacityBytes));
        return config;
    }

    @Override
    protected List<InvalidConfig> invalidConfigs(final Path scratchDir)
    {
        final String dir = scratchDir.toString();
        final Path regularFile = scratchDir.resolve("a-file");
        try
        {
            Files.writeString(regularFile, "not a directory");
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        return List.of(
            new InvalidConfig("dir missing", Map.of(), qualifiedKey("dir")),
            new InvalidConfig("dir blank", Map.of("dir", " "), qualifiedKey("dir")),
            new InvalidConfig("dir whose parent is missing", Map.of("dir", scratchDir.resolve("no-parent/child").toString()), qualifiedKey("dir")),
            new InvalidConfig("dir is a regular file", Map.of("dir", regularFile.toString()), qualifiedKey("dir")),
            new InvalidConfig("capacity not a size", Map.of("dir", dir, "capacity", "lots"), qualifiedKey("capacity")),
            new InvalidConfig("capacity below one object", Map.of("dir", dir, "capacity", "4KiB"), qualifiedKey("capacity")),
            new InvalidConfig("evict-high above 1", Map.of("dir", dir, "evict-high", "1.5"), qualifiedKey("evict-high")),
            new InvalidConfig("evict-high zero", Map.of("dir", dir, "evict-high", "0"), qualifiedKey("evict-high")),
            new InvalidConfig("evict-high below the default evict-low", Map.of("dir", dir, "evict-high", "0.5"), qualifiedKey("evict-high")),
            new InvalidConfig("evict-low not below evict-high", Map.of("dir", dir, "evict-low", "95%"), qualifiedKey("evict-low")),
            new InvalidConfig("evict-low not a ratio", Map.of("dir", dir, "evict-low", "low"), qualifiedKey("evict-low")),
            new InvalidConfig("fanout-levels above 3", Map.of("dir", dir, "fanout-levels", "4"), qualifiedKey("fanout-levels")),
            new InvalidConfig("fanout-levels not a number", Map.of("dir", dir, "fanout-levels", "two"), qualifiedKey("fanout-levels")),
            new InvalidConfig("io-threads zero", Map.of("dir", dir, "io-threads", "0"), qualifiedKey("io-threads")),
            new InvalidConfig("io-threads too many", Map.of("dir", dir, "io-threads", "65"), qualifiedKey("io-threads")),
            new InvalidConfig("fsync not a flag", Map.of("dir", dir, "fsync", "maybe"), qualifiedKey("fsync")),
            new InvalidConfig("direct-io not a flag", Map.of("dir", dir, "direct-io", "sometimes"), qualifiedKey("direct-io")),
            new InvalidConfig("shared not a flag", Map.of("dir", dir, "shared", "perhaps"), qualifiedKey("shared")),
            new InvalidConfig("tmp-max-age without a unit", Map.of("dir", dir, "tmp-max-age", "10"), qualifiedKey("tmp-max-age")),
            new InvalidConfig("tmp-max-age with an unknown unit", Map.of("dir", dir, "tmp-max-age", "10 parsecs"), qualifiedKey("tmp-max-age")),
            new InvalidConfig("index-entries too few", Map.of("dir", dir, "index-entries", "0"), qualifiedKey("index-entries")),
            new InvalidConfig("io not a known path", Map.of("dir", dir, "io", "aio"), qualifiedKey("io")),
            new InvalidConfig("layout not a known layout", Map.of("dir", dir, "layout", "log"), qualifiedKey("layout")),
            new InvalidConfig("a shared directory with the slab layout", Map.of("dir", dir, "layout", "slab", "shared", "true"), qualifiedKey("shared")),
            new InvalidConfig("extent-size below 1MiB", Map.of("dir", dir, "layout", "slab", "extent-size", "64KiB"), qualifiedKey("extent-size")),
            new InvalidConfig("extent-size not a size", Map.of("dir", dir, "extent-size", "big"), qualifiedKey("extent-size")));
    }
}
