package io.kvtier.tier.posix;


import java.nio.file.Path;
import java.util.Map;

/**
 * The kit against the LibC path (io = libc) in the files layout, with the other defaults: a directory that is this tier's
 * alone (probes are answered from the index), unbounded, buffered, two fan-out levels created at start.
 */
class PosixTierLocalContractTest extends PosixContract
{
    @Override
    protected Map<String, String> validConfig(final Path scratchDir)
    {
        return config(scratchDir, PageLayout.FILES, IoPath.LIBC);
    }
}
