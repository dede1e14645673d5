package io.kvtier.engine;

import io.kvtier.client.pool.PageStateWord;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.config.EngineSettings;
import io.kvtier.engine.status.EngineCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static io.kvtier.engine.EngineFixture.awaitTrue;
import static io.kvtier.engine.EngineFixture.intact;
import static io.kvtier.engine.EngineFixture.keys;
import static io.kvtier.engine.EngineFixture.write;
import static org.assertj.core.api.Assertions.assertThat;

/** Write policies, prefetch modes and leases. */
class EnginePolicyTest
{
    private static String tierName(final TestInfo info)
    {
        return "p" + Integer.toHexString(info.getDisplayName().hashCode() & 0xFFFFFF);
    }

    private static Map<String, String> settings(final String tier, final int pages, final String writePolicy, final String prefetch)
    {
        final Map<String, String> settings = EngineFixture.settings(tier, pages);
        settings.put(EngineConfig.POLICY_WRITE, writePolicy);
        settings.put(EngineConfig.POLICY_PREFETCH, prefetch);
        return settings;
    }

    @Test
    void shouldBackUpOnCommitWithWriteThrough(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        try (Engine engine = EngineFixture.start(settings(name, 32, "write-through", "off"));
             Session session = engine.openSession())
        {
            keys(session, 40, 5);
            write(session, 0, 5);
            session.flush();
            assertThat(ScriptedTier.get(name).objects).hasSize(5);
            assertThat(engine.snapshot().get(EngineCounter.BACKUPS_COMPLETED)).isEqualTo(5);
            // Pages already in L3 are not written again.
            assertThat(session.backup(0, 5)).isZero();
        }
    }

    @Test
    void shouldBackUpOnlyPagesHitEnoughWithWriteThroughSelective(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        final Map<String, String> settings = settings(name, 32, "write-through-selective", "off");
        settings.put(EngineConfig.POLICY_WRITE_HIT_THRESHOLD, "2");
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            keys(session, 41, 4);
            write(session, 0, 4);
            session.flush();
            assertThat(ScriptedTier.get(name).objects).isEmpty();
            session.acquire(0, 2);
            session.release();
            session.flush();
            assertThat(ScriptedTier.get(name).objects).isEmpty();
            session.acquire(0, 1);
            session.release();
            session.flush();
            assertThat(ScriptedTier.get(name).objects).containsOnlyKeys(EngineFixture.pageKey(session, 0));
        }
    }

    @Test
    void shouldBackUpOnEvictionWithWriteBackAndKeepTheSourcePinnedUntilItEnds(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        final Map<String, String> settings = settings(name, 10, "write-back", "off");
        settings.put(EngineConfig.POOL_EVICT_HIGH, "0.8");
        settings.put(EngineConfig.POOL_EVICT_LOW, "0.5");
        settings.put(EngineConfig.L3_MAX_BACKUP_PAGES, "10");
        // The copy at eviction itself, not one made ahead of it.
        settings.put(EngineConfig.POLICY_WRITE_BACK_CLEAN_AHEAD, "false");
        // Which four pages go first is LRU's answer; the default policy's order is tested on its own.
        settings.put(EngineConfig.POLICY_EVICTION, "lru");
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            keys(session, 42, 12);
            write(session, 0, 8);
            assertThat(ScriptedTier.get(name).objects).isEmpty();
            final CountDownLatch gate = ScriptedTier.get(name).holdWrites();
            // The 9th page takes the pool past its high water (8 of 10): evicting down to the low water (5)
            // means the four oldest pages start backups, and stay pinned until they end.
            write(session, 8, 1);
            awaitTrue(() -> engine.snapshot().get(EngineCounter.BACKUPS_IN_FLIGHT) == 4, "four backups in flight");
            for (int i = 0; i < 4; i++)
            {
                final int page = pageOf(engine, session, i);
                assertThat(PageStateWord.pins(engine.pool().metadata().stateWordAcquire(page))).as("pins of page %d", i).isEqualTo(1);
            }
            assertThat(session.evict(0, 4)).isZero();
            assertThat(ScriptedTier.get(name).objects).isEmpty();
            gate.countDown();
            session.flush();
            assertThat(ScriptedTier.get(name).objects)
                .containsOnlyKeys(EngineFixture.pageKey(session, 0), EngineFixture.pageKey(session, 1), EngineFixture.pageKey(session, 2), EngineFixture.pageKey(session, 3));
            assertThat(engine.snapshot().get(EngineCounter.PAGES_IN_USE)).isEqualTo(5);
            assertThat(session.lookup(0, 3)).isEqualTo(3);
            assertThat(session.l2Pages()).isZero();
            assertThat(session.acquire(0, 3)).isEqualTo(3);
            for (int i = 0; i < 3; i++)
            {
                assertThat(intact(session, i)).isTrue();
            }
            session.release();
        }
    }

    private static int pageOf(final Engine engine, final Session session, final int key)
    {
        final var table = engine.pool().index();
        return table.value(table.find(session.keys().high(key), session.keys().low(key)));
    }

    /**
     * Write-back with clean-ahead: the engine copies the coldest pages in its idle time, so the
     * evictions that make room for later commits find them in L3 and none waits for a copy; every page written
     * is then served, from the pool or from L3, intact.
     */
    @Test
    void shouldCopyWriteBackPagesAheadOfEvictionSoThatNoEvictionWaits(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        final Map<String, String> settings = settings(name, 64, "write-back", "off");
        // Room for every copy of the window (the 16 coldest pages of 64) at once: a look never stops for lack of it.
        settings.put(EngineConfig.L3_MAX_BACKUP_PAGES, "64");
        settings.put(EngineConfig.POLICY_WRITE_BACK_CLEAN_AHEAD, "true");
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            keys(session, 47, 96);
            // 56 of 64 pages: past the mark where cleaning starts (pool.evict-low less the gap between the levels), below high water.
            assertThat(write(session, 0, 56)).isEqualTo(56);
            awaitTrue(() -> engine.snapshot().get(EngineCounter.BACKUPS_CLEANED_AHEAD) == 16 && engine.snapshot().get(EngineCounter.BACKUPS_IN_FLIGHT) == 0,
                "the 16 coldest pages copied ahead in the engine's idle time");
            assertThat(ScriptedTier.get(name).objects).hasSize(16);
            for (int from = 56; from < 96; from += 8)
            {
                assertThat(write(session, from, 8)).as("commit of keys %d to %d", from, from + 7).isEqualTo(8);
                // The eviction that made room copied the window past it; those copies land before the next one.
                awaitTrue(() -> engine.snapshot().get(EngineCounter.BACKUPS_IN_FLIGHT) == 0, "the copies ahead landed");
            }
            assertThat(engine.snapshot().get(EngineCounter.PAGES_EVICTED)).as("evictions made room").isPositive();
            assertThat(engine.snapshot().get(EngineCounter.EVICTIONS_HELD)).as("evictions that waited for a copy").isZero();
            for (int i = 0; i < 96; i++)
            {
                assertThat(session.acquire(i, 1)).as("key %d served", i).isEqualTo(1);
                assertThat(intact(session, i)).as("key %d intact", i).isTrue();
                session.release();
            }
        }
    }

    @Test
    void shouldMakeAReserveWaitForWriteBackEvictionsInsteadOfFailing(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        final Map<String, String> settings = settings(name, 4, "write-back", "off");
        settings.put(EngineConfig.POOL_EVICT_HIGH, "1.0");
        settings.put(EngineConfig.POOL_EVICT_LOW, "0.5");
        settings.put(EngineConfig.L3_MAX_BACKUP_PAGES, "4");
        settings.put(EngineConfig.POLICY_WRITE_BACK_CLEAN_AHEAD, "false");
        final ExecutorService executor = Executors.newSingleThreadExecutor();
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            keys(session, 43, 6);
            write(session, 0, 4);
            final CountDownLatch gate = ScriptedTier.get(name).holdWrites();
            final Future<Integer> reserved = executor.submit(() -> session.reserve(4, 1));
            awaitTrue(() -> engine.snapshot().get(EngineCounter.BACKUPS_IN_FLIGHT) == 2, "evictions waiting on backups");
            assertThat(reserved).isNotDone();
            gate.countDown();
            assertThat(reserved.get()).isEqualTo(1);
            assertThat(session.status(4)).isEqualTo(PageEntryStatus.RESERVED);
            session.abort(4, 1);
        }
        finally
        {
            executor.shutdownNow();
        }
    }

    @Test
    void shouldPrefetchInTheBackgroundWithBestEffort(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        final Map<String, String> settings = settings(name, 32, "write-through", "best-effort");
        settings.put(EngineConfig.POLICY_PREFETCH_THRESHOLD, "2");
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            keys(session, 44, 6);
            write(session, 0, 6);
            session.flush();
            session.evict(0, 6);
            final CountDownLatch gate = ScriptedTier.get(name).holdReads();
            assertThat(session.lookup(0, 6)).isEqualTo(6);
            assertThat(session.l2Pages()).isZero();
            gate.countDown();
            awaitTrue(() -> engine.snapshot().get(EngineCounter.PREFETCH_PAGES) == 6, "prefetch lands");
            assertThat(session.lookup(0, 6)).isEqualTo(6);
            assertThat(session.l2Pages()).isEqualTo(6);
        }
    }

    @Test
    void shouldNotPrefetchBelowTheThreshold(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        final Map<String, String> settings = settings(name, 32, "write-through", "wait-complete");
        settings.put(EngineConfig.POLICY_PREFETCH_THRESHOLD, "4");
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            keys(session, 45, 3);
            write(session, 0, 3);
            session.flush();
            session.evict(0, 3);
            assertThat(session.lookup(0, 3)).isEqualTo(3);
            assertThat(session.l2Pages()).isZero();
            assertThat(engine.snapshot().get(EngineCounter.L3_READS)).isZero();
        }
    }

    @Test
    void shouldAnswerAfterThePrefetchWithWaitComplete(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        final Map<String, String> settings = settings(name, 32, "write-through", "wait-complete");
        settings.put(EngineConfig.POLICY_PREFETCH_THRESHOLD, "2");
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            keys(session, 46, 6);
            write(session, 0, 6);
            session.flush();
            session.evict(2, 4);
            assertThat(session.lookup(0, 6)).isEqualTo(6);
            assertThat(session.l2Pages()).isEqualTo(6);
            assertThat(session.l3Pages()).isZero();
        }
    }

    @Test
    void shouldAnswerAtTheDeadlineWithTimeout(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        final Map<String, String> settings = settings(name, 32, "write-through", "timeout");
        settings.put(EngineConfig.POLICY_PREFETCH_THRESHOLD, "2");
        settings.put(EngineConfig.POLICY_PREFETCH_TIMEOUT, "50ms");
        final ManualClock clock = new ManualClock();
        try (Engine engine = EngineFixture.start(settings, clock);
             Session session = engine.openSession())
        {
            keys(session, 47, 5);
            write(session, 0, 5);
            session.flush();
            session.evict(1, 4);
            final ScriptedTier tier = ScriptedTier.get(name);
            final int readsBefore = tier.reads.get();
            final CountDownLatch gate = tier.holdReads();
            final var lookup = EngineFixture.async(() -> session.lookup(0, 5));
            awaitTrue(() -> tier.reads.get() > readsBefore, "the prefetch reaches the tier");
            assertThat(lookup).as("no answer before the deadline: the loads are held").isNotDone();
            clock.advance(java.time.Duration.ofMillis(50));
            assertThat(lookup.get(30, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo(5);
            assertThat(session.l2Pages()).isEqualTo(1);
            assertThat(session.l3Pages()).isEqualTo(4);
            gate.countDown();
            awaitTrue(() -> engine.snapshot().get(EngineCounter.PREFETCH_PAGES) == 4, "prefetch lands later");
        }
    }

    @Test
    void shouldReclaimAnIdleSessionsPinsAndReservations() throws Exception
    {
        final Map<String, String> settings = EngineFixture.settings(null, 16);
        // Long enough that the active session, renewing between calls, never lapses on a slow machine.
        settings.put(EngineConfig.LEASE_SESSION_TIMEOUT, "1s");
        settings.put(EngineConfig.LEASE_RESERVATION_TIMEOUT, "1s");
        settings.put(EngineConfig.LEASE_QUARANTINE, "0");
        final ManualClock clock = new ManualClock();
        try (Engine engine = EngineFixture.start(settings, clock);
             Session idle = engine.openSession();
             Session other = engine.openSession())
        {
            keys(idle, 48, 4);
            write(idle, 0, 2);
            assertThat(idle.acquire(0, 2)).isEqualTo(2);
            idle.reserve(2, 2);
            EngineFixture.fill(idle, 2);
            keys(other, 48, 4);
            clock.advance(java.time.Duration.ofMillis(600));
            other.keepAlive();
            assertThat(engine.snapshot().get(EngineCounter.SESSIONS_EXPIRED)).as("600 ms of silence is within the lease").isZero();
            clock.advance(java.time.Duration.ofMillis(600));
            // 1.2 s of silence for the idle session, 0.6 s for the other.
            awaitTrue(() -> engine.snapshot().get(EngineCounter.SESSIONS_EXPIRED) == 1, "lease expiry");
            // Its pins are gone (the pages can be evicted) and its half-written pages never became visible.
            assertThat(other.evict(0, 2)).isEqualTo(2);
            assertThat(other.lookup(0, 4)).isZero();
            assertThat(other.reserve(2, 2)).isEqualTo(2);
            other.abort(2, 2);
            final SessionException expired = org.junit.jupiter.api.Assertions.assertThrows(SessionException.class, () -> idle.commit(2, 1));
            assertThat(expired.status()).isEqualTo(ErrorCode.LEASE_EXPIRED);
        }
    }

    @Test
    void shouldReclaimAReservationNotCommittedInTime() throws Exception
    {
        final Map<String, String> settings = EngineFixture.settings(null, 16);
        settings.put(EngineConfig.LEASE_RESERVATION_TIMEOUT, "100ms");
        settings.put(EngineConfig.LEASE_QUARANTINE, "3s");
        final ManualClock clock = new ManualClock();
        try (Engine engine = EngineFixture.start(settings, clock);
             Session slow = engine.openSession();
             Session reader = engine.openSession())
        {
            keys(slow, 49, 1);
            keys(reader, 49, 1);
            assertThat(slow.reserve(0, 1)).isEqualTo(1);
            EngineFixture.fill(slow, 0);
            clock.advance(java.time.Duration.ofMillis(100));
            awaitTrue(() -> engine.snapshot().get(EngineCounter.RESERVATIONS_EXPIRED) == 1, "reservation expiry");
            assertThat(slow.commit(0, 1)).isZero();
            assertThat(slow.status(0)).isEqualTo(PageEntryStatus.EXPIRED);
            assertThat(reader.acquire(0, 1)).isZero();
            // The page rests in quarantine before it is handed out again, for all of the 3 s and no longer.
            assertThat(engine.snapshot().get(EngineCounter.PAGES_QUARANTINED)).isEqualTo(1);
            clock.advance(java.time.Duration.ofMillis(2_999));
            reader.keepAlive();
            assertThat(engine.snapshot().get(EngineCounter.PAGES_QUARANTINED)).isEqualTo(1);
            clock.advance(java.time.Duration.ofMillis(1));
            awaitTrue(() -> engine.snapshot().get(EngineCounter.PAGES_QUARANTINED) == 0, "quarantine ends");
        }
    }

    @Test
    void shouldStillTickWhenTheEngineThreadOnlySpinsAndSoReadsTheClockOnlyNowAndThen() throws Exception
    {
        // The engine thread reads the clock after an idle spin only every few cycles: a reservation must still expire.
        final Map<String, String> settings = EngineFixture.settings(null, 16);
        settings.put(EngineConfig.LEASE_RESERVATION_TIMEOUT, "100ms");
        settings.put(EngineSettings.ENGINE_IDLE_STRATEGY.key(), "spin");
        settings.put(EngineSettings.PIPELINE_TICK.key(), "1ms");
        final ManualClock clock = new ManualClock();
        try (Engine engine = EngineFixture.start(settings, clock);
             Session slow = engine.openSession())
        {
            keys(slow, 50, 1);
            assertThat(slow.reserve(0, 1)).isEqualTo(1);
            EngineFixture.fill(slow, 0);
            clock.advance(java.time.Duration.ofMillis(100));
            awaitTrue(() -> engine.snapshot().get(EngineCounter.RESERVATIONS_EXPIRED) == 1, "reservation expiry on a spinning engine");
            assertThat(slow.commit(0, 1)).isZero();
        }
    }

    @Test
    void shouldLetInFlightBackupsFinishAtShutdown(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        // A clock that never moves: close() cannot give up on the backups, it must wait for them.
        final Engine engine = EngineFixture.start(settings(name, 16, "write-through", "off"), new ManualClock());
        final ScriptedTier tier = ScriptedTier.get(name);
        final CountDownLatch gate = tier.holdWrites();
        try (Session session = engine.openSession())
        {
            keys(session, 50, 3);
            write(session, 0, 3);
        }
        awaitTrue(() -> engine.backupsInFlight() == 3, "backups in flight");
        final Thread closer = Thread.ofPlatform().start(engine::close);
        // close() waits for the backups rather than dropping them; let them land a little later.
        Thread.sleep(100);
        assertThat(closer.isAlive()).isTrue();
        gate.countDown();
        closer.join(30_000);
        assertThat(closer.isAlive()).isFalse();
        assertThat(tier.objects).hasSize(3);
    }

    @Test
    void shouldStopWithinTheTimeoutWhenABackupNeverEnds(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        final Map<String, String> settings = settings(name, 16, "write-through", "off");
        settings.put(EngineConfig.L3_IO_TIMEOUT, "200ms");
        final ManualClock clock = new ManualClock();
        final Engine engine = EngineFixture.start(settings, clock);
        ScriptedTier.get(name).holdWrites();
        try (Session session = engine.openSession())
        {
            keys(session, 51, 2);
            write(session, 0, 2);
        }
        final Thread closer = Thread.ofPlatform().start(engine::close);
        Thread.sleep(100);
        assertThat(closer.isAlive()).as("close waits while l3.io-timeout has not passed").isTrue();
        clock.advance(java.time.Duration.ofMillis(200));
        closer.join(30_000);
        assertThat(closer.isAlive()).as("close returned once l3.io-timeout passed").isFalse();
        assertThat(EngineFixture.poolPath(settings)).doesNotExist();
    }

    @Test
    void shouldPinAtMostMaxBackupPagesAndQueueTheRest(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        final Map<String, String> settings = settings(name, 32, "write-through", "off");
        settings.put(EngineConfig.L3_MAX_BACKUP_PAGES, "4");
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            final ScriptedTier tier = ScriptedTier.get(name);
            final CountDownLatch gate = tier.holdWrites();
            keys(session, 55, 12);
            assertThat(write(session, 0, 12)).isEqualTo(12);
            awaitTrue(() -> engine.snapshot().get(EngineCounter.BACKUPS_IN_FLIGHT) == 4, "four backups in flight");
            assertThat(engine.snapshot().get(EngineCounter.BACKUPS_QUEUED)).isEqualTo(8);
            final var flushed = EngineFixture.async(session::flush);
            gate.countDown();
            assertThat(flushed.get(30, java.util.concurrent.TimeUnit.SECONDS)).isZero();
            assertThat(tier.objects).as("flush waited for the backlog too").hasSize(12);
            assertThat(engine.snapshot().get(EngineCounter.BACKUPS_QUEUED)).isZero();
            assertThat(engine.snapshot().get(EngineCounter.BACKUPS_SKIPPED)).isZero();
        }
    }

    @Test
    void shouldKeepThePoolUsableWhenL3IsSlowerThanTheCommits(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        final Map<String, String> settings = settings(name, 16, "write-through", "off");
        settings.put(EngineConfig.L3_MAX_BACKUP_PAGES, "4");
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            final CountDownLatch gate = ScriptedTier.get(name).holdWrites();
            keys(session, 56, 48);
            // Three pools' worth of commits while L3 takes nothing: only 4 pages are ever pinned by backups,
            // so every reserve finds room, and the copies that never started are counted.
            for (int i = 0; i < 48; i += 8)
            {
                assertThat(write(session, i, 8)).as("commits of keys %d..%d", i, i + 7).isEqualTo(8);
            }
            assertThat(engine.snapshot().get(EngineCounter.BACKUPS_IN_FLIGHT)).isEqualTo(4);
            assertThat(engine.snapshot().get(EngineCounter.RESERVE_POOL_FULL)).isZero();
            assertThat(engine.snapshot().get(EngineCounter.BACKUPS_SKIPPED)).isPositive();
            gate.countDown();
            session.flush();
            final long started = engine.snapshot().get(EngineCounter.BACKUPS_STARTED);
            assertThat(started + engine.snapshot().get(EngineCounter.BACKUPS_SKIPPED)).as("every commit was copied or counted as skipped")
                .isEqualTo(48);
        }
    }
}
