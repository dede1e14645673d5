package io.kvtier.tck;

import java.time.Duration;

/**
 * The kit run against deliberately broken tiers, one nested class per fault. Only
 * {@link ContractKitSelfTest} runs these, through the JUnit Platform launcher: the holder's name
 * does not match surefire's test patterns and surefire skips nested classes, so a broken tier's
 * expected failures never fail the build.
 */
final class BrokenTierContracts
{
    private BrokenTierContracts()
    {
    }

    /** A read batch fails as a whole when one key is missing. */
    static final class FailsWholeBatchOnMissing extends BrokenContract
    {
        @Override
        InMemoryTier.Fault[] faults()
        {
            return new InMemoryTier.Fault[] {InMemoryTier.Fault.FAIL_WHOLE_BATCH_ON_MISSING};
        }
    }

    /** Reads write past the end of their slice. */
    static final class WritesPastSlice extends BrokenContract
    {
        @Override
        InMemoryTier.Fault[] faults()
        {
            return new InMemoryTier.Fault[] {InMemoryTier.Fault.WRITE_PAST_SLICE};
        }
    }

    /** exists completes keys twice. */
    static final class CompletesTwice extends BrokenContract
    {
        @Override
        InMemoryTier.Fault[] faults()
        {
            return new InMemoryTier.Fault[] {InMemoryTier.Fault.DOUBLE_COMPLETE};
        }
    }

    /** close() does not stop the tier. */
    static final class ServesAfterClose extends BrokenContract
    {
        @Override
        InMemoryTier.Fault[] faults()
        {
            return new InMemoryTier.Fault[] {InMemoryTier.Fault.SERVE_AFTER_CLOSE};
        }
    }

    /** Unknown settings pass silently. */
    static final class AcceptsUnknownSettings extends BrokenContract
    {
        @Override
        InMemoryTier.Fault[] faults()
        {
            return new InMemoryTier.Fault[] {InMemoryTier.Fault.ACCEPT_UNKNOWN_SETTINGS};
        }
    }

    /** Config errors do not name the key. */
    static final class VagueConfigErrors extends BrokenContract
    {
        @Override
        InMemoryTier.Fault[] faults()
        {
            return new InMemoryTier.Fault[] {InMemoryTier.Fault.VAGUE_CONFIG_ERRORS};
        }
    }

    /** A wrong-size read returns a partial object as OK. */
    static final class PartialRead extends BrokenContract
    {
        @Override
        InMemoryTier.Fault[] faults()
        {
            return new InMemoryTier.Fault[] {InMemoryTier.Fault.PARTIAL_READ};
        }
    }

    /** Claims PERSISTENT but forgets on restart. */
    static final class ForgetsOnRestart extends BrokenContract
    {
        @Override
        InMemoryTier.Fault[] faults()
        {
            return new InMemoryTier.Fault[] {InMemoryTier.Fault.FORGET_ON_RESTART};
        }
    }

    /** Evicts without telling the engine. */
    static final class EvictsSilently extends BrokenContract
    {
        @Override
        InMemoryTier.Fault[] faults()
        {
            return new InMemoryTier.Fault[] {InMemoryTier.Fault.EVICT_SILENTLY};
        }

        @Override
        protected Duration completionDeadline()
        {
            // The eviction test polls until the deadline for reports that never come.
            return Duration.ofSeconds(1);
        }
    }

    /** usage() does not drop removed objects. */
    static final class StaleUsage extends BrokenContract
    {
        @Override
        InMemoryTier.Fault[] faults()
        {
            return new InMemoryTier.Fault[] {InMemoryTier.Fault.STALE_USAGE};
        }
    }

    /** Loses the last key of a large batch. */
    static final class DropsKeyOfLargeBatch extends BrokenContract
    {
        @Override
        InMemoryTier.Fault[] faults()
        {
            return new InMemoryTier.Fault[] {InMemoryTier.Fault.DROP_LAST_KEY_OF_LARGE_BATCH};
        }

        @Override
        protected Duration completionDeadline()
        {
            // The hang detection fires at the deadline; keep the self-test quick.
            return Duration.ofSeconds(1);
        }
    }

    /** Overwrites in place, so a concurrent read sees half of each. */
    static final class TornOverwrite extends BrokenContract
    {
        @Override
        InMemoryTier.Fault[] faults()
        {
            return new InMemoryTier.Fault[] {InMemoryTier.Fault.TORN_OVERWRITE};
        }
    }

    /** Reads a batch after handing it back. */
    static final class TouchesAfterCompletion extends BrokenContract
    {
        @Override
        InMemoryTier.Fault[] faults()
        {
            return new InMemoryTier.Fault[] {InMemoryTier.Fault.TOUCH_AFTER_COMPLETION};
        }
    }

    /** A read writes into a key's segment after completing that key. */
    static final class WritesAfterComplete extends BrokenContract
    {
        @Override
        InMemoryTier.Fault[] faults()
        {
            return new InMemoryTier.Fault[] {InMemoryTier.Fault.WRITE_AFTER_COMPLETE};
        }
    }

    /** An empty batch makes exists throw: it reads key 0 of a batch that has none. */
    static final class ThrowsOnEmptyBatch extends BrokenContract
    {
        @Override
        InMemoryTier.Fault[] faults()
        {
            return new InMemoryTier.Fault[] {InMemoryTier.Fault.THROW_ON_EMPTY_BATCH};
        }
    }

    /** The provider keeps the SPI's default spiVersion(), so an engine cannot tell what it was built for. */
    static final class DeclaresNoSpiVersion extends BrokenContract
    {
        @Override
        InMemoryTier.Fault[] faults()
        {
            return new InMemoryTier.Fault[] {InMemoryTier.Fault.DECLARE_NO_SPI_VERSION};
        }
    }

    /**
     * The kit run against a deliberately broken tier. Tagged so that no surefire run, whatever its
     * {@code -Dtest} filter, runs these as ordinary tests (their failures are the point); only
     * {@link ContractKitSelfTest} runs them, through its own launcher.
     */
    @org.junit.jupiter.api.Tag(BrokenContract.TAG)
    abstract static class BrokenContract extends InMemoryContract
    {
        static final String TAG = "deliberately-broken";
    }
}
