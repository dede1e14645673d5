package io.kvtier.engine;

import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.config.WaitStrategyKind;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.spi.PageKey;
import io.kvtier.spi.TierStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.Map;

import static io.kvtier.engine.EngineFixture.intact;
import static io.kvtier.engine.EngineFixture.keys;
import static io.kvtier.engine.EngineFixture.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Branches that only run when something goes wrong or a limit is reached, each run at least once. */
class EngineFailureBranchTest
{
    private static String tierName(final TestInfo info)
    {
        return "f" + Integer.toHexString(info.getDisplayName().hashCode() & 0xFFFFFF);
    }

    @ParameterizedTest
    @EnumSource(WaitStrategyKind.class)
    void shouldServeRequestsWithEveryWaitStrategy(final WaitStrategyKind strategy) throws Exception
    {
        final Map<String, String> settings = EngineFixture.settings(null, 16);
        settings.put(EngineConfig.PIPELINE_WAIT_STRATEGY, strategy.configName());
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            keys(session, 80, 4);
            assertThat(write(session, 0, 4)).isEqualTo(4);
            for (int round = 0; round < 200; round++)
            {
                assertThat(session.acquire(0, 4)).isEqualTo(4);
                session.release();
            }
            assertThat(intact(sessionWithPins(session), 0)).isTrue();
            session.release();
            assertThat(engine.config().waitStrategy()).isEqualTo(strategy);
        }
    }

    private static Session sessionWithPins(final Session session)
    {
        session.acquire(0, 1);
        return session;
    }

    @Test
    void shouldRejectARequestForMoreKeysThanSessionMaxKeys() throws Exception
    {
        final Map<String, String> settings = EngineFixture.settings(null, 16);
        settings.put(EngineConfig.SESSION_MAX_KEYS, "8");
        settings.put(EngineConfig.L3_PROBE_PAGES, "8");
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            keys(session, 81, 8);
            assertThat(session.keys().capacity()).isEqualTo(8);
            assertThatThrownBy(() -> session.keys().add(1, 2)).isInstanceOf(IllegalStateException.class).hasMessageContaining("8 keys");
            assertThatThrownBy(() -> session.lookup(4, 5)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("[4, 9)");
            assertThatThrownBy(() -> session.release(0, 9)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("8 key slots");
            assertThat(session.lookup(0, 8)).isZero();
        }
    }

    @Test
    void shouldStartLoadsWithPrefetchAndCountTheirPagesOnceUsed(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        final Map<String, String> settings = EngineFixture.settings(name, 32);
        settings.put(EngineConfig.POLICY_PREFETCH, "off");
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            keys(session, 82, 6);
            write(session, 0, 6);
            session.flush();
            assertThat(session.evict(2, 4)).isEqualTo(4);
            assertThat(session.prefetch(0, 6)).as("loads started for the L3 part").isEqualTo(4);
            EngineFixture.awaitTrue(() -> engine.snapshot().get(EngineCounter.L3_PAGES_LOADED) == 4, "prefetched pages land");
            assertThat(session.prefetch(0, 6)).as("nothing left to load").isZero();
            assertThat(session.acquire(0, 6)).isEqualTo(6);
            assertThat(session.acquiredFromPool()).isEqualTo(2);
            assertThat(session.acquiredFromL3()).as("prefetched pages count as L3 hits at first use").isEqualTo(4);
            session.release();
        }
    }

    @Test
    void shouldCountReadErrorsAndTryNoOtherPageAfterThem(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        final Map<String, String> settings = EngineFixture.settings(name, 32);
        settings.put(EngineConfig.POLICY_PREFETCH, "off");
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            keys(session, 83, 4);
            write(session, 0, 4);
            session.flush();
            session.evict(0, 4);
            final ScriptedTier tier = ScriptedTier.get(name);
            tier.readFailures.put(new PageKey(session.keys().high(2), session.keys().low(2)), TierStatus.IO_ERROR);
            assertThat(session.acquire(0, 4)).as("the prefix ends at the page that failed").isEqualTo(2);
            assertThat(session.status(2)).isEqualTo(PageEntryStatus.MISS);
            assertThat(engine.snapshot().get(EngineCounter.L3_ERRORS)).isEqualTo(1);
            // An I/O error leaves the tier's hold on the page uncertain: it rests in quarantine.
            assertThat(engine.snapshot().get(EngineCounter.PAGES_QUARANTINED)).isEqualTo(1);
            session.release();
        }
    }

    @Test
    void shouldForgetL3OnlyKeysWhenTheIndexIsFullAndFindThemAgainByProbing(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        final Map<String, String> settings = EngineFixture.settings(name, 16);
        settings.put(EngineConfig.POLICY_PREFETCH, "off");
        settings.put(EngineConfig.INDEX_ENTRIES, "32");
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            // 48 pages through a pool of 16 and an index of 32: 32 are known only from L3, twice what fits.
            keys(session, 84, 48);
            for (int i = 0; i < 48; i += 8)
            {
                assertThat(write(session, i, 8)).isEqualTo(8);
                session.flush();
            }
            assertThat(ScriptedTier.get(name).objects).hasSize(48);
            session.evict(0, 48);
            // The early keys were forgotten to make room; a lookup finds them again by probing.
            EngineFixture.awaitTrue(() -> engine.snapshot().get(EngineCounter.INDEX_FORGOTTEN) > 0, "the count of forgotten keys is published");
            assertThat(session.lookup(0, 8)).isEqualTo(8);
            assertThat(engine.snapshot().get(EngineCounter.PROBE_HITS)).isPositive();
            assertThat(session.acquire(0, 8)).isEqualTo(8);
            for (int i = 0; i < 8; i++)
            {
                assertThat(intact(session, i)).isTrue();
            }
            session.release();
        }
    }

    @Test
    void shouldCountProbeHitsTheIndexHasNoRoomFor(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        final String otherName = name + "o";
        final Map<String, String> settings = EngineFixture.settings(name, 16);
        settings.put(EngineConfig.POLICY_PREFETCH, "off");
        // It stands in for a directory other engines write: shared, so that lookups probe it.
        settings.put("tier." + name + ".shared", "true");
        // Room for the pool's own pages only: nothing known from L3 alone can be remembered.
        settings.put(EngineConfig.INDEX_ENTRIES, "16");
        try (Engine other = EngineFixture.start(EngineFixture.settings(otherName, 16));
             Session otherSession = other.openSession();
             Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            keys(otherSession, 85, 4);
            write(otherSession, 0, 4);
            otherSession.flush();
            ScriptedTier.get(name).objects.putAll(ScriptedTier.get(otherName).objects);
            keys(session, 85, 4);
            assertThat(session.lookup(0, 4)).as("found, but nowhere to remember it").isZero();
            assertThat(engine.snapshot().get(EngineCounter.PROBE_HITS)).isEqualTo(4);
            assertThat(engine.snapshot().get(EngineCounter.INDEX_FULL)).isEqualTo(4);
        }
    }
}
