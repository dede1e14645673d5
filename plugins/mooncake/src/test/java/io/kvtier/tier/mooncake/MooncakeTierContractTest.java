package io.kvtier.tier.mooncake;

import io.kvtier.spi.StorageTierProvider;
import io.kvtier.tck.AbstractStorageTierContractTest;
import io.kvtier.tck.InvalidConfig;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The conformance kit against a real Mooncake Store: a {@code mooncake_master} this class starts on
 * loopback, and for each test a fresh client contributing its own 64 MiB segment. Skips, naming what
 * to install or set, where the library, the master or their runtime packages are missing.
 */
class MooncakeTierContractTest extends AbstractStorageTierContractTest
{
    private static MooncakeMaster master;

    @BeforeAll
    static void startMaster()
    {
        // Without a store each test skips from validConfig, one by one with the reason, rather than the class vanishing.
        if (MooncakeTestSupport.missing() == null)
        {
            master = MooncakeTestSupport.startMaster(MooncakeTestSupport.logDir("contract"));
        }
    }

    @AfterAll
    static void stopMaster()
    {
        if (master != null)
        {
            master.close();
        }
    }

    @Override
    protected StorageTierProvider provider()
    {
        // The library comes from the lib setting, never from the environment of whoever runs the build.
        return MooncakeTestSupport.provider(Map.of());
    }

    @Override
    protected Map<String, String> validConfig(final Path scratchDir)
    {
        MooncakeTestSupport.assumeStoreAvailable();
        return MooncakeTestSupport.config(master, "64MiB");
    }

    @Override
    protected List<InvalidConfig> invalidConfigs(final Path scratchDir)
    {
        final Map<String, String> valid = validConfig(scratchDir);
        return List.of(
            new InvalidConfig("master missing", without(valid, "master"), qualifiedKey("master")),
            new InvalidConfig("master without a port", with(valid, "master", "127.0.0.1"), qualifiedKey("master")),
            new InvalidConfig("master port out of range", with(valid, "master", "127.0.0.1:70000"), qualifiedKey("master")),
            new InvalidConfig("protocol unknown", with(valid, "protocol", "carrier-pigeon"), qualifiedKey("protocol")),
            new InvalidConfig("global-segment-size not a size", with(valid, "global-segment-size", "lots"), qualifiedKey("global-segment-size")),
            new InvalidConfig("local-buffer-size below 1 MiB", with(valid, "local-buffer-size", "4KiB"), qualifiedKey("local-buffer-size")),
            new InvalidConfig("key-prefix with a space", with(valid, "key-prefix", "a b"), qualifiedKey("key-prefix")),
            new InvalidConfig("key-prefix too long", with(valid, "key-prefix", "p".repeat(257)), qualifiedKey("key-prefix")),
            new InvalidConfig("replicas zero", with(valid, "replicas", "0"), qualifiedKey("replicas")),
            new InvalidConfig("soft-pin not a flag", with(valid, "soft-pin", "maybe"), qualifiedKey("soft-pin")),
            new InvalidConfig("preferred-segments with an empty entry", with(valid, "preferred-segments", "a:1,,b:2"), qualifiedKey("preferred-segments")),
            new InvalidConfig("prefer-local-segment without a segment", with(with(valid, "global-segment-size", "0"), "prefer-local-segment", "true"),
                qualifiedKey("prefer-local-segment")),
            new InvalidConfig("setup-retries zero", with(valid, "setup-retries", "0"), qualifiedKey("setup-retries")),
            new InvalidConfig("setup-timeout zero", with(valid, "setup-timeout", "0"), qualifiedKey("setup-timeout")),
            new InvalidConfig("lease-ttl without a unit", with(valid, "lease-ttl", "10"), qualifiedKey("lease-ttl")),
            new InvalidConfig("lease-wait not a duration", with(valid, "lease-wait", "soon"), qualifiedKey("lease-wait")),
            new InvalidConfig("write-retries negative", with(valid, "write-retries", "-1"), qualifiedKey("write-retries")),
            new InvalidConfig("io-threads zero", with(valid, "io-threads", "0"), qualifiedKey("io-threads")),
            new InvalidConfig("batch-keys too many", with(valid, "batch-keys", "5000"), qualifiedKey("batch-keys")),
            new InvalidConfig("lib names a missing file", with(valid, "lib", scratchDir.resolve("no-such-lib.so").toString()), qualifiedKey("lib")));
    }

    private static Map<String, String> with(final Map<String, String> base, final String key, final String value)
    {
        final Map<String, String> copy = new HashMap<>(base);
        copy.put(key, value);
        return copy;
    }

    private static Map<String, String> without(final Map<String, String> base, final String key)
    {
        final Map<String, String> copy = new HashMap<>(base);
        copy.remove(key);
        return copy;
    }
}
