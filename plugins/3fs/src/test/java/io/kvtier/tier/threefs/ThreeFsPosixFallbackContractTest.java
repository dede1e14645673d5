package io.kvtier.tier.threefs;

import io.kvtier.spi.StorageTierProvider;
import io.kvtier.tier.threefs.hf3fs.Hf3fsLibrary;
import org.junit.jupiter.api.BeforeEach;

import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The kit against the POSIX fallback, reached as on a host without the USRBIO library: no {@code lib}, no
 * KVTIER_3FS_LIB, and nothing for the dynamic loader to find, so the tier is the POSIX tier on the mount.
 */
class ThreeFsPosixFallbackContractTest extends ThreeFsContract
{
    @BeforeEach
    void requireNoInstalledLibrary()
    {
        assumeTrue(Hf3fsLibrary.check(Hf3fsLibrary.SONAME).isPresent(),
            "skipped: a real " + Hf3fsLibrary.SONAME + " is installed here, so the tier would not fall back");
    }

    @Override
    protected StorageTierProvider provider()
    {
        return new ThreeFsTierProvider(Map.of());
    }

    @Override
    protected Map<String, String> validConfig(final Path scratchDir)
    {
        return Map.of(
            "dir", FakeUsrbio.mount(scratchDir).toString(),
            "capacity", "256MiB",
            "fanout-levels", "1");
    }
}
