package io.kvtier.tier.posix;

import io.kvtier.spi.StorageTierProvider;

import java.nio.file.Path;
import java.util.Map;

/**
 * The kit against the LibC path with every option on: bounded (SELF_EVICTING), shared (SHARED),
 * O_DIRECT where the filesystem allows it.
 */
class PosixTierContractTest extends PosixContract
{
    @Override
    protected StorageTierProvider provider()
    {
        return new PosixTierProvider();
    }

    @Override
    protected Map<String, String> validConfig(final Path scratchDir)
    {
        return Map.of(
            "dir", scratchDir.toString(),
            "capacity", "256MiB",
            "shared", "true",
            "direct-io", "true",
            "io", "libc");
    }
}
