package io.kvtier.engine;

import io.kvtier.engine.core.Pipeline;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.spi.TierStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

import static io.kvtier.engine.EngineFixture.awaitTrue;
import static io.kvtier.engine.EngineFixture.intact;
import static io.kvtier.engine.EngineFixture.keys;
import static io.kvtier.engine.EngineFixture.write;
import static org.assertj.core.api.Assertions.assertThat;

/** Failures an adversary found by hand, each kept as a test. */
class EngineHardeningTest
{
    private static String tierName(final TestInfo info)
    {
        return "h" + Integer.toHexString(info.getDisplayName().hashCode() & 0xFFFFFF);
    }

    @Test
    void shouldNeverServeALateWritersBytesAfterItsSessionExpired() throws Exception
    {
        final Map<String, String> settings = EngineFixture.settings(null, 8);
        settings.put(EngineConfig.LEASE_SESSION_TIMEOUT, "300ms");
        settings.put(EngineConfig.LEASE_RESERVATION_TIMEOUT, "300ms");
        final ManualClock clock = new ManualClock();
        try (Engine engine = EngineFixture.start(settings, clock);
             Session dead = engine.openSession();
             Session writer = engine.openSession())
        {
            keys(dead, 60, 4);
            assertThat(dead.reserve(0, 4)).isEqualTo(4);
            final MemorySegment[] stale = new MemorySegment[4];
            for (int i = 0; i < 4; i++)
            {
                stale[i] = dead.page(i);
            }
            clock.advance(java.time.Duration.ofMillis(200));
            writer.keepAlive();
            clock.advance(java.time.Duration.ofMillis(200));
            awaitTrue(() -> engine.snapshot().get(EngineCounter.SESSIONS_EXPIRED) == 1, "the silent session's lease expires");
            assertThat(engine.snapshot().get(EngineCounter.PAGES_QUARANTINED)).as("its reservations rest in quarantine").isEqualTo(4);
            // Another client fills the pool while the dead session's pages are reclaimed.
            keys(writer, 61, 4);
            final int committed = write(writer, 0, 4);
            // The dead client wakes up and finishes writing through the slices it still has.
            for (final MemorySegment page : stale)
            {
                page.fill((byte)0x6B);
            }
            assertThat(writer.acquire(0, committed)).isEqualTo(committed);
            for (int i = 0; i < committed; i++)
            {
                assertThat(intact(writer, i)).as("page %d of the live writer", i).isTrue();
            }
            writer.release();
        }
    }

    @Test
    void shouldQuarantineALiveReservationOfASessionThatExpired(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        final Map<String, String> settings = writeBack(name, 8);
        settings.put(EngineConfig.LEASE_SESSION_TIMEOUT, "300ms");
        settings.put(EngineConfig.LEASE_RESERVATION_TIMEOUT, "300ms");
        final ManualClock clock = new ManualClock();
        try (Engine engine = EngineFixture.start(settings, clock);
             Session filler = engine.openSession();
             Session waiter = engine.openSession())
        {
            keys(filler, 65, 8);
            assertThat(write(filler, 0, 8)).isEqualTo(8);
            final java.util.concurrent.CountDownLatch gate = ScriptedTier.get(name).holdWrites();
            // The pool is full of pages L3 lacks: a reserve waits for their write-back evictions.
            keys(waiter, 66, 2);
            final var reserved = EngineFixture.async(() -> waiter.reserve(0, 2));
            awaitTrue(() -> engine.snapshot().get(EngineCounter.BACKUPS_IN_FLIGHT) > 0, "write-back evictions start");
            clock.advance(java.time.Duration.ofMillis(100));
            filler.keepAlive();
            gate.countDown();
            assertThat(reserved.get(30, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo(2);
            // Its reservations date from when space came (+100 ms), its last request from before: at
            // +350 ms the session has expired while both reservations still run.
            clock.advance(java.time.Duration.ofMillis(250));
            awaitTrue(() -> engine.snapshot().get(EngineCounter.SESSIONS_EXPIRED) == 1, "the waiter's lease expires");
            assertThat(engine.snapshot().get(EngineCounter.RESERVATIONS_EXPIRED)).isEqualTo(2);
            assertThat(engine.snapshot().get(EngineCounter.PAGES_QUARANTINED)).as("reclaimed with the session, the pages rest").isEqualTo(2);
        }
    }

    private static Map<String, String> writeBack(final String name, final int pages)
    {
        final Map<String, String> settings = EngineFixture.settings(name, pages);
        settings.put(EngineConfig.POLICY_WRITE, "write-back");
        settings.put(EngineConfig.POLICY_PREFETCH, "off");
        // These follow copies made when eviction reaches a page, not ahead of it.
        settings.put(EngineConfig.POLICY_WRITE_BACK_CLEAN_AHEAD, "false");
        return settings;
    }

    private static int present(final Session session, final int keys)
    {
        int present = 0;
        for (int i = 0; i < keys; i++)
        {
            present += session.lookup(i, 1);
        }
        return present;
    }

    @Test
    void shouldKeepAWriteBackPageWhoseBackupFailedAndCopyItOnRetry(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        try (Engine engine = EngineFixture.start(writeBack(name, 8));
             Session session = engine.openSession())
        {
            final ScriptedTier tier = ScriptedTier.get(name);
            tier.writeFailuresLeft.set(2);
            tier.writeFailure = TierStatus.NO_SPACE;
            keys(session, 62, 12);
            // Past the high water level each reserve evicts, and write-back copies each victim first.
            assertThat(write(session, 0, 8)).isEqualTo(8);
            assertThat(write(session, 8, 4)).isEqualTo(4);
            session.flush();
            assertThat(engine.snapshot().get(EngineCounter.BACKUPS_FAILED)).isEqualTo(2);
            // Every page written is still somewhere, in the pool or in L3, and nothing was dropped.
            assertThat(present(session, 12)).isEqualTo(12);
            assertThat(engine.snapshot().get(EngineCounter.BACKUPS_LOST)).isZero();
            for (int i = 0; i < 12; i++)
            {
                assertThat(session.acquire(i, 1)).as("page %d", i).isEqualTo(1);
                assertThat(intact(session, i)).as("page %d", i).isTrue();
                session.release();
            }
        }
    }

    @Test
    void shouldCountAndReportEveryWriteBackPageDroppedWithoutACopy(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        try (Engine engine = EngineFixture.start(writeBack(name, 8));
             Session session = engine.openSession())
        {
            ScriptedTier.get(name).writeFailure = TierStatus.IO_ERROR;
            keys(session, 64, 12);
            assertThat(write(session, 0, 8)).isEqualTo(8);
            assertThat(write(session, 8, 4)).isEqualTo(4);
            session.flush();
            final long lost = engine.snapshot().get(EngineCounter.BACKUPS_LOST);
            assertThat(lost).as("pages dropped once their backups failed " + Pipeline.MAX_BACKUP_ATTEMPTS + " times").isPositive();
            assertThat(present(session, 12) + lost).as("pages present plus pages reported lost").isEqualTo(12);
            assertThat(engine.snapshot().get(EngineCounter.BACKUPS_FAILED)).isGreaterThanOrEqualTo(lost * Pipeline.MAX_BACKUP_ATTEMPTS);
        }
    }

    @Test
    void shouldFindAnL3ChainByAcquireAloneAfterARestart(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        final String writerName = name + "w";
        final Map<String, String> settings = EngineFixture.settings(name, 512);
        settings.put(EngineConfig.POLICY_PREFETCH, "off");
        // It stands in for a directory other engines write: shared, so that lookups probe it.
        settings.put("tier." + name + ".shared", "true");
        final int chain = 300;
        try (Engine writer = EngineFixture.start(EngineFixture.settings(writerName, 512));
             Session written = writer.openSession();
             Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            keys(written, 63, chain);
            write(written, 0, chain);
            written.flush();
            // A restarted engine over the same L3 (copying the objects stands in for a shared or surviving
            // directory): its index knows nothing, and the client acquires without looking up first.
            ScriptedTier.get(name).objects.putAll(ScriptedTier.get(writerName).objects);
            keys(session, 63, chain);
            assertThat(session.acquire(0, chain)).isEqualTo(chain);
            assertThat(session.acquiredFromL3()).isEqualTo(chain);
            for (int i = 0; i < chain; i++)
            {
                assertThat(intact(session, i)).as("page %d", i).isTrue();
            }
            session.release();
        }
    }

    @Test
    void shouldLeaveNoStrayWakeUpPermitAfterARequest() throws Exception
    {
        try (Engine engine = EngineFixture.start(EngineFixture.settings(null, 4));
             Session session = engine.openSession())
        {
            for (int i = 0; i < 100; i++)
            {
                session.keepAlive();
            }
            // With a permit left over, this park returns at once; without, it sleeps its full time
            // (a lower bound that a slow machine cannot break).
            final long start = System.nanoTime();
            LockSupport.parkNanos(200_000_000L);
            assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(150_000_000L);
        }
    }
}
