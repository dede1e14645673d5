package io.kvtier.tier.posix;

import io.kvtier.spi.StorageTierProvider;

import java.nio.file.Path;
import java.util.Map;

/**
 * The kit against the slab layout moving pages with {@code pread}/{@code pwrite} ({@code io = libc}),
 * bounded, with O_DIRECT where the filesystem allows it and {@code fsync} on.
 */
class PosixTierSlabLibcContractTest extends PosixContract
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
            "layout", "slab",
            "capacity", "256MiB",
            "extent-size", "64MiB",
            "direct-io", "true",
            "fsync", "true",
            "io", "libc");
    }
}
