package io.kvtier.engine;

import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.client.protocol.RequestDescriptor;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.status.EngineCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

import java.util.Map;

import static io.kvtier.engine.EngineFixture.awaitTrue;
import static io.kvtier.engine.EngineFixture.fill;
import static io.kvtier.engine.EngineFixture.intact;
import static io.kvtier.engine.EngineFixture.keys;
import static io.kvtier.engine.EngineFixture.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The in-process session's combined requests (docs/ipc-protocol.md section 4, version 1.3): a
 * lookupAndLock pins exactly the committed prefix and reserves pages after it, up to its limit, with a
 * full pool answered per key; a commitAndRelease drops the pins and publishes the reservations; the pins
 * and reservations are leased as an acquire's and a reserve's are.
 */
class SessionCombinedRequestsTest
{
    @Test
    void lookupAndLockPinsTheCommittedPrefixAndReservesTheRestThenCommitAndReleaseEndsBoth() throws Exception
    {
        try (Engine engine = EngineFixture.start(EngineFixture.settings(null, 32));
             Session writer = engine.openSession();
             Session session = engine.openSession())
        {
            keys(writer, 7, 6);
            assertThat(write(writer, 0, 3)).isEqualTo(3);
            keys(session, 7, 6);

            assertThat(session.lookupAndLock(0, 6, RequestDescriptor.RESERVE_ALL)).as("the committed prefix").isEqualTo(3);
            assertThat(session.reservedPages()).isEqualTo(3);
            assertThat(session.acquiredFromPool()).isEqualTo(3);
            for (int i = 0; i < 3; i++)
            {
                assertThat(session.status(i)).isEqualTo(PageEntryStatus.PINNED);
                assertThat(intact(session, i)).as("pinned page %d holds its key's bytes", i).isTrue();
                assertThat(session.status(i + 3)).isEqualTo(PageEntryStatus.RESERVED);
                fill(session, i + 3);
            }
            // A reservation is invisible until committed.
            assertThat(writer.acquire(0, 6)).isEqualTo(3);
            writer.release();

            assertThat(session.commitAndRelease(0, 6, false)).isEqualTo(3);
            assertThat(session.releasedPins()).isEqualTo(3);
            for (int i = 0; i < 3; i++)
            {
                assertThat(session.status(i)).isEqualTo(PageEntryStatus.NONE);
                assertThat(session.status(i + 3)).isEqualTo(PageEntryStatus.COMMITTED);
            }
            assertThat(writer.acquire(0, 6)).isEqualTo(6);
            for (int i = 0; i < 6; i++)
            {
                assertThat(intact(writer, i)).as("page %d", i).isTrue();
            }
            writer.release();
            // Nothing is pinned any more: every page can go.
            assertThat(writer.evict(0, 6)).isEqualTo(6);
        }
    }

    @Test
    void theReserveLimitBoundsTheReservationsAndTheKeysPastItAreMisses() throws Exception
    {
        try (Engine engine = EngineFixture.start(EngineFixture.settings(null, 32));
             Session session = engine.openSession())
        {
            keys(session, 9, 5);
            assertThat(write(session, 0, 1)).isEqualTo(1);
            assertThat(session.lookupAndLock(0, 5, 2)).isEqualTo(1);
            assertThat(session.reservedPages()).isEqualTo(2);
            assertThat(new int[] {session.status(0), session.status(1), session.status(2), session.status(3), session.status(4)}).containsExactly(
                PageEntryStatus.PINNED, PageEntryStatus.RESERVED, PageEntryStatus.RESERVED, PageEntryStatus.MISS, PageEntryStatus.MISS);
            assertThat(session.pageId(3)).isEqualTo(-1);
            session.abort(0, 5);
            session.release();

            assertThat(session.lookupAndLock(0, 5, 0)).as("a limit of 0 is an acquire").isEqualTo(1);
            assertThat(session.reservedPages()).isZero();
            assertThat(session.status(1)).isEqualTo(PageEntryStatus.MISS);
            session.release();

            assertThrows(IllegalArgumentException.class, () -> session.lookupAndLock(0, 5, 6));
            assertThrows(IllegalArgumentException.class, () -> session.lookupAndLock(0, 5, -2));
            session.reserve(1, 1);
            final IllegalStateException held = assertThrows(IllegalStateException.class, () -> session.lookupAndLock(0, 5, RequestDescriptor.RESERVE_ALL));
            assertThat(held).hasMessageContaining("key 1 holds a reservation");
            session.abort(1, 1);
        }
    }

    @Test
    void aPoolThatFillsMidwayKeepsTheReservationsMadeAndNamesTheRestPoolFull() throws Exception
    {
        final Map<String, String> settings = EngineFixture.settings(null, 4);
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            keys(session, 11, 7);
            assertThat(write(session, 0, 1)).isEqualTo(1);
            final int pinned = session.lookupAndLock(0, 7, RequestDescriptor.RESERVE_ALL);
            assertThat(pinned).isEqualTo(1);
            final int reserved = session.reservedPages();
            assertThat(reserved).as("three free pages besides the pinned one").isEqualTo(3);
            for (int i = 1; i <= reserved; i++)
            {
                assertThat(session.status(i)).isEqualTo(PageEntryStatus.RESERVED);
                fill(session, i);
            }
            for (int i = 1 + reserved; i < 7; i++)
            {
                assertThat(session.status(i)).as("key %d", i).isEqualTo(PageEntryStatus.POOL_FULL);
                assertThat(session.pageId(i)).isEqualTo(-1);
            }
            assertThat(session.commitAndRelease(0, 7, false)).isEqualTo(reserved);
            assertThat(session.acquire(0, 7)).isEqualTo(1 + reserved);
            session.release();
        }
    }

    @Test
    void pagesInL3ArePinnedOnceLoadedAndVerifiedAndBackupCopiesTheCommittedPages(final TestInfo info) throws Exception
    {
        final String tier = "t" + Integer.toHexString(info.getDisplayName().hashCode() & 0xFFFFFF);
        final Map<String, String> settings = EngineFixture.settings(tier, 32);
        // No copy on commit of its own: only a BACKUP (or the flag) puts a page in L3.
        settings.put("policy.write", "none");
        settings.put(EngineConfig.POLICY_PREFETCH, "off");
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            keys(session, 13, 6);
            assertThat(write(session, 0, 2)).isEqualTo(2);
            session.backup(0, 2);
            assertThat(session.flush()).isZero();
            assertThat(ScriptedTier.get(tier).objects).hasSize(2);
            assertThat(session.evict(0, 2)).isEqualTo(2);
            assertThat(session.lookupAndLock(0, 4, RequestDescriptor.RESERVE_ALL)).isEqualTo(2);
            assertThat(session.acquiredFromL3()).isEqualTo(2);
            assertThat(session.status(0)).isEqualTo(PageEntryStatus.PINNED_FROM_L3);
            assertThat(intact(session, 0)).isTrue();
            assertThat(intact(session, 1)).isTrue();
            assertThat(session.reservedPages()).isEqualTo(2);
            fill(session, 2);
            fill(session, 3);
            assertThat(session.commitAndRelease(0, 4, true)).isEqualTo(2);
            assertThat(session.flush()).isZero();
            assertThat(ScriptedTier.get(tier).objects).as("the two pages committed with BACKUP copied").hasSize(4)
                .containsKey(EngineFixture.pageKey(session, 3));

            assertThat(session.lookupAndLock(4, 2, RequestDescriptor.RESERVE_ALL)).isZero();
            fill(session, 4);
            fill(session, 5);
            assertThat(session.commitAndRelease(4, 2, false)).isEqualTo(2);
            assertThat(session.flush()).isZero();
            assertThat(ScriptedTier.get(tier).objects).as("without the flag, nothing copied").hasSize(4);
        }
    }

    @Test
    void aSilentSessionsLockedPinsAndReservationsAreReclaimed() throws Exception
    {
        final Map<String, String> settings = EngineFixture.settings(null, 16);
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
            assertThat(idle.lookupAndLock(0, 4, RequestDescriptor.RESERVE_ALL)).isEqualTo(2);
            fill(idle, 2);
            fill(idle, 3);
            keys(other, 48, 4);
            clock.advance(java.time.Duration.ofMillis(600));
            other.keepAlive();
            clock.advance(java.time.Duration.ofMillis(600));
            // 1.2 s of silence for the idle session, 0.6 s for the other.
            awaitTrue(() -> engine.snapshot().get(EngineCounter.SESSIONS_EXPIRED) == 1, "lease expiry");
            // Its pins are gone (the pages can be evicted) and its half-written pages never became visible.
            assertThat(other.evict(0, 2)).isEqualTo(2);
            assertThat(other.lookup(0, 4)).isZero();
            final SessionException expired = assertThrows(SessionException.class, () -> idle.commitAndRelease(0, 4, false));
            assertThat(expired.status()).isEqualTo(ErrorCode.LEASE_EXPIRED);
        }
    }
}
