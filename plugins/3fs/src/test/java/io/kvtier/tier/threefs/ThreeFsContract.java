package io.kvtier.tier.threefs;

import io.kvtier.tck.AbstractStorageTierContractTest;
import io.kvtier.tck.InvalidConfig;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The kit's hooks shared by both I/O paths of the 3FS tier.
 */
abstract class ThreeFsContract extends AbstractStorageTierContractTest
{
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
        final String dir = FakeUsrbio.mount(scratchDir).toString();
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
            new InvalidConfig("dir that does not exist", Map.of("dir", scratchDir.resolve("absent").toString()), qualifiedKey("dir")),
            new InvalidConfig("dir is a regular file", Map.of("dir", regularFile.toString()), qualifiedKey("dir")),
            new InvalidConfig("usrbio not a mode", Map.of("dir", dir, "usrbio", "maybe"), qualifiedKey("usrbio")),
            new InvalidConfig("capacity below one object", Map.of("dir", dir, "capacity", "4KiB"), qualifiedKey("capacity")),
            new InvalidConfig("evict-low not below evict-high", Map.of("dir", dir, "evict-low", "95%"), qualifiedKey("evict-low")),
            new InvalidConfig("fanout-levels above 3", Map.of("dir", dir, "fanout-levels", "4"), qualifiedKey("fanout-levels")),
            new InvalidConfig("entries zero", Map.of("dir", dir, "entries", "0"), qualifiedKey("entries")),
            new InvalidConfig("timeout zero", Map.of("dir", dir, "timeout", "0s"), qualifiedKey("timeout")),
            new InvalidConfig("drain-timeout without a unit", Map.of("dir", dir, "drain-timeout", "10"), qualifiedKey("drain-timeout")));
    }
}
