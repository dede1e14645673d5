package io.kvtier.tier.posix;


import java.nio.file.Path;
import java.util.Map;

/**
 * The kit against the LibC path with every option on: bounded (SELF_EVICTING), shared (SHARED),
 * O_DIRECT where the filesystem allows it.
 */
class PosixTierContractTest extends PosixContract
{
    @Override
    protected Map<String, String> validConfig(final Path scratchDir)
    {
        return config(scratchDir, null, IoPath.LIBC, "capacity", "256MiB", "shared", "true", "direct-io", "true");
    }
}
