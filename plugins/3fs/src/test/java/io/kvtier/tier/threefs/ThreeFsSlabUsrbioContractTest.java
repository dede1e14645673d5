package io.kvtier.tier.threefs;

import io.kvtier.spi.StorageTierProvider;
import io.kvtier.tck.InvalidConfig;
import org.junit.jupiter.api.BeforeEach;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The kit against {@code layout = slab} on the USRBIO path: the POSIX tier's slab on the mount, its page bytes moved by
 * the real FFM binding through the fake library (plugins/3fs/hf3fs-fake), with rings smaller than a batch so that a
 * batch goes in several rounds, and two I/O threads. Pointed at a real client library and mount with -Dkvtier.3fs.fake-lib and
 * -Dkvtier.3fs.kit-mount, it runs against real 3FS (docs/plugins/3fs.md).
 */
class ThreeFsSlabUsrbioContractTest extends ThreeFsContract
{
    @BeforeEach
    void requireFake()
    {
        FakeUsrbio.assumeBuilt();
        FakeUsrbio.reset();
    }

    @Override
    protected void releaseWhatKilledProcessesLeft(final Path scratchRoot) throws java.io.IOException
    {
        FakeUsrbio.removeIovsLeftUnder(scratchRoot);
    }

    @Override
    protected StorageTierProvider provider()
    {
        return new ThreeFsTierProvider(Map.of());
    }

    @Override
    protected Map<String, String> validConfig(final Path scratchDir)
    {
        final Map<String, String> config = new HashMap<>();
        config.put("dir", FakeUsrbio.pageDirectory(scratchDir).toString());
        config.put("lib", FakeUsrbio.library().toString());
        config.put("usrbio", "on");
        config.put("layout", "slab");
        config.put("extent-size", "8MiB");
        config.put("capacity", "256MiB");
        config.put("entries", "16");
        // Two I/O threads, each with its rings, sharing the extents' registrations and the pool's iovs.
        config.put("io-threads", "2");
        return config;
    }

    @Override
    protected List<InvalidConfig> invalidConfigs(final Path scratchDir)
    {
        final List<InvalidConfig> configs = new ArrayList<>(super.invalidConfigs(scratchDir));
        final String dir = FakeUsrbio.mount(scratchDir).toString();
        configs.add(new InvalidConfig("layout not a layout", Map.of("dir", dir, "layout", "heap"), qualifiedKey("layout")));
        configs.add(new InvalidConfig("extent-size with the files layout", Map.of("dir", dir, "extent-size", "8MiB"), qualifiedKey("extent-size")));
        configs.add(new InvalidConfig("extent-size below 1 MiB", Map.of("dir", dir, "layout", "slab", "extent-size", "64KiB",
            "lib", FakeUsrbio.library().toString()), qualifiedKey("extent-size")));
        return configs;
    }
}
