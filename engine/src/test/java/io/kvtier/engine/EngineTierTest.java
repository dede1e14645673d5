package io.kvtier.engine;

import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.spi.PageKey;
import io.kvtier.spi.TierStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

import java.util.Map;
import java.util.concurrent.CountDownLatch;

import static io.kvtier.engine.EngineFixture.awaitTrue;
import static io.kvtier.engine.EngineFixture.intact;
import static io.kvtier.engine.EngineFixture.keys;
import static io.kvtier.engine.EngineFixture.write;
import static org.assertj.core.api.Assertions.assertThat;

/** L3 paths: backups, loads with verification, partial hits, probes, failures. */
class EngineTierTest
{
    private static String tierName(final TestInfo info)
    {
        return "t" + Integer.toHexString(info.getDisplayName().hashCode() & 0xFFFFFF);
    }

    private static Map<String, String> settings(final String tier, final int pages)
    {
        final Map<String, String> settings = EngineFixture.settings(tier, pages);
        settings.put(EngineConfig.POLICY_PREFETCH, "off");
        return settings;
    }

    @Test
    void shouldLoadEvictedPagesFromL3AndVerifyThem(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        try (Engine engine = EngineFixture.start(settings(name, 32));
             Session session = engine.openSession())
        {
            keys(session, 20, 8);
            write(session, 0, 8);
            session.flush();
            assertThat(ScriptedTier.get(name).objects).hasSize(8);
            assertThat(session.evict(0, 8)).isEqualTo(8);
            assertThat(session.lookup(0, 8)).isEqualTo(8);
            assertThat(session.l2Pages()).isZero();
            assertThat(session.l3Pages()).isEqualTo(8);
            assertThat(session.acquire(0, 8)).isEqualTo(8);
            assertThat(session.acquiredFromL3()).isEqualTo(8);
            for (int i = 0; i < 8; i++)
            {
                assertThat(session.status(i)).isEqualTo(PageEntryStatus.PINNED_FROM_L3);
                assertThat(intact(session, i)).as("page %d", i).isTrue();
            }
            session.release();
            assertThat(engine.snapshot().get(EngineCounter.L3_HIT_PAGES)).isEqualTo(8);
            assertThat(engine.snapshot().get(EngineCounter.L3_CORRUPT)).isZero();
        }
    }

    @Test
    void shouldLoadTheL3PartAtTheExactOffsetAfterThePoolPart(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        try (Engine engine = EngineFixture.start(settings(name, 32));
             Session session = engine.openSession())
        {
            keys(session, 21, 10);
            write(session, 0, 10);
            session.flush();
            // Keep pages 0..3 in the pool; pages 4..9 only in L3; page 2 also evicted to make a hole in the pool.
            session.evict(4, 6);
            assertThat(session.lookup(0, 10)).isEqualTo(10);
            assertThat(session.l2Pages()).isEqualTo(4);
            assertThat(session.l3Pages()).isEqualTo(6);
            session.evict(2, 1);
            assertThat(session.lookup(0, 10)).isEqualTo(10);
            assertThat(session.l2Pages()).isEqualTo(2);
            assertThat(session.acquire(0, 10)).isEqualTo(10);
            assertThat(session.acquiredFromPool()).isEqualTo(3);
            assertThat(session.acquiredFromL3()).isEqualTo(7);
            for (int i = 0; i < 10; i++)
            {
                assertThat(intact(session, i)).as("page %d", i).isTrue();
            }
            assertThat(session.status(2)).isEqualTo(PageEntryStatus.PINNED_FROM_L3);
            assertThat(session.status(3)).isEqualTo(PageEntryStatus.PINNED);
            session.release();
        }
    }

    @Test
    void shouldTreatACorruptL3PageAsAMissAndCutThePrefixThere(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        try (Engine engine = EngineFixture.start(settings(name, 32));
             Session session = engine.openSession())
        {
            keys(session, 22, 6);
            write(session, 0, 6);
            session.flush();
            session.evict(0, 6);
            final ScriptedTier tier = ScriptedTier.get(name);
            tier.corrupt(EngineFixture.pageKey(session, 3), 7);
            assertThat(session.acquire(0, 6)).isEqualTo(3);
            assertThat(session.status(3)).isEqualTo(PageEntryStatus.MISS);
            for (int i = 0; i < 3; i++)
            {
                assertThat(intact(session, i)).isTrue();
            }
            session.release();
            assertThat(engine.snapshot().get(EngineCounter.L3_CORRUPT)).isEqualTo(1);
            // The broken object is removed and the index forgets it: a later lookup stops before it.
            awaitTrue(() -> !tier.objects.containsKey(EngineFixture.pageKey(session, 3)), "corrupt object removed");
            assertThat(session.lookup(0, 6)).isEqualTo(3);
        }
    }

    @Test
    void shouldRejectAFrameStoredUnderAnotherKey(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        try (Engine engine = EngineFixture.start(settings(name, 32));
             Session session = engine.openSession())
        {
            keys(session, 23, 2);
            write(session, 0, 2);
            session.flush();
            session.evict(0, 2);
            final ScriptedTier tier = ScriptedTier.get(name);
            // A misdirected object: page 0's key now holds page 1's intact frame.
            tier.objects.put(EngineFixture.pageKey(session, 0), tier.objects.get(EngineFixture.pageKey(session, 1)).clone());
            assertThat(session.acquire(0, 2)).isZero();
            assertThat(engine.snapshot().get(EngineCounter.L3_CORRUPT)).isEqualTo(1);
        }
    }

    @Test
    void shouldTreatAnObjectGoneFromL3AsAMiss(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        try (Engine engine = EngineFixture.start(settings(name, 32));
             Session session = engine.openSession())
        {
            keys(session, 24, 4);
            write(session, 0, 4);
            session.flush();
            session.evict(0, 4);
            ScriptedTier.get(name).objects.remove(EngineFixture.pageKey(session, 2));
            assertThat(session.acquire(0, 4)).isEqualTo(2);
            session.release();
            assertThat(engine.snapshot().get(EngineCounter.L3_READ_MISSES)).isEqualTo(1);
        }
    }

    @Test
    void shouldForgetObjectsATierReportsItDropped(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        final Map<String, String> settings = settings(name, 32);
        settings.put(EngineConfig.L3_PROBE_PAGES, "0");
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            keys(session, 25, 3);
            write(session, 0, 3);
            session.flush();
            session.evict(0, 3);
            assertThat(session.lookup(0, 3)).isEqualTo(3);
            ScriptedTier.get(name).dropOnItsOwn(EngineFixture.pageKey(session, 1));
            awaitTrue(() -> engine.snapshot().get(EngineCounter.L3_REMOVED_BY_TIER) == 1, "removal reported");
            assertThat(session.lookup(0, 3)).isEqualTo(1);
        }
    }

    @Test
    void shouldFindPagesAnotherNodeWroteByProbing(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        final String otherName = name + "x";
        final Map<String, String> settings = settings(name, 32);
        // It stands in for a directory other engines write: shared, so that lookups probe it.
        settings.put("tier." + name + ".shared", "true");
        final Map<String, String> otherSettings = settings(otherName, 32);
        try (Engine other = EngineFixture.start(otherSettings);
             Session otherSession = other.openSession();
             Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            // The other engine writes to its own tier; copying its objects into ours stands in for a shared filesystem.
            keys(otherSession, 26, 5);
            write(otherSession, 0, 5);
            otherSession.flush();
            ScriptedTier.get(name).objects.putAll(ScriptedTier.get(otherName).objects);
            keys(session, 26, 5);
            assertThat(session.lookup(0, 5)).isEqualTo(5);
            assertThat(session.l3Pages()).isEqualTo(5);
            assertThat(engine.snapshot().get(EngineCounter.PROBE_HITS)).isEqualTo(5);
            assertThat(session.acquire(0, 5)).isEqualTo(5);
            for (int i = 0; i < 5; i++)
            {
                assertThat(intact(session, i)).isTrue();
            }
            session.release();
        }
    }

    @Test
    void shouldKeepRunningWhenATierThrows(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        try (Engine engine = EngineFixture.start(settings(name, 32));
             Session session = engine.openSession())
        {
            keys(session, 27, 3);
            write(session, 0, 3);
            session.flush();
            session.evict(0, 3);
            ScriptedTier.get(name).throwOnRead = true;
            assertThat(session.acquire(0, 3)).isZero();
            assertThat(engine.snapshot().get(EngineCounter.PLUGIN_ERRORS)).isEqualTo(1);
            ScriptedTier.get(name).throwOnRead = false;
            // The failed read left the index without that tier for those keys; the pool still works.
            keys(session, 28, 2);
            assertThat(write(session, 0, 2)).isEqualTo(2);
            assertThat(session.acquire(0, 2)).isEqualTo(2);
            session.release();
        }
    }

    @Test
    void shouldAnswerWaitersWithAMissWhenATierIsLateAndNeverServeItsAnswer(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        final Map<String, String> settings = settings(name, 32);
        settings.put(EngineConfig.L3_IO_TIMEOUT, "200ms");
        final ManualClock clock = new ManualClock();
        try (Engine engine = EngineFixture.start(settings, clock);
             Session session = engine.openSession())
        {
            keys(session, 29, 2);
            write(session, 0, 2);
            session.flush();
            session.evict(0, 2);
            final ScriptedTier tier = ScriptedTier.get(name);
            final int readsBefore = tier.reads.get();
            final CountDownLatch gate = tier.holdReads();
            final var acquire = EngineFixture.async(() -> session.acquire(0, 2));
            awaitTrue(() -> tier.reads.get() > readsBefore, "the load reaches the tier");
            assertThat(acquire).as("waiting within l3.io-timeout").isNotDone();
            clock.advance(java.time.Duration.ofMillis(200));
            assertThat(acquire.get(30, java.util.concurrent.TimeUnit.SECONDS)).isZero();
            assertThat(engine.snapshot().get(EngineCounter.L3_TIMEOUTS)).isEqualTo(1);
            // The engine answers the batch's waiters, then marks its tier stuck: the counter may trail the answer.
            awaitTrue(() -> engine.snapshot().get(EngineCounter.L3_STUCK) == 1, "a tier late with a batch is stuck");
            assertThat(session.acquire(0, 2)).as("stuck, it is handed nothing: misses at once").isZero();
            gate.countDown();
            // The late answer is never served; once the tier has answered everything, it serves again.
            awaitTrue(() -> engine.snapshot().get(EngineCounter.L3_TIERS_OUT_OF_SERVICE) == 0, "the tier is back in service");
            assertThat(engine.snapshot().get(EngineCounter.L3_PAGES_LOADED)).as("the late frames were not taken").isZero();
            assertThat(session.acquire(0, 2)).isEqualTo(2);
            assertThat(session.acquiredFromL3()).as("read again, from the tier").isEqualTo(2);
            for (int i = 0; i < 2; i++)
            {
                assertThat(intact(session, i)).isTrue();
            }
            session.release();
        }
    }

    @Test
    void shouldRetryAnotherTierWhenTheFirstLacksThePage(final TestInfo info) throws Exception
    {
        final String first = tierName(info);
        final String second = first + "b";
        final String source = first + "s";
        final Map<String, String> settings = settings(first, 32);
        settings.put("tier." + second + ".type", "scripted");
        // It stands in for a directory other engines write: shared, so that lookups probe it.
        settings.put("tier." + first + ".shared", "true");
        settings.put("tier." + second + ".shared", "true");
        try (Engine writer = EngineFixture.start(settings(source, 32));
             Session writing = writer.openSession();
             Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            keys(writing, 30, 3);
            write(writing, 0, 3);
            writing.flush();
            // Both tiers hold the frames; probing tells the engine so.
            ScriptedTier.get(first).objects.putAll(ScriptedTier.get(source).objects);
            ScriptedTier.get(second).objects.putAll(ScriptedTier.get(source).objects);
            keys(session, 30, 3);
            assertThat(session.lookup(0, 3)).isEqualTo(3);
            // The first tier loses page 1 (it answers not found): the engine reads it from the second.
            ScriptedTier.get(first).readFailures.put(EngineFixture.pageKey(session, 1), TierStatus.NOT_FOUND);
            assertThat(session.acquire(0, 3)).isEqualTo(3);
            for (int i = 0; i < 3; i++)
            {
                assertThat(intact(session, i)).isTrue();
            }
            session.release();
            assertThat(ScriptedTier.get(second).reads.get()).isEqualTo(1);
            assertThat(engine.snapshot().get(EngineCounter.L3_READ_MISSES)).isEqualTo(1);
        }
    }

    @Test
    void shouldNotProbeAgainForKeysL3RecentlySaidItLacks(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        final Map<String, String> settings = settings(name, 32);
        // It stands in for a directory other engines write: shared, so that lookups probe it.
        settings.put("tier." + name + ".shared", "true");
        settings.put(EngineConfig.L3_NEGATIVE_PROBE_TTL, "1h");
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            keys(session, 90, 4);
            assertThat(session.lookup(0, 4)).isZero();
            final long probed = engine.snapshot().get(EngineCounter.PROBE_KEYS);
            assertThat(probed).isEqualTo(4);
            // The next turn of the conversation looks up the same unwritten keys: L3 is not asked again.
            assertThat(session.lookup(0, 4)).isZero();
            assertThat(session.acquire(0, 4)).isZero();
            assertThat(engine.snapshot().get(EngineCounter.PROBE_KEYS)).isEqualTo(probed);
            assertThat(engine.snapshot().get(EngineCounter.PROBES_SKIPPED)).isEqualTo(2);
            // Once this engine writes a key to L3, the memory of its absence is gone.
            write(session, 0, 4);
            session.flush();
            assertThat(session.evict(0, 4)).isEqualTo(4);
            assertThat(session.lookup(0, 4)).isEqualTo(4);
            assertThat(session.l3Pages()).isEqualTo(4);
        }
    }

    @Test
    void shouldProbeAgainOnceANegativeAnswerIsOlderThanItsTimeToLive(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        final String otherName = name + "x";
        final Map<String, String> settings = settings(name, 32);
        // It stands in for a directory other engines write: shared, so that lookups probe it.
        settings.put("tier." + name + ".shared", "true");
        settings.put(EngineConfig.L3_NEGATIVE_PROBE_TTL, "50ms");
        final ManualClock clock = new ManualClock();
        try (Engine other = EngineFixture.start(settings(otherName, 32));
             Session otherSession = other.openSession();
             Engine engine = EngineFixture.start(settings, clock);
             Session session = engine.openSession())
        {
            keys(session, 91, 3);
            assertThat(session.lookup(0, 3)).isZero();
            // Another node writes the chain to the shared L3 meanwhile.
            keys(otherSession, 91, 3);
            write(otherSession, 0, 3);
            otherSession.flush();
            ScriptedTier.get(name).objects.putAll(ScriptedTier.get(otherName).objects);
            assertThat(session.lookup(0, 3)).as("within the time to live the old answer holds").isZero();
            clock.advance(java.time.Duration.ofMillis(50));
            assertThat(session.lookup(0, 3)).as("the other node's pages are found once the negative answer expired").isEqualTo(3);
            assertThat(session.acquire(0, 3)).isEqualTo(3);
            session.release();
        }
    }
}
