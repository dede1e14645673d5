package io.kvtier.tier.posix;

import io.kvtier.nativeaccess.uring.Uring;
import org.junit.jupiter.api.BeforeAll;

import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The kit against the slab layout on the io_uring path (the default {@code io}), bounded, with O_DIRECT
 * where the filesystem allows it: frames in preallocated extents instead of a file per page, so the
 * kit's restarts, kills and concurrent overwrites check the slab's frames, tombstones and pins. Skipped
 * where io_uring is unavailable ({@link PosixTierSlabLibcContractTest} covers the slab there).
 */
class PosixTierSlabContractTest extends PosixContract
{
    @BeforeAll
    static void requireUring()
    {
        assumeTrue(Uring.availability().available(), () -> "io_uring is unavailable here: " + Uring.availability().describe());
    }

    @Override
    protected Map<String, String> validConfig(final Path scratchDir)
    {
        return config(scratchDir, PageLayout.SLAB, null, "capacity", "256MiB", "extent-size", "64MiB", "direct-io", "true", "io-threads", "2");
    }
}
