package io.kvtier.tier.posix;

import io.kvtier.nativeaccess.uring.Uring;
import org.junit.jupiter.api.BeforeAll;

import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The kit against the io_uring path, the default ({@code io} left out), in the files layout (the
 * slab, the default layout of an unshared directory, has its own kit runs), bounded and with O_DIRECT
 * where the filesystem allows it. Skipped where io_uring is unavailable: the reason says what to
 * enable (the tier itself would fall back to libc there, which the other configurations cover).
 */
class PosixTierUringContractTest extends PosixContract
{
    @BeforeAll
    static void requireUring()
    {
        assumeTrue(Uring.availability().available(), () -> "io_uring is unavailable here: " + Uring.availability().describe());
    }

    @Override
    protected Map<String, String> validConfig(final Path scratchDir)
    {
        return config(scratchDir, PageLayout.FILES, null, "capacity", "256MiB", "direct-io", "true", "io-threads", "2");
    }
}
