package io.kvtier.engine;

import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.config.EngineSettings;
import io.kvtier.engine.status.EngineCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static io.kvtier.engine.EngineFixture.awaitTrue;
import static io.kvtier.engine.EngineFixture.intact;
import static io.kvtier.engine.EngineFixture.keys;
import static io.kvtier.engine.EngineFixture.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The engine against tiers that break the SPI's promises (kvtier issue 16, items 9, 11 and 13): a call
 * that never returns, a close that never returns, writes never completed, bytes written into a segment
 * after its key completed. Every wait is bounded and fails with a message: against an engine that
 * blocks on such a tier these tests fail, they do not hang.
 */
class EngineMisbehavingTierTest
{
    /** Longer than anything here should take on a loaded machine; reaching it means the engine hung. */
    private static final long BOUND_SECONDS = 30;

    private static String tierName(final TestInfo info)
    {
        return "m" + Integer.toHexString(info.getDisplayName().hashCode() & 0xFFFFFF);
    }

    private static Map<String, String> settings(final String tier, final int pages)
    {
        final Map<String, String> settings = EngineFixture.settings(null, pages);
        settings.put("tier." + tier + ".type", "misbehaving");
        settings.put(EngineConfig.POLICY_PREFETCH, "off");
        settings.put(EngineConfig.L3_IO_TIMEOUT, "200ms");
        return settings;
    }

    /** @return the future's value, or a failure naming what never happened */
    private static <T> T within(final CompletableFuture<T> future, final String what) throws Exception
    {
        try
        {
            return future.get(BOUND_SECONDS, TimeUnit.SECONDS);
        }
        catch (final TimeoutException ex)
        {
            return fail("not within " + BOUND_SECONDS + " s: " + what);
        }
        catch (final ExecutionException ex)
        {
            throw ex.getCause() instanceof Exception cause ? cause : ex;
        }
    }

    /** Writes and backs up keys [0, n) of the session's chain {@code salt}, then evicts them: they are in L3 only. */
    private static void inL3Only(final Session session, final long salt, final int n)
    {
        keys(session, salt, n);
        assertThat(write(session, 0, n)).isEqualTo(n);
        assertThat(session.flush()).isZero();
        assertThat(session.evict(0, n)).isEqualTo(n);
    }

    @Test
    void shouldKeepServingWhileATierBlocksInsideARead(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        final ManualClock clock = new ManualClock();
        try (Engine engine = EngineFixture.start(settings(name, 32), clock);
             Session session = engine.openSession();
             Session other = engine.openSession())
        {
            final MisbehavingTier tier = MisbehavingTier.get(name);
            try
            {
                inL3Only(session, 40, 4);
                tier.blockCalls = true;
                final int callsBefore = tier.callsEntered.get();
                final CompletableFuture<Integer> acquire = EngineFixture.async(() -> session.acquire(0, 4));
                awaitTrue(() -> tier.callsEntered.get() > callsBefore, "the load's read reaches the tier");

                // The tier's read does not return: the rest of the engine goes on serving meanwhile.
                keys(other, 41, 2);
                assertThat(within(EngineFixture.async(() -> write(other, 0, 2)), "another client's reserve and commit while a tier blocks"))
                    .isEqualTo(2);
                assertThat(within(EngineFixture.async(() -> other.acquire(0, 2)), "another client's acquire of pool pages")).isEqualTo(2);
                other.release();

                clock.advance(Duration.ofMillis(200));
                assertThat(within(acquire, "the acquire waiting on the blocked read is answered at l3.io-timeout"))
                    .as("a miss: nothing was loaded").isZero();
            }
            finally
            {
                tier.release();
            }
        }
    }

    @Test
    void shouldCloseWithinABoundWhenATierNeverReturnsFromACallNorFromClose(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        final Map<String, String> settings = settings(name, 32);
        final Engine engine = EngineFixture.start(settings);
        final MisbehavingTier tier = MisbehavingTier.get(name);
        try
        {
            try (Session session = engine.openSession())
            {
                inL3Only(session, 42, 2);
                tier.blockCalls = true;
                tier.blockClose = true;
                final CompletableFuture<Integer> acquire = EngineFixture.async(() -> session.acquire(0, 2));
                awaitTrue(() -> tier.callsEntered.get() > 0 && tier.reads.get() > 0, "the load's read reaches the tier");
                assertThat(within(acquire, "the acquire is answered at l3.io-timeout")).isZero();
            }
            within(EngineFixture.async(() ->
            {
                engine.close();
                return true;
            }), "Engine.close() returns while a tier's read and its close() never do");
            assertThat(tier.closeEntered.getCount()).as("the tier was asked to close").isZero();
            assertThat(EngineFixture.poolPath(settings)).as("the pool file is removed; its mapping may stay").doesNotExist();
        }
        finally
        {
            tier.release();
        }
    }

    @Test
    void shouldAnswerFlushByTheIoTimeoutWhenATierNeverEndsABackup(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        // The engine's own clock: l3.io-timeout (200 ms) passes in real time while FLUSH waits.
        try (Engine engine = EngineFixture.start(settings(name, 32));
             Session session = engine.openSession())
        {
            final MisbehavingTier tier = MisbehavingTier.get(name);
            tier.dropWrites = true;
            keys(session, 43, 3);
            assertThat(write(session, 0, 3)).isEqualTo(3);
            awaitTrue(() -> !tier.droppedWrites.isEmpty(), "the backups reach the tier, which keeps them");
            within(EngineFixture.async(session::flush), "FLUSH answered by l3.io-timeout although the tier never ends its backups");
        }
    }

    @Test
    void shouldNeverServeBytesAnUntrustedTierWritesAfterCompletingARead(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        final Map<String, String> settings = settings(name, 32);
        settings.put("tier." + name + ".trusted", "false");
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            final MisbehavingTier tier = MisbehavingTier.get(name);
            inL3Only(session, 44, 3);
            tier.scribbleAfterRead = true;
            assertThat(session.acquire(0, 3)).isEqualTo(3);
            assertThat(tier.scribbled.tryAcquire(3, BOUND_SECONDS, TimeUnit.SECONDS)).as("the tier scribbled on every segment it read into").isTrue();
            for (int i = 0; i < 3; i++)
            {
                assertThat(intact(session, i)).as("page %d, pinned before the tier scribbled on what it read into", i).isTrue();
            }
            session.release();
            assertThat(engine.snapshot().get(EngineCounter.L3_CORRUPT)).isZero();
        }
    }

    @Test
    void shouldNotServeAPageATrustedTierChangedAfterItsLoad(final TestInfo info) throws Exception
    {
        final String name = tierName(info);
        final Map<String, String> settings = settings(name, 32);
        settings.put(EngineConfig.POLICY_PREFETCH, "best-effort");
        settings.put(EngineConfig.POLICY_PREFETCH_THRESHOLD, "1");
        settings.put(EngineSettings.L3_REVERIFY_RATE.key(), "1");
        settings.put(EngineSettings.L3_LATE_WRITE_LIMIT.key(), "2");
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            final MisbehavingTier tier = MisbehavingTier.get(name);
            inL3Only(session, 45, 2);
            tier.scribbleAfterRead = true;
            final long loaded = engine.snapshot().get(EngineCounter.L3_PAGES_LOADED);
            // A prefetch loads the pages without pinning them; the tier then writes into them late.
            assertThat(session.lookup(0, 2)).isEqualTo(2);
            awaitTrue(() -> engine.snapshot().get(EngineCounter.L3_PAGES_LOADED) == loaded + 2, "the prefetched pages land");
            assertThat(tier.scribbled.tryAcquire(2, BOUND_SECONDS, TimeUnit.SECONDS)).as("the tier scribbled on both pages").isTrue();

            final int pinned = session.acquire(0, 2);
            for (int i = 0; i < pinned; i++)
            {
                assertThat(intact(session, i)).as("page %d of the %d served", i, pinned).isTrue();
            }
            session.release();
        }
    }
}
