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
        ReferenceTier.Fault[] faults()
        {
            return new ReferenceTier.Fault[] {ReferenceTier.Fault.FAIL_WHOLE_BATCH_ON_MISSING};
        }
    }

    /** Reads write past the end of their slice. */
    static final class WritesPastSlice extends BrokenContract
    {
        @Override
        ReferenceTier.Fault[] faults()
        {
            return new ReferenceTier.Fault[] {ReferenceTier.Fault.WRITE_PAST_SLICE};
        }
    }

    /** exists completes keys twice. */
    static final class CompletesTwice extends BrokenContract
    {
        @Override
        ReferenceTier.Fault[] faults()
        {
            return new ReferenceTier.Fault[] {ReferenceTier.Fault.DOUBLE_COMPLETE};
        }
    }

    /** close() does not stop the tier. */
    static final class ServesAfterClose extends BrokenContract
    {
        @Override
        ReferenceTier.Fault[] faults()
        {
            return new ReferenceTier.Fault[] {ReferenceTier.Fault.SERVE_AFTER_CLOSE};
        }
    }

    /** Unknown settings pass silently. */
    static final class AcceptsUnknownSettings extends BrokenContract
    {
        @Override
        ReferenceTier.Fault[] faults()
        {
            return new ReferenceTier.Fault[] {ReferenceTier.Fault.ACCEPT_UNKNOWN_SETTINGS};
        }
    }

    /** Config errors do not name the key. */
    static final class VagueConfigErrors extends BrokenContract
    {
        @Override
        ReferenceTier.Fault[] faults()
        {
            return new ReferenceTier.Fault[] {ReferenceTier.Fault.VAGUE_CONFIG_ERRORS};
        }
    }

    /** A wrong-size read returns a partial object as OK. */
    static final class PartialRead extends BrokenContract
    {
        @Override
        ReferenceTier.Fault[] faults()
        {
            return new ReferenceTier.Fault[] {ReferenceTier.Fault.PARTIAL_READ};
        }
    }

    /** Claims PERSISTENT but forgets on restart. */
    static final class ForgetsOnRestart extends BrokenContract
    {
        @Override
        ReferenceTier.Fault[] faults()
        {
            return new ReferenceTier.Fault[] {ReferenceTier.Fault.FORGET_ON_RESTART};
        }
    }

    /** Evicts without telling the engine. */
    static final class EvictsSilently extends BrokenContract
    {
        @Override
        ReferenceTier.Fault[] faults()
        {
            return new ReferenceTier.Fault[] {ReferenceTier.Fault.EVICT_SILENTLY};
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
        ReferenceTier.Fault[] faults()
        {
            return new ReferenceTier.Fault[] {ReferenceTier.Fault.STALE_USAGE};
        }
    }

    /** Loses the last key of a large batch. */
    static final class DropsKeyOfLargeBatch extends BrokenContract
    {
        @Override
        ReferenceTier.Fault[] faults()
        {
            return new ReferenceTier.Fault[] {ReferenceTier.Fault.DROP_LAST_KEY_OF_LARGE_BATCH};
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
        ReferenceTier.Fault[] faults()
        {
            return new ReferenceTier.Fault[] {ReferenceTier.Fault.TORN_OVERWRITE};
        }
    }

    /** Reads a batch after handing it back. */
    static final class TouchesAfterCompletion extends BrokenContract
    {
        @Override
        ReferenceTier.Fault[] faults()
        {
            return new ReferenceTier.Fault[] {ReferenceTier.Fault.TOUCH_AFTER_COMPLETION};
        }
    }

    /** A read writes into a key's segment after completing that key. */
    static final class WritesAfterComplete extends BrokenContract
    {
        @Override
        ReferenceTier.Fault[] faults()
        {
            return new ReferenceTier.Fault[] {ReferenceTier.Fault.WRITE_AFTER_COMPLETE};
        }
    }

    /** An empty batch makes exists throw: it reads key 0 of a batch that has none. */
    static final class ThrowsOnEmptyBatch extends BrokenContract
    {
        @Override
        ReferenceTier.Fault[] faults()
        {
            return new ReferenceTier.Fault[] {ReferenceTier.Fault.THROW_ON_EMPTY_BATCH};
        }
    }

    /** The provider keeps the SPI's default spiVersion(), so an engine cannot tell what it was built for. */
    static final class DeclaresNoSpiVersion extends BrokenContract
    {
        @Override
        ReferenceTier.Fault[] faults()
        {
            return new ReferenceTier.Fault[] {ReferenceTier.Fault.DECLARE_NO_SPI_VERSION};
        }
    }

    /** close() never returns: without a deadline the build hung here, with no message. */
    static final class HangsOnClose extends BrokenContract
    {
        @Override
        ReferenceTier.Fault[] faults()
        {
            return new ReferenceTier.Fault[] {ReferenceTier.Fault.HANG_ON_CLOSE};
        }

        @Override
        protected Duration completionDeadline()
        {
            // Every close() of the test waits this long before the kit calls it hung.
            return Duration.ofSeconds(1);
        }
    }

    /** remove() blocks its caller until the tier closes, instead of returning at once. */
    static final class BlocksInRemove extends BrokenContract
    {
        @Override
        ReferenceTier.Fault[] faults()
        {
            return new ReferenceTier.Fault[] {ReferenceTier.Fault.BLOCK_IN_REMOVE};
        }

        @Override
        protected Duration completionDeadline()
        {
            // The kit calls the blocked remove() hung after this long.
            return Duration.ofSeconds(1);
        }
    }

    /** Reads copy at most 128 KiB of an object and report OK: the kit's one object size was below that. */
    static final class CopiesAtMost128KiB extends BrokenContract
    {
        @Override
        ReferenceTier.Fault[] faults()
        {
            return new ReferenceTier.Fault[] {ReferenceTier.Fault.COPY_AT_MOST_128_KIB};
        }
    }

    /** Engine frames read back without the zeros of their trailer block, as a compact tier that forgot them would. */
    static final class ForgetsTrailerBlockZeros extends BrokenContract
    {
        @Override
        ReferenceTier.Fault[] faults()
        {
            return new ReferenceTier.Fault[] {ReferenceTier.Fault.FORGET_TRAILER_BLOCK_ZEROS};
        }
    }

    /** Where a write declares its trailer block padding past the trailer, the trailer is lost with the padding. */
    static final class PaddingTakesTheTrailer extends BrokenContract
    {
        @Override
        ReferenceTier.Fault[] faults()
        {
            return new ReferenceTier.Fault[] {ReferenceTier.Fault.PADDING_TAKES_THE_TRAILER};
        }
    }

    /** Objects in a plain HashMap that worker threads and callers change without a lock. */
    static final class UnsynchronisedMap extends BrokenContract
    {
        @Override
        ReferenceTier.Fault[] faults()
        {
            return new ReferenceTier.Fault[] {ReferenceTier.Fault.UNSYNCHRONISED_MAP};
        }

        @Override
        protected Duration completionDeadline()
        {
            // A HashMap raced into a cycle can spin a worker forever; the kit then calls the batch hung.
            return Duration.ofSeconds(5);
        }
    }

    /** Objects named by PageKey.hashCode(): random keys almost never collide, so the kit's random keys passed. */
    static final class IndexesByHashCode extends BrokenContract
    {
        @Override
        ReferenceTier.Fault[] faults()
        {
            return new ReferenceTier.Fault[] {ReferenceTier.Fault.INDEX_BY_HASH_CODE};
        }
    }

    /** Objects named by both halves in hex without leading zeros, so (0x1, 0x23..) and (0x12, 0x3..) share a name. */
    static final class NamesByUnpaddedHex extends BrokenContract
    {
        @Override
        ReferenceTier.Fault[] faults()
        {
            return new ReferenceTier.Fault[] {ReferenceTier.Fault.NAME_BY_UNPADDED_HEX};
        }
    }

    /** Objects in a static map: they survive a reopen in the same JVM, which is all the kit used to check. */
    static final class KeepsObjectsInAStaticMap extends BrokenContract
    {
        @Override
        ReferenceTier.Fault[] faults()
        {
            return new ReferenceTier.Fault[] {ReferenceTier.Fault.JVM_STATIC_MAP};
        }
    }

    /** Loops read batch.size() in their condition, once more after completing the last key (as the guide's example did). */
    static final class ReadsSizeAfterLastCompletion extends BrokenContract
    {
        @Override
        ReferenceTier.Fault[] faults()
        {
            return new ReferenceTier.Fault[] {ReferenceTier.Fault.SIZE_AFTER_LAST_COMPLETION};
        }
    }

    /** Writes complete at once and copy their source later, when the engine may already have reused it. */
    static final class CopiesWriteSourceLater extends BrokenContract
    {
        @Override
        ReferenceTier.Fault[] faults()
        {
            return new ReferenceTier.Fault[] {ReferenceTier.Fault.DEFER_WRITE_COPY};
        }
    }

    /** Each write leaves one more file descriptor open until close. */
    static final class LeaksADescriptorPerWrite extends BrokenContract
    {
        @Override
        ReferenceTier.Fault[] faults()
        {
            return new ReferenceTier.Fault[] {ReferenceTier.Fault.LEAK_DESCRIPTOR_PER_WRITE};
        }
    }

    /** Writes in place under a lock readers take too: whole objects for every reader, torn ones after a killed writer. */
    static final class WritesInPlaceUnderALock extends BrokenContract
    {
        @Override
        ReferenceTier.Fault[] faults()
        {
            return new ReferenceTier.Fault[] {ReferenceTier.Fault.WRITE_IN_PLACE_UNDER_LOCK};
        }
    }

    /**
     * The kit run against a deliberately broken tier. Tagged so that no surefire run, whatever its
     * {@code -Dtest} filter, runs these as ordinary tests (their failures are the point); only
     * {@link ContractKitSelfTest} runs them, through its own launcher.
     */
    @org.junit.jupiter.api.Tag(BrokenContract.TAG)
    abstract static class BrokenContract extends ReferenceContract
    {
        static final String TAG = "deliberately-broken";
    }
}
