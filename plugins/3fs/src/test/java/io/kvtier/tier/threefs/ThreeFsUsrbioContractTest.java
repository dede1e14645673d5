package io.kvtier.tier.threefs;

import io.kvtier.spi.StorageTierProvider;
import org.junit.jupiter.api.BeforeEach;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The kit against the USRBIO path, through the real FFM binding and the fake library (plugins/3fs/hf3fs-fake):
 * bounded (SELF_EVICTING), with small rings so that batches span several chunks. Pointed at a real client
 * library and mount with -Dkvtier.3fs.fake-lib and -Dkvtier.3fs.kit-mount, it runs against real 3FS
 * (docs/plugins/3fs.md).
 */
class ThreeFsUsrbioContractTest extends ThreeFsContract
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
        // The PERSISTENT check's killed writer leaves its iov's shared memory in /dev/shm, as a process
        // killed under the real library would: 32 MiB a run otherwise.
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
        config.put("capacity", "256MiB");
        config.put("entries", "16");
        config.put("fanout-levels", "1");
        return config;
    }

    @Override
    protected List<io.kvtier.tck.InvalidConfig> invalidConfigs(final Path scratchDir)
    {
        final List<io.kvtier.tck.InvalidConfig> configs = new java.util.ArrayList<>(super.invalidConfigs(scratchDir));
        final String dir = FakeUsrbio.mount(scratchDir).toString();
        final Path notMounted = scratchDir.resolve("plain");
        notMounted.toFile().mkdirs();
        configs.add(new io.kvtier.tck.InvalidConfig("lib that does not exist",
            Map.of("dir", dir, "lib", scratchDir.resolve("nope/libhf3fs_api_shared.so").toString()), qualifiedKey("lib")));
        configs.add(new io.kvtier.tck.InvalidConfig("lib without hf3fs_wait_for_ios",
            Map.of("dir", dir, "lib", FakeUsrbio.incompleteLibrary().toString()), qualifiedKey("lib")));
        configs.add(new io.kvtier.tck.InvalidConfig("dir not on a 3FS mount",
            Map.of("dir", notMounted.toString(), "lib", FakeUsrbio.library().toString()), qualifiedKey("dir")));
        return configs;
    }
}
