package io.kvtier.engine;

import io.kvtier.client.pool.PageStateWord;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.eviction.EvictionPolicies;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.engine.status.EngineCounter;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Several client threads race every request on overlapping keys over a small pool, with an L3 behind
 * it: every byte any of them reads is checked against the bytes its key implies, and at the end no
 * pin, reservation or page is left over. Bounded by operation count, not by time.
 */
class EngineStressTest
{
    private static final int THREADS = 3;
    private static final int KEYS = 48;
    private static final int PAGES = 24;
    private static final int OPERATIONS = 1_500;

    static Stream<Arguments> runs()
    {
        final List<Arguments> runs = new ArrayList<>();
        for (final String policy : List.of("write-back", "write-through"))
        {
            for (final long seed : new long[] {1, 2, 3})
            {
                runs.add(Arguments.of(policy, EvictionPolicies.DEFAULT, seed));
            }
            // Every eviction policy under the same races: the order pages leave in must not matter to what is served.
            long seed = 4;
            for (final String eviction : EvictionPolicies.names())
            {
                runs.add(Arguments.of(policy, eviction, seed++));
            }
        }
        return runs.stream();
    }

    @ParameterizedTest(name = "{0}, {1} eviction, seed {2}")
    @MethodSource("runs")
    void shouldServeOnlyTheBytesOfEachKeyAndLeakNothing(final String policy, final String eviction, final long seed) throws Exception
    {
        final String tier = "stress" + policy.hashCode() + eviction + "x" + seed;
        final Map<String, String> settings = EngineFixture.settings(tier, PAGES);
        settings.put(EngineConfig.POLICY_WRITE, policy);
        settings.put(EngineConfig.POLICY_EVICTION, eviction);
        settings.put(EngineConfig.POLICY_PREFETCH, seed % 2 == 0 ? "best-effort" : "off");
        settings.put(EngineConfig.LEASE_QUARANTINE, "0");
        final ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        try (Engine engine = EngineFixture.start(settings))
        {
            final CyclicBarrier start = new CyclicBarrier(THREADS);
            final List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < THREADS; t++)
            {
                final long threadSeed = seed * 1000 + t;
                threads.add(Thread.ofPlatform().name("stress-" + t).start(() ->
                {
                    try (Session session = engine.openSession())
                    {
                        EngineFixture.keys(session, 70, KEYS);
                        start.await();
                        run(session, new SplittableRandom(threadSeed), failures);
                    }
                    catch (final Exception | AssertionError ex)
                    {
                        failures.add(Thread.currentThread().getName() + ": " + ex);
                    }
                }));
            }
            for (final Thread thread : threads)
            {
                thread.join();
            }
            assertThat(failures).as("wrong bytes or failed requests").isEmpty();
            try (Session last = engine.openSession())
            {
                last.flush();
            }
            assertNothingLeaked(engine);
        }
    }

    private static void run(final Session session, final SplittableRandom random, final ConcurrentLinkedQueue<String> failures)
    {
        for (int op = 0; op < OPERATIONS && failures.isEmpty(); op++)
        {
            final int from = random.nextInt(KEYS);
            final int count = 1 + random.nextInt(Math.min(6, KEYS - from));
            switch (random.nextInt(6))
            {
                case 0, 1 ->
                {
                    session.reserve(from, count);
                    for (int i = from; i < from + count; i++)
                    {
                        if (session.status(i) == PageEntryStatus.RESERVED)
                        {
                            EngineFixture.fill(session, i);
                        }
                    }
                    if (random.nextInt(8) == 0)
                    {
                        session.abort(from, count);
                    }
                    else
                    {
                        session.commit(from, count);
                    }
                }
                case 2, 3 ->
                {
                    final int pinned = session.acquire(from, count);
                    for (int i = from; i < from + pinned; i++)
                    {
                        if (!EngineFixture.intact(session, i))
                        {
                            failures.add("key " + i + " served bytes that are not its own (" + session.status(i) + ")");
                        }
                    }
                    session.release(from, count);
                }
                case 4 -> session.lookup(from, count);
                default -> session.evict(from, count);
            }
        }
        session.release();
    }

    private static void assertNothingLeaked(final Engine engine) throws InterruptedException
    {
        final PagePool pool = engine.pool();
        // A prefetch started by the last lookups may still be loading its page (WRITING) after every
        // session closed; such a page becomes SERVING or FREE when the tier answers. Give the loads
        // their time: a page still WRITING after it was never released, and fails below.
        final long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(20);
        while (anyWriting(pool) && System.nanoTime() - deadline < 0)
        {
            Thread.sleep(5);
        }
        int serving = 0;
        for (int page = 0; page < pool.pageCount(); page++)
        {
            final long word = pool.metadata().stateWordAcquire(page);
            assertThat(PageStateWord.pins(word)).as("pins left on page %d", page).isZero();
            assertThat(PageStateWord.state(word)).as("state of page %d", page).isIn(PageStateWord.FREE, PageStateWord.SERVING);
            if (PageStateWord.state(word) == PageStateWord.SERVING)
            {
                serving++;
            }
        }
        final Map<EngineCounter, Long> counters = engine.snapshot();
        assertThat(counters.get(EngineCounter.BACKUPS_IN_FLIGHT)).isZero();
        assertThat(counters.get(EngineCounter.PAGES_IN_USE)).as("pages in use are exactly the committed ones").isEqualTo(serving);
        assertThat(counters.get(EngineCounter.L3_CORRUPT)).isZero();
        // The race covered what it should: commits, evictions, hits in both tiers.
        assertThat(counters.get(EngineCounter.PAGES_COMMITTED)).isGreaterThan(100);
        assertThat(counters.get(EngineCounter.PAGES_EVICTED)).isGreaterThan(50);
        assertThat(counters.get(EngineCounter.L2_HIT_PAGES)).isGreaterThan(50);
        assertThat(counters.get(EngineCounter.L3_HIT_PAGES)).isGreaterThan(10);
        System.out.println("stress counters: " + counters);
    }

    private static boolean anyWriting(final PagePool pool)
    {
        for (int page = 0; page < pool.pageCount(); page++)
        {
            if (PageStateWord.state(pool.metadata().stateWordAcquire(page)) == PageStateWord.WRITING)
            {
                return true;
            }
        }
        return false;
    }
}
