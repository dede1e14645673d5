package io.kvtier.tck;

import io.kvtier.spi.StorageTierProvider;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;

/**
 * The kit's hooks for {@link ReferenceTier}, shared by the reference run and the broken-tier runs.
 */
abstract class ReferenceContract extends AbstractStorageTierContractTest
{
    /** @return the faults to switch on, none for the reference */
    abstract ReferenceTier.Fault[] faults();

    @Override
    protected StorageTierProvider provider()
    {
        return new ReferenceTier.Provider(faults());
    }

    @Override
    protected Map<String, String> validConfig(final Path scratchDir)
    {
        return Map.of("volume", scratchDir.toString());
    }

    @Override
    protected Map<String, String> boundedConfig(final Path scratchDir, final long capacityBytes)
    {
        return Map.of("volume", scratchDir.toString(), "capacity", Long.toString(capacityBytes));
    }

    @Override
    protected List<InvalidConfig> invalidConfigs(final Path scratchDir)
    {
        return List.of(
            InvalidConfig.of(Map.of(), qualifiedKey("volume")),
            InvalidConfig.of(Map.of("volume", scratchDir.toString(), "capacity", "lots"), qualifiedKey("capacity")),
            InvalidConfig.of(Map.of("volume", scratchDir.toString(), "capacity", "4KiB"), qualifiedKey("capacity")),
            InvalidConfig.of(Map.of("volume", scratchDir.resolve("missing").toString()), qualifiedKey("volume")));
    }

    @AfterEach
    void dropStaticVolumes()
    {
        ReferenceTier.dropStaticVolumes();
    }
}
