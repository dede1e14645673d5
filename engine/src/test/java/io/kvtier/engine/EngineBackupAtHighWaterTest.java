package io.kvtier.engine;

import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.operations.EngineOperations;
import io.kvtier.engine.status.EngineCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;

import static io.kvtier.engine.EngineFixture.awaitTrue;
import static io.kvtier.engine.EngineFixture.intact;
import static io.kvtier.engine.EngineFixture.keys;
import static io.kvtier.engine.EngineFixture.write;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Backups into a tier that evicts by itself, when its usage lands exactly on its high water level.
 */
class EngineBackupAtHighWaterTest
{
    /** Bytes of one page's file in a POSIX tier: the 4 KiB payload and the 4 KiB frame trailer block. */
    private static final long OBJECT = 8192;

    /**
     * A POSIX tier starts evicting only when its used bytes are above its high water level, so a tier whose
     * usage lands exactly on the level (here 5 files of 8 KiB in 80 KiB at evict-high 0.5) evicts only once a
     * write takes it over. The engine refused backups there as {@code target_full} (fill at or above the
     * level) and so no write ever came: new pages never reached L3 again (found by the migration benchmark's
     * author; EngineAllocationTest's POSIX case, exactly 90 frames of 100 at evict-high 0.9, hit it under
     * load). The last tier, and any self-evicting tier no migration drains, now take every backup.
     */
    @Test
    void shouldKeepBackingUpIntoASelfEvictingTierWhoseUsageIsExactlyAtItsHighWaterLevel(@TempDir final Path dir) throws Exception
    {
        final Map<String, String> settings = EngineFixture.settings(null, 64);
        settings.put("tier.disk.type", "posix");
        settings.put("tier.disk.dir", dir.toString());
        settings.put("tier.disk.capacity", String.valueOf(10 * OBJECT));
        settings.put("tier.disk.evict-high", "0.5");
        settings.put("tier.disk.evict-low", "0.3");
        settings.put("tier.disk.fanout-levels", "1");
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            keys(session, 190, 7);
            assertThat(write(session, 0, 5)).isEqualTo(5);
            assertThat(session.flush()).isZero();
            final EngineOperations operations = engine.operations();
            awaitTrue(() -> operations.tiers().getFirst().usedBytes() == 5 * OBJECT,
                "the engine to see the tier's 5 files (40 KiB, its high water level)");
            // Two new pages: the first takes the tier above its level, and it evicts its oldest files down to 24 KiB (3 files).
            assertThat(write(session, 5, 2)).isEqualTo(2);
            assertThat(session.flush()).isZero();
            final Map<EngineCounter, Long> counters = engine.snapshot();
            assertThat(counters.get(EngineCounter.ADMISSION_TARGET_FULL)).as("backups refused as target_full by a tier that makes room itself")
                .isZero();
            assertThat(counters.get(EngineCounter.BACKUPS_COMPLETED)).isEqualTo(7);
            // The two newest pages must be in L3: dropped from the pool, they load back byte-exact.
            session.evict(5, 2);
            assertThat(session.acquire(5, 2)).as("pages 5 and 6 loaded back from L3").isEqualTo(2);
            for (int i = 5; i < 7; i++)
            {
                assertThat(session.status(i)).isNotEqualTo(PageEntryStatus.MISS);
                assertThat(intact(session, i)).as("page %d", i).isTrue();
            }
            session.release();
        }
    }
}
