package io.kvtier.tier.faults;

import io.kvtier.spi.StorageTierProvider;
import io.kvtier.tck.AbstractStorageTierContractTest;
import io.kvtier.tck.InvalidConfig;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The conformance kit against the faults tier over posix with every rate at zero (and a fault log and
 * control file in place): healed, it is the tier it wraps, so a campaign's healed phase runs on a
 * tier that keeps the whole contract. Bad settings of the wrapper and of the wrapped tier are each
 * refused naming the key as the operator wrote it.
 */
class FaultsTierContractTest extends AbstractStorageTierContractTest
{
    @Override
    protected StorageTierProvider provider()
    {
        return new FaultsTierProvider();
    }

    @Override
    protected Map<String, String> validConfig(final Path scratchDir)
    {
        return Map.of("wrap", "posix", "wrap.dir", scratchDir.resolve("posix").toString(), "wrap.fanout-levels", "1", "seed", "1",
            "faults", "eio-read:0, bit-flip:0", "fault-log", scratchDir.resolve("faults.jsonl").toString(),
            "fault-control", scratchDir.resolve("faults.ctl").toString());
    }

    @Override
    protected Map<String, String> boundedConfig(final Path scratchDir, final long capacityBytes)
    {
        return Map.of("wrap", "posix", "wrap.dir", scratchDir.resolve("posix").toString(), "seed", "1",
            "wrap.capacity", Long.toString(capacityBytes));
    }

    @Override
    protected List<InvalidConfig> invalidConfigs(final Path scratchDir)
    {
        final String dir = scratchDir.resolve("posix").toString();
        return List.of(
            new InvalidConfig("no wrapped type", Map.of("wrap.dir", dir), qualifiedKey("wrap")),
            new InvalidConfig("a wrapped type nobody provides", Map.of("wrap", "no-such-type", "wrap.dir", dir), qualifiedKey("wrap")),
            new InvalidConfig("a wrapped tier's own setting bad", Map.of("wrap", "posix", "wrap.dir", dir, "wrap.io-threads", "0"),
                qualifiedKey("wrap.io-threads")),
            new InvalidConfig("an unknown fault kind", Map.of("wrap", "posix", "wrap.dir", dir, "faults", "eio-rd:0.1"), qualifiedKey("faults")),
            new InvalidConfig("a rate above 1", Map.of("wrap", "posix", "wrap.dir", dir, "faults", "eio-read:2"), qualifiedKey("faults")),
            new InvalidConfig("read rates adding up past 1", Map.of("wrap", "posix", "wrap.dir", dir, "faults", "eio-read:0.6, short-read:0.6"),
                qualifiedKey("faults")),
            new InvalidConfig("a seed that is not a number", Map.of("wrap", "posix", "wrap.dir", dir, "seed", "forty-two"), qualifiedKey("seed")),
            new InvalidConfig("slow not a duration", Map.of("wrap", "posix", "wrap.dir", dir, "slow", "fast"), qualifiedKey("slow")),
            new InvalidConfig("stall of zero", Map.of("wrap", "posix", "wrap.dir", dir, "stall", "0s"), qualifiedKey("stall")),
            new InvalidConfig("a fault log in a missing directory", Map.of("wrap", "posix", "wrap.dir", dir, "fault-log",
                scratchDir.resolve("missing/faults.jsonl").toString()), qualifiedKey("fault-log")));
    }
}
