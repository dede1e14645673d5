package io.kvtier.tier.mooncake;

import io.kvtier.spi.PageKey;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierStatus;
import io.kvtier.tck.ContractTierContext;
import io.kvtier.tck.PageArena;
import io.kvtier.tck.PageBytes;
import io.kvtier.tck.RecordingTierBatch;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Store failures a real cluster shows rarely and on no schedule, made to happen on cue by the project's
 * Mooncake test double (its fault switches, {@link MooncakeFake}): a put or get failing, a store full for
 * a while, a get answering short or slower than its lease, a master that cannot be reached at setup or
 * goes away under a running tier. Each shows the tier giving the key a clear status and working on
 * afterwards. Skips against a real install, which has no switches.
 */
class MooncakeTierFaultTest
{
    private static final long OBJECT_SIZE = 64 * 1024 + 4096;
    private static final Duration DEADLINE = Duration.ofSeconds(30);

    private static MooncakeMaster master;

    private final List<StorageTier> tiers = new ArrayList<>();
    private final PageArena arena = new PageArena(PageArena.bytesFor(16, OBJECT_SIZE));
    private final SplittableRandom random = new SplittableRandom();

    @BeforeAll
    static void startMaster()
    {
        if (MooncakeTestSupport.missing() == null && MooncakeTestSupport.usesDouble())
        {
            master = MooncakeTestSupport.startMaster(MooncakeTestSupport.logDir("faults"));
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

    @BeforeEach
    void assumeDouble()
    {
        MooncakeTestSupport.assumeDouble("fault injection");
        MooncakeFake.reset();
    }

    @AfterEach
    void closeTiers()
    {
        if (master != null)
        {
            MooncakeFake.reset();
        }
        tiers.forEach(StorageTier::close);
        arena.close();
    }

    @Test
    void shouldReportAFailedPutAsAnIoErrorAndStoreTheNextOne()
    {
        final MooncakeTier tier = open(Map.of());
        final PageKey key = newKey();
        MooncakeFake.inject(MooncakeFake.OP_PUT, MooncakeFake.FAIL, 0, 1, MooncakeErrors.TRANSFER_FAIL);
        assertThat(write(tier, key, random.nextLong())).as("a put that failed with TRANSFER_FAIL").isEqualTo(TierStatus.IO_ERROR);
        assertThat(MooncakeFake.faultsMet()).isEqualTo(1);
        assertThat(exists(tier, key)).as("the key after its put failed").isEqualTo(TierStatus.NOT_FOUND);

        final long seed = random.nextLong();
        assertThat(write(tier, key, seed)).as("the next write of the key").isEqualTo(TierStatus.OK);
        PageBytes.assertContent(read(tier, key).slice(0), seed, "the key after the failed put was retried by its caller");
    }

    @Test
    void shouldRetryPutsRefusedWhileTheStoreIsFullAndStoreTheBytesOnceItHasRoom()
    {
        final MooncakeTier tier = open(Map.of("write-retries", "3", "write-backoff", "5ms"));
        final PageKey key = newKey();
        final long seed = random.nextLong();
        MooncakeFake.inject(MooncakeFake.OP_PUT, MooncakeFake.FAIL, 0, 2, MooncakeErrors.NO_AVAILABLE_HANDLE);
        assertThat(write(tier, key, seed)).as("a write refused twice as full, with three retries allowed").isEqualTo(TierStatus.OK);
        assertThat(tier.stats().fullRefusals).hasValue(2);
        assertThat(tier.stats().noSpace).hasValue(0);
        PageBytes.assertContent(read(tier, key).slice(0), seed, "the key stored on the third attempt");
    }

    @Test
    void shouldReportAShortGetAsCorruptNeverAsAHit()
    {
        final MooncakeTier tier = open(Map.of());
        final PageKey key = newKey();
        final long seed = random.nextLong();
        assertThat(write(tier, key, seed)).isEqualTo(TierStatus.OK);
        MooncakeFake.inject(MooncakeFake.OP_GET, MooncakeFake.SHORT, 0, 1, 0);
        assertThat(read(tier, key).status(0)).as("a get that delivered half the object").isEqualTo(TierStatus.CORRUPT);
        final RecordingTierBatch again = read(tier, key);
        assertThat(again.status(0)).as("the next get of the key").isEqualTo(TierStatus.OK);
        PageBytes.assertContent(again.slice(0), seed, "the key read whole after a short get");
    }

    @Test
    void shouldMapAGetTimeoutToTimeoutAndAnUnreachableMasterToAnIoError()
    {
        final MooncakeTier tier = open(Map.of());
        final PageKey key = newKey();
        assertThat(write(tier, key, random.nextLong())).isEqualTo(TierStatus.OK);
        MooncakeFake.inject(MooncakeFake.OP_GET, MooncakeFake.FAIL, 0, 1, MooncakeErrors.RPC_TIMEOUT);
        assertThat(read(tier, key).status(0)).as("a get that timed out (RPC_TIMEOUT)").isEqualTo(TierStatus.TIMEOUT);
        MooncakeFake.inject(MooncakeFake.OP_GET, MooncakeFake.UNREACHABLE, 0, 1, 0);
        assertThat(read(tier, key).status(0)).as("a get while the master was unreachable (RPC_FAIL)").isEqualTo(TierStatus.IO_ERROR);
        assertThat(read(tier, key).status(0)).as("the next get").isEqualTo(TierStatus.OK);
    }

    @Test
    void shouldTreatAGetSlowerThanTheLeaseAsAMiss()
    {
        // The get itself is slow (the double waits 3.2 s before it), not the tier's setting made tiny; 3 s, not 1 s, so
        // that the prompt get after it stays a hit on a loaded host.
        final MooncakeTier tier = open(Map.of("lease-ttl", "3s"));
        final PageKey key = newKey();
        assertThat(write(tier, key, random.nextLong())).isEqualTo(TierStatus.OK);
        MooncakeFake.inject(MooncakeFake.OP_GET, MooncakeFake.DELAY, 0, 1, 3200);
        assertThat(read(tier, key).status(0)).as("a get that took longer than lease-ttl").isEqualTo(TierStatus.NOT_FOUND);
        assertThat(tier.stats().leaseExpiredReads).hasValue(1);
        assertThat(read(tier, key).status(0)).as("a prompt get of the same key").isEqualTo(TierStatus.OK);
    }

    @Test
    void shouldStartWhenTheMasterAnswersWithinTheSetupRetriesAndFailNamingItOtherwise()
    {
        MooncakeFake.inject(MooncakeFake.OP_SETUP, MooncakeFake.UNREACHABLE, 0, 1, 0);
        final MooncakeTier tier = open(Map.of("setup-retries", "2"));
        assertThat(MooncakeFake.faultsMet()).as("setup attempts that found the master unreachable").isEqualTo(1);
        assertThat(write(tier, newKey(), random.nextLong())).as("a write after a setup that needed a retry").isEqualTo(TierStatus.OK);

        MooncakeFake.inject(MooncakeFake.OP_SETUP, MooncakeFake.UNREACHABLE, 0, 2, 0);
        assertThatThrownBy(() -> open(Map.of("setup-retries", "2")))
            .isInstanceOf(MooncakeUnavailableException.class)
            .hasMessageContaining(master.address())
            .hasMessageContaining("tier.faults.setup-retries");
    }

    @Test
    void shouldFailKeysWithAnIoErrorWhenTheMasterGoesAwayAndStillClose()
    {
        final MooncakeMaster own = MooncakeTestSupport.startMaster(MooncakeTestSupport.logDir("faults-gone"));
        final Map<String, String> config = new HashMap<>(MooncakeTestSupport.config(own, "64MiB"));
        final MooncakeTier tier = (MooncakeTier)openTier(config);
        final PageKey key = newKey();
        assertThat(write(tier, key, random.nextLong())).isEqualTo(TierStatus.OK);
        own.close();
        assertThat(own.isAlive()).isFalse();

        assertThat(read(tier, key).status(0)).as("a get after the master went away").isEqualTo(TierStatus.IO_ERROR);
        assertThat(write(tier, newKey(), random.nextLong())).as("a write after the master went away").isEqualTo(TierStatus.IO_ERROR);
        tiers.remove(tier);
        tier.close();
        final RecordingTierBatch late = RecordingTierBatch.ofKeys("after close", List.of(key));
        tier.exists(late);
        assertThat(late.awaitCompletion(DEADLINE).status(0)).isEqualTo(TierStatus.CLOSED);
    }

    @Test
    void shouldHaveUnmountedItsSegmentWhenCloseReturnsSoTheMasterCanStopAtOnce()
    {
        final MooncakeMaster own = MooncakeTestSupport.startMaster(MooncakeTestSupport.logDir("faults-unmount"));
        try
        {
            // The closing tier holds the only segment, so its object lives there and goes with the unmount.
            final MooncakeTier closing = (MooncakeTier)openTier(new HashMap<>(MooncakeTestSupport.config(own, "64MiB")));
            final MooncakeTier watcher = (MooncakeTier)openTier(new HashMap<>(MooncakeTestSupport.config(own, "0")));
            final PageKey key = newKey();
            assertThat(write(closing, key, random.nextLong())).isEqualTo(TierStatus.OK);
            assertThat(exists(watcher, key)).as("the key, seen from another client").isEqualTo(TierStatus.OK);

            // A real client's destroy takes seconds to unmount its segment: the double's takes 3 s here.
            MooncakeFake.inject(MooncakeFake.OP_UNMOUNT, MooncakeFake.DELAY, 0, 1, 3000);
            tiers.remove(closing);
            closing.close();
            assertThat(exists(watcher, key)).as("the closed tier's object: its segment was unmounted before close returned")
                .isEqualTo(TierStatus.NOT_FOUND);
            assertThat(MooncakeFake.faultsMet()).as("unmounts that met the delay (the close waited one out)").isEqualTo(1);

            tiers.remove(watcher);
            watcher.close();
        }
        finally
        {
            // At once: nothing of a closed tier still needs the master.
            own.close();
        }
        assertThat(own.isAlive()).isFalse();
    }

    private MooncakeTier open(final Map<String, String> overrides)
    {
        final Map<String, String> config = new HashMap<>(MooncakeTestSupport.config(master, "64MiB"));
        config.putAll(overrides);
        return (MooncakeTier)openTier(config);
    }

    private StorageTier openTier(final Map<String, String> config)
    {
        final StorageTier tier = MooncakeTestSupport.provider(Map.of()).create(new TierConfig("faults", config),
            new ContractTierContext("faults", OBJECT_SIZE));
        tiers.add(tier);
        return tier;
    }

    private PageKey newKey()
    {
        return new PageKey(random.nextLong(), random.nextLong());
    }

    private TierStatus write(final StorageTier tier, final PageKey key, final long seed)
    {
        final MemorySegment source = arena.slice(OBJECT_SIZE);
        PageBytes.fill(source, seed);
        final RecordingTierBatch batch = new RecordingTierBatch("write", List.of(key), List.of(source));
        tier.write(batch);
        return batch.awaitCompletion(DEADLINE).status(0);
    }

    private RecordingTierBatch read(final StorageTier tier, final PageKey key)
    {
        final RecordingTierBatch batch = new RecordingTierBatch("read", List.of(key), List.of(arena.slice(OBJECT_SIZE)));
        tier.read(batch);
        return batch.awaitCompletion(DEADLINE);
    }

    private static TierStatus exists(final StorageTier tier, final PageKey key)
    {
        final RecordingTierBatch batch = RecordingTierBatch.ofKeys("exists", List.of(key));
        tier.exists(batch);
        return batch.awaitCompletion(DEADLINE).status(0);
    }
}
