package io.kvtier.tier.posix;

import io.kvtier.spi.StorageTierProvider;

import java.nio.file.Path;
import java.util.Map;

/**
 * The kit against the FileChannel fallback (LibC forced off), with the defaults: unbounded, not
 * shared, buffered.
 */
class PosixTierChannelContractTest extends PosixContract
{
    @Override
    protected StorageTierProvider provider()
    {
        return new PosixTierProvider(false);
    }

    @Override
    protected Map<String, String> validConfig(final Path scratchDir)
    {
        return config(scratchDir, null, IoPath.CHANNEL, "fanout-levels", "1", "io-threads", "3");
    }
}
