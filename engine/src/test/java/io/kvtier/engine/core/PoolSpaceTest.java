package io.kvtier.engine.core;

import io.kvtier.client.protocol.MessageType;
import io.kvtier.engine.eviction.EvictionPolicies;

import io.kvtier.engine.ManualClock;
import io.kvtier.engine.index.PageIndex;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.client.pool.PageStateWord;
import io.kvtier.client.pool.PinTableDescriptor;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The pool's space on its own, behind a hand-written eviction gate and space-waiter resumer: the free
 * list, the water levels, what may not leave, quarantine and the requests waiting for a page. Which
 * resident page leaves first is the eviction policy's business and is not asserted here.
 */
class PoolSpaceTest
{
    private static final Duration QUARANTINE = Duration.ofSeconds(3);
    private static final Duration SPACE_WAIT = Duration.ofSeconds(5);

    @TempDir
    Path dir;

    private final ManualClock clock = new ManualClock();
    private final Gate gate = new Gate();
    private final List<ClientRecord> resumed = new ArrayList<>();
    private PagePool pool;
    private PageIndex index;
    private EngineCounters counters;

    /** The eviction gate: answers per page (EVICT unless told), and records what it was asked and told. */
    private static final class Gate implements PoolSpace.EvictionGate
    {
        final Map<Integer, Integer> answers = new HashMap<>();
        final List<Integer> asked = new ArrayList<>();
        final List<Integer> evicted = new ArrayList<>();
        final List<long[]> lost = new ArrayList<>();
        int pending;
        boolean heldCountsAsPending;

        @Override
        public int beforeEvict(final int page)
        {
            asked.add(page);
            final int answer = answers.getOrDefault(page, EVICT);
            if (answer == HELD && heldCountsAsPending)
            {
                pending++;
            }
            return answer;
        }

        @Override
        public void lost(final long keyHigh, final long keyLow)
        {
            lost.add(new long[] {keyHigh, keyLow});
        }

        @Override
        public void evicted(final int page)
        {
            evicted.add(page);
        }

        @Override
        public int evictionsPending()
        {
            return pending;
        }
    }

    @AfterEach
    void closePool()
    {
        if (pool != null)
        {
            pool.close();
        }
    }

    private PoolSpace space(final int pages, final double evictHigh, final double evictLow) throws IOException
    {
        pool = PagePool.create(dir.resolve("pool"), 4096, pages, 4L * pages + 16, 2, Duration.ofSeconds(30));
        index = new PageIndex(pool.index(), pool.pageCount());
        counters = new EngineCounters(pool.counters());
        final PoolSpace space = new PoolSpace(pool, index, counters, clock, EvictionPolicies.forName("lru", pool.pageCount()), evictHigh, evictLow, QUARANTINE.toNanos(), SPACE_WAIT.toNanos(), 4,
            gate, resumed::add);
        return space;
    }

    /** A page made SERVING for key {@code (7, low)} and resident (in the eviction order). */
    private int serve(final PoolSpace space, final long low)
    {
        final int page = space.allocate();
        assertThat(page).as("a page for key " + low).isNotEqualTo(PoolSpace.NONE);
        final long word = pool.metadata().stateWordAcquire(page);
        pool.metadata().keyPlain(page, 7, low);
        assertThat(pool.metadata().compareAndSetStateWord(page, word, PageStateWord.word(PageStateWord.generation(word), 0, PageStateWord.SERVING))).isTrue();
        index.bindPage(7, low, page);
        space.touch(page, PoolSpace.NONE);
        return page;
    }

    private int state(final int page)
    {
        return PageStateWord.state(pool.metadata().stateWordAcquire(page));
    }

    private int generation(final int page)
    {
        return PageStateWord.generation(pool.metadata().stateWordAcquire(page));
    }

    private ClientRecord request()
    {
        final ClientRecord r = new ClientRecord(1);
        r.begin(MessageType.RESERVE, 0, 1, clock.nanoTime(), System.nanoTime());
        return r;
    }

    @Test
    void shouldHandOutEveryPageOnceAndNoneWhenAllAreTaken() throws IOException
    {
        final PoolSpace space = space(8, 1.0, 0.75);
        final Set<Integer> pages = new HashSet<>();
        for (int i = 0; i < 8; i++)
        {
            pages.add(space.allocate());
        }
        assertThat(pages).containsExactlyInAnyOrder(0, 1, 2, 3, 4, 5, 6, 7);
        assertThat(space.used()).isEqualTo(8);
        assertThat(space.free()).isZero();
        assertThat(counters.getOpaque(EngineCounter.PAGES_IN_USE)).isEqualTo(8);
        // Nothing is resident, so nothing can be evicted to make room.
        assertThat(space.allocate()).isEqualTo(PoolSpace.NONE);
        assertThat(gate.asked).isEmpty();

        space.free(5);
        assertThat(counters.getOpaque(EngineCounter.PAGES_IN_USE)).isEqualTo(7);
        assertThat(space.allocate()).isEqualTo(5);
        assertThat(space.allocate()).isEqualTo(PoolSpace.NONE);
    }

    @Test
    void shouldStartEvictingAtTheHighWaterLevelAndStopAtTheLowOne() throws IOException
    {
        // 10 pages: eviction starts when 8 are in use and brings them down to 5.
        final PoolSpace space = space(10, 0.8, 0.5);
        final List<Integer> served = new ArrayList<>();
        for (int i = 0; i < 8; i++)
        {
            served.add(serve(space, i));
        }
        assertThat(counters.getOpaque(EngineCounter.PAGES_EVICTED)).as("below the high water level nothing leaves").isZero();
        assertThat(space.used()).isEqualTo(8);

        final int page = space.allocate();

        assertThat(page).isNotEqualTo(PoolSpace.NONE);
        assertThat(counters.getOpaque(EngineCounter.PAGES_EVICTED)).as("8 in use, down to 5, then one handed out").isEqualTo(3);
        assertThat(space.used()).isEqualTo(6);
        assertThat(gate.evicted).hasSize(3).isSubsetOf(served);
        for (int i = 0; i < 8; i++)
        {
            final int p = served.get(i);
            final int slot = index.find(7, i);
            if (gate.evicted.contains(p))
            {
                assertThat(state(p)).isEqualTo(PageStateWord.FREE);
                assertThat(slot).as("an evicted page's key leaves the index").isNegative();
            }
            else
            {
                assertThat(state(p)).isEqualTo(PageStateWord.SERVING);
                assertThat(index.page(slot)).isEqualTo(p);
            }
        }
    }

    @Test
    void shouldEvictOnlyWhenAboveTheHighWaterLevel() throws IOException
    {
        final PoolSpace space = space(10, 0.8, 0.5);
        final List<Integer> served = new ArrayList<>();
        for (int i = 0; i < 8; i++)
        {
            served.add(serve(space, i));
        }
        space.evictIfAboveHighWater();
        assertThat(counters.getOpaque(EngineCounter.PAGES_EVICTED)).as("at the high water level, not above it").isZero();

        // Pinned pages cannot leave, so the pool goes above its high water level...
        for (final int p : served)
        {
            assertThat(pool.tryPin(p)).isTrue();
        }
        assertThat(space.allocate()).isNotEqualTo(PoolSpace.NONE);
        assertThat(space.used()).isEqualTo(9);
        assertThat(counters.getOpaque(EngineCounter.PAGES_EVICTED)).isZero();
        // ...and comes back down to the low one once they are unpinned.
        for (final int p : served)
        {
            pool.unpin(p);
        }
        space.evictIfAboveHighWater();
        assertThat(space.used()).isEqualTo(5);
        assertThat(counters.getOpaque(EngineCounter.PAGES_EVICTED)).isEqualTo(4);
    }

    @Test
    void shouldEvictAnUnpinnedPageForSpaceButNeverAPinnedOne() throws IOException
    {
        final PoolSpace space = space(4, 1.0, 0.5);
        final int[] pages = new int[4];
        for (int i = 0; i < 4; i++)
        {
            pages[i] = serve(space, i);
        }
        final int unpinned = pages[2];
        for (final int p : pages)
        {
            if (p != unpinned)
            {
                assertThat(pool.tryPin(p)).isTrue();
            }
        }
        final int[] generations = {generation(pages[0]), generation(pages[1]), generation(pages[2]), generation(pages[3])};

        assertThat(space.allocate()).as("the unpinned page leaves and is handed out").isEqualTo(unpinned);
        assertThat(gate.evicted).containsExactly(unpinned);
        assertThat(generation(unpinned)).as("a new generation, so stale handles fail").isEqualTo(generations[2] + 1);
        for (int i = 0; i < 4; i++)
        {
            if (pages[i] != unpinned)
            {
                assertThat(state(pages[i])).isEqualTo(PageStateWord.SERVING);
                assertThat(generation(pages[i])).isEqualTo(generations[i]);
            }
        }
        assertThat(space.allocate()).as("every other page is pinned").isEqualTo(PoolSpace.NONE);
        assertThat(gate.evicted).containsExactly(unpinned);
    }

    @Test
    void shouldRetireAPageThroughQuarantineOnceNoPinHoldsItAndNeverOrderItAgain() throws IOException
    {
        final PoolSpace space = space(4, 1.0, 0.5);
        final int page = serve(space, 1);
        final int other = serve(space, 2);
        assertThat(pool.tryPin(page)).isTrue();
        // A client process holds it too, through the pin table.
        assertThat(pool.pinTable().compareAndSetEntry(page, 0, 0, PinTableDescriptor.entry(1, 1))).isTrue();

        space.retire(page);

        assertThat(index.find(7, 1)).as("no one finds it any more").isEqualTo(io.kvtier.collections.KeyTable.NONE);
        assertThat(state(page)).as("held: it stays until its pins go").isEqualTo(PageStateWord.SERVING);
        space.touch(page, PoolSpace.NONE); // a late hit of its holder must not put it back in the eviction order
        pool.unpin(page);
        space.onTime(clock.nanoTime());
        assertThat(state(page)).as("the other process still holds it").isEqualTo(PageStateWord.SERVING);

        assertThat(pool.pinTable().compareAndSetEntry(page, 0, PinTableDescriptor.entry(1, 1), PinTableDescriptor.entry(1, 0))).isTrue();
        space.onTime(clock.nanoTime());
        assertThat(state(page)).isEqualTo(PageStateWord.FREE);
        assertThat(gate.evicted).containsExactly(page);
        assertThat(counters.getOpaque(EngineCounter.PAGES_QUARANTINED)).as("it rests before reuse").isEqualTo(1);
        assertThat(space.allocate()).as("the free pages first; the retired one is resting").isNotEqualTo(page);
        assertThat(space.allocate()).isNotEqualTo(page);
        assertThat(space.allocate()).as("then the resident one is evicted, never the retired one").isEqualTo(other);
    }

    @Test
    void shouldNotEvictAPagePinnedByAnotherProcess() throws IOException
    {
        final PoolSpace space = space(2, 1.0, 0.5);
        final int a = serve(space, 1);
        final int b = serve(space, 2);
        // A client process pins through the pin table, not the state word.
        assertThat(pool.pinTable().compareAndSetEntry(a, 0, 0, PinTableDescriptor.entry(1, 1))).isTrue();
        assertThat(pool.pinTable().compareAndSetEntry(b, 1, 0, PinTableDescriptor.entry(1, 1))).isTrue();

        assertThat(space.allocate()).isEqualTo(PoolSpace.NONE);
        assertThat(state(a)).isEqualTo(PageStateWord.SERVING);
        assertThat(state(b)).isEqualTo(PageStateWord.SERVING);
        assertThat(gate.evicted).isEmpty();

        assertThat(pool.pinTable().compareAndSetEntry(b, 1, PinTableDescriptor.entry(1, 1), PinTableDescriptor.entry(1, 0))).isTrue();
        assertThat(space.allocate()).isEqualTo(b);
        assertThat(state(a)).isEqualTo(PageStateWord.SERVING);
    }

    @Test
    void shouldLeaveHeldAndSkippedPagesInThePoolAndAskNoMoreAboutHeldOnes() throws IOException
    {
        final PoolSpace space = space(4, 1.0, 0.5);
        final int held = serve(space, 0);
        final int skipped = serve(space, 1);
        final int evictable1 = serve(space, 2);
        final int evictable2 = serve(space, 3);
        gate.answers.put(held, PoolSpace.EvictionGate.HELD);
        gate.answers.put(skipped, PoolSpace.EvictionGate.SKIP);

        final int page = space.allocate();

        // Down to 2 in use takes both evictable pages, whatever the order.
        assertThat(gate.evicted).containsExactlyInAnyOrder(evictable1, evictable2);
        assertThat(page).isIn(evictable1, evictable2);
        assertThat(state(held)).isEqualTo(PageStateWord.SERVING);
        assertThat(state(skipped)).isEqualTo(PageStateWord.SERVING);

        assertThat(space.allocate()).isIn(evictable1, evictable2);
        gate.asked.clear();
        assertThat(space.allocate()).isEqualTo(PoolSpace.NONE);
        assertThat(gate.asked).as("a skipped page is asked about again").contains(skipped);
        assertThat(gate.asked).as("a held page left the eviction order until its copy ends").doesNotContain(held);
    }

    @Test
    void shouldCountHeldPagesAsFreedForTheWaterLevels() throws IOException
    {
        final PoolSpace space = space(4, 1.0, 0.5);
        for (int i = 0; i < 4; i++)
        {
            gate.answers.put(serve(space, i), PoolSpace.EvictionGate.HELD);
        }
        gate.heldCountsAsPending = true;

        assertThat(space.allocate()).as("nothing left the pool yet").isEqualTo(PoolSpace.NONE);
        assertThat(gate.asked).as("4 in use, 2 leaving: the low water level is reached").hasSize(2);
        assertThat(gate.evicted).isEmpty();
    }

    @Test
    void shouldEvictAPageWhoseCopyIsLostAndSaySo() throws IOException
    {
        final PoolSpace space = space(2, 1.0, 0.5);
        final int a = serve(space, 11);
        final int b = serve(space, 12);
        gate.answers.put(a, PoolSpace.EvictionGate.EVICT_LOST);
        gate.answers.put(b, PoolSpace.EvictionGate.EVICT_LOST);

        final int page = space.allocate();

        assertThat(gate.evicted).containsExactly(page);
        assertThat(gate.lost).hasSize(1);
        assertThat(gate.lost.getFirst()).containsExactly(7, page == a ? 11 : 12);
    }

    @Test
    void shouldEvictOnRequestOnlyAPageStillAsSeen() throws IOException
    {
        final PoolSpace space = space(2, 1.0, 0.5);
        final int page = serve(space, 3);
        final long seen = pool.metadata().stateWordAcquire(page);
        assertThat(pool.tryPin(page)).isTrue();

        assertThat(space.evict(page, seen)).as("pinned since it was seen").isFalse();
        assertThat(state(page)).isEqualTo(PageStateWord.SERVING);
        assertThat(space.free()).isEqualTo(1);

        pool.unpin(page);
        assertThat(space.evict(page, pool.metadata().stateWordAcquire(page))).isTrue();
        assertThat(state(page)).isEqualTo(PageStateWord.FREE);
        assertThat(index.find(7, 3)).isNegative();
        assertThat(space.free()).isEqualTo(2);
        assertThat(gate.evicted).containsExactly(page);
        assertThat(counters.getOpaque(EngineCounter.PAGES_EVICTED)).isEqualTo(1);
    }

    @Test
    void shouldGiveAQuarantinedPageBackOnlyAfterItsTime() throws IOException
    {
        final PoolSpace space = space(2, 1.0, 0.5);
        final int first = space.allocate();
        final int second = space.allocate();
        space.quarantine(first);
        clock.advance(Duration.ofSeconds(1));
        space.quarantine(second);
        assertThat(space.free()).isZero();
        assertThat(counters.getOpaque(EngineCounter.PAGES_QUARANTINED)).isEqualTo(2);

        clock.advance(QUARANTINE.minusSeconds(1).minusNanos(1));
        space.onTime(clock.nanoTime());
        assertThat(space.allocate()).as("2.999... s in quarantine").isEqualTo(PoolSpace.NONE);

        clock.advance(Duration.ofNanos(1));
        space.onTime(clock.nanoTime());
        assertThat(space.free()).isEqualTo(1);
        assertThat(counters.getOpaque(EngineCounter.PAGES_QUARANTINED)).isEqualTo(1);
        assertThat(space.allocate()).isEqualTo(first);

        clock.advance(Duration.ofSeconds(1));
        space.onTime(clock.nanoTime());
        assertThat(counters.getOpaque(EngineCounter.PAGES_QUARANTINED)).isZero();
        assertThat(space.allocate()).isEqualTo(second);
    }

    @Test
    void shouldParkARequestForSpaceOnlyWhileEvictionsArePending() throws IOException
    {
        final PoolSpace space = space(1, 1.0, 0.5);
        final int page = space.allocate();
        final ClientRecord r = request();

        assertThat(space.waitForSpace(r)).as("nothing will free up").isFalse();
        assertThat(r.phase).isEqualTo(ClientRecord.PHASE_NONE);

        gate.pending = 1;
        assertThat(space.waitForSpace(r)).isTrue();
        assertThat(r.phase).isEqualTo(ClientRecord.PHASE_SPACE_WAIT);
        space.resumeSpaceWaiters();
        assertThat(resumed).as("no page is free yet").isEmpty();

        space.free(page);
        space.resumeSpaceWaiters();
        assertThat(resumed).containsExactly(r);
        space.resumeSpaceWaiters();
        assertThat(resumed).as("resumed once").containsExactly(r);
    }

    @Test
    void shouldResumeWaitersWhenTheLastPendingEvictionEndsEvenWithoutAFreePage() throws IOException
    {
        final PoolSpace space = space(1, 1.0, 0.5);
        space.allocate();
        final ClientRecord r = request();
        gate.pending = 1;
        assertThat(space.waitForSpace(r)).isTrue();

        gate.pending = 0;
        space.resumeSpaceWaiters();
        assertThat(resumed).containsExactly(r);
    }

    @Test
    void shouldDropAForgottenWaiterAndOneWhoseRequestEnded() throws IOException
    {
        final PoolSpace space = space(2, 1.0, 0.5);
        final int a = space.allocate();
        final int b = space.allocate();
        final ClientRecord left = request();
        final ClientRecord ended = new ClientRecord(2);
        ended.begin(MessageType.ACQUIRE, 0, 1, clock.nanoTime(), System.nanoTime());
        gate.pending = 1;
        assertThat(space.waitForSpace(left)).isTrue();
        assertThat(space.waitForSpace(ended)).isTrue();

        space.forgetWaiter(left);
        ended.inFlight = false;
        space.free(a);
        space.free(b);
        space.resumeSpaceWaiters();
        clock.advance(SPACE_WAIT);
        space.onTime(clock.nanoTime());

        assertThat(resumed).isEmpty();
    }

    @Test
    void shouldLetAWaiterGoOnWithoutSpaceAtItsDeadline() throws IOException
    {
        final PoolSpace space = space(1, 1.0, 0.5);
        space.allocate();
        final ClientRecord r = request();
        gate.pending = 1;
        assertThat(space.waitForSpace(r)).isTrue();

        clock.advance(SPACE_WAIT.minusNanos(1));
        space.onTime(clock.nanoTime());
        assertThat(resumed).isEmpty();

        clock.advance(Duration.ofNanos(1));
        space.onTime(clock.nanoTime());
        assertThat(resumed).containsExactly(r);
        assertThat(space.waitForSpace(r)).as("past its deadline it waits no more").isFalse();
    }

    @Test
    void shouldResumeEveryWaiterWhenClosing() throws IOException
    {
        final PoolSpace space = space(1, 1.0, 0.5);
        space.allocate();
        final ClientRecord r = request();
        gate.pending = 1;
        assertThat(space.waitForSpace(r)).isTrue();

        space.beginClosing();
        space.resumeSpaceWaiters();

        assertThat(resumed).containsExactly(r);
        assertThat(space.waitForSpace(r)).as("its deadline is now: it answers without waiting").isFalse();
    }
}
