package io.kvtier.tier.posix;


import java.nio.file.Path;
import java.util.Map;

/**
 * The kit against the slab layout moving pages with {@code pread}/{@code pwrite} ({@code io = libc}),
 * bounded, with O_DIRECT where the filesystem allows it and {@code fsync} on.
 */
class PosixTierSlabLibcContractTest extends PosixContract
{
    @Override
    protected Map<String, String> validConfig(final Path scratchDir)
    {
        return config(scratchDir, PageLayout.SLAB, IoPath.LIBC, "capacity", "256MiB", "extent-size", "64MiB", "direct-io", "true", "fsync", "true");
    }
}
