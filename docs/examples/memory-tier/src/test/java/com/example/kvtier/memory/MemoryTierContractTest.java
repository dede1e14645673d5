package com.example.kvtier.memory;

import io.kvtier.spi.StorageTierProvider;
import io.kvtier.tck.AbstractStorageTierContractTest;
import io.kvtier.tck.InvalidConfig;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** The whole conformance kit against the memory tier. */
class MemoryTierContractTest extends AbstractStorageTierContractTest
{
    @Override
    protected StorageTierProvider provider()
    {
        return new MemoryTierProvider();
    }

    @Override
    protected Map<String, String> validConfig(final Path scratchDir)
    {
        return Map.of();
    }

    @Override
    protected List<InvalidConfig> invalidConfigs(final Path scratchDir)
    {
        return List.of(
            new InvalidConfig("capacity is not a size", Map.of("capacity", "lots"), qualifiedKey("capacity")),
            new InvalidConfig("capacity below one object", Map.of("capacity", "1KiB"), qualifiedKey("capacity")));
    }
}
