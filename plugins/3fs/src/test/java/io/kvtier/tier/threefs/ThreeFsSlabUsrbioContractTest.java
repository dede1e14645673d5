package io.kvtier.tier.threefs;

import io.kvtier.tck.InvalidConfig;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The kit against {@code layout = slab} on the USRBIO path: the POSIX tier's slab on the mount, its page bytes moved by
 * the real FFM binding through the fake library (plugins/3fs/hf3fs-fake), with rings smaller than a batch so that a
 * batch goes in several rounds, and two I/O threads sharing the extents' registrations and the pool's iovs. Everything
 * else is the files layout's USRBIO contract test, which it extends; pointed at a real client library and mount the
 * same way, it runs against real 3FS (docs/plugins/3fs.md).
 */
class ThreeFsSlabUsrbioContractTest extends ThreeFsUsrbioContractTest
{
    @Override
    protected Map<String, String> validConfig(final Path scratchDir)
    {
        final Map<String, String> config = super.validConfig(scratchDir);
        config.put("layout", "slab");
        config.put("extent-size", "8MiB");
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
