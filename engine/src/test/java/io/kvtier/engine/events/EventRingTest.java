package io.kvtier.engine.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.client.pool.CountersDescriptor;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The event ring: records read back as written, wrap, a full ring drops and counts, a reader on another thread. */
class EventRingTest
{
    private Arena arena;
    private EngineCounters counters;

    /** One record as read back. */
    private record Event(int type, int medium, long high, long low, long tag)
    {
    }

    @BeforeEach
    void counters()
    {
        arena = Arena.ofConfined();
        final MemorySegment region = arena.allocate(CountersDescriptor.REGION_LENGTH, 8);
        counters = new EngineCounters(region);
        counters.allocateAll();
    }

    @AfterEach
    void close()
    {
        arena.close();
    }

    @Test
    void shouldReadRecordsBackAsWrittenOldestFirst()
    {
        final EventRing ring = new EventRing(8, counters);
        ring.cleared();
        ring.stored(1, 2, 3, PageEvents.POOL);
        ring.removed(-1L, Long.MIN_VALUE, 0x0123_4567_89ab_cdefL, PageEvents.tierMedium(4));
        final List<Event> read = new ArrayList<>();
        assertThat(ring.poll((t, m, h, l, g) -> read.add(new Event(t, m, h, l, g)), 100)).isEqualTo(3);
        assertThat(read).containsExactly(new Event(EventRingDescriptor.TYPE_CLEARED, 0, 0, 0, 0),
            new Event(EventRingDescriptor.TYPE_STORED, 0, 1, 2, 3),
            new Event(EventRingDescriptor.TYPE_REMOVED, 5, -1L, Long.MIN_VALUE, 0x0123_4567_89ab_cdefL));
        assertThat(ring.poll((t, m, h, l, g) -> read.add(null), 100)).isZero();
        assertThat(counters.getOpaque(EngineCounter.EVENTS_RECORDED)).isEqualTo(3);
    }

    @Test
    void shouldWrapAroundAndHonourThePollLimit()
    {
        final EventRing ring = new EventRing(4, counters);
        final List<Long> read = new ArrayList<>();
        for (long i = 0; i < 22; i++)
        {
            ring.stored(i, ~i, 0, PageEvents.POOL);
            if (i % 3 == 2)
            {
                while (ring.poll((t, m, h, l, g) -> read.add(h), 2) > 0)
                {
                    // two at a time, across the end of the ring
                }
            }
        }
        ring.poll((t, m, h, l, g) -> read.add(h), 10);
        assertThat(read).hasSize(22);
        for (int i = 0; i < 22; i++)
        {
            assertThat(read.get(i)).isEqualTo(i);
        }
        assertThat(counters.getOpaque(EngineCounter.EVENTS_DROPPED)).isZero();
    }

    @Test
    void shouldDropAndCountWhenFullNeverWaiting()
    {
        final EventRing ring = new EventRing(4, counters);
        for (long i = 0; i < 7; i++)
        {
            ring.stored(i, 0, 0, PageEvents.POOL);
        }
        assertThat(counters.getOpaque(EngineCounter.EVENTS_DROPPED)).isEqualTo(3);
        assertThat(counters.getOpaque(EngineCounter.EVENTS_RECORDED)).isEqualTo(4);
        final List<Long> read = new ArrayList<>();
        ring.poll((t, m, h, l, g) -> read.add(h), 10);
        assertThat(read).containsExactly(0L, 1L, 2L, 3L);
        ring.stored(9, 0, 0, PageEvents.POOL);
        ring.poll((t, m, h, l, g) -> read.add(h), 10);
        assertThat(read).endsWith(9L);
    }

    /** A record its reader throws on is passed once and skipped: the reader neither sees it again nor those before it. */
    @Test
    void shouldPassARecordTheReaderThrowsOnOnceAndGoOnAfterIt()
    {
        final EventRing ring = new EventRing(8, counters);
        for (long i = 0; i < 5; i++)
        {
            ring.stored(i, 0, 0, PageEvents.POOL);
        }
        final List<Long> read = new ArrayList<>();
        assertThatThrownBy(() -> ring.poll((t, m, h, l, g) ->
        {
            read.add(h);
            if (h == 2)
            {
                throw new IllegalArgumentException("poison");
            }
        }, 10)).hasMessage("poison");
        ring.poll((t, m, h, l, g) -> read.add(h), 10);
        assertThat(read).containsExactly(0L, 1L, 2L, 3L, 4L);
        assertThat(ring.poll((t, m, h, l, g) -> read.add(h), 10)).isZero();
    }

    @Test
    void shouldRefuseACapacityThatIsNotAPowerOfTwo()
    {
        assertThatThrownBy(() -> new EventRing(6, counters)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("capacity=6");
    }

    @Test
    void shouldHandEveryRecordWholeToAReaderOnAnotherThread() throws Exception
    {
        final EventRing ring = new EventRing(64, counters);
        final int total = 200_000;
        final AtomicReference<String> wrong = new AtomicReference<>();
        final long[] next = {0};
        final Thread reader = new Thread(() ->
        {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (next[0] < total && wrong.get() == null && System.nanoTime() < deadline)
            {
                ring.poll((t, m, h, l, g) ->
                {
                    // Each record's fields derive from its key: a torn or stale record breaks the relation.
                    if (h != next[0] || l != ~h || g != h * 31 || m != (int)(h & 7) || t != EventRingDescriptor.TYPE_STORED)
                    {
                        wrong.compareAndSet(null, "record " + next[0] + " read as " + t + "/" + m + "/" + h + "/" + l + "/" + g);
                    }
                    next[0]++;
                }, 16);
            }
        }, "event-ring-reader");
        reader.start();
        long written = 0;
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (written < total && System.nanoTime() < deadline)
        {
            if (ring.offer(EventRingDescriptor.TYPE_STORED, (int)(written & 7), written, ~written, written * 31))
            {
                written++;
            }
        }
        reader.join(TimeUnit.SECONDS.toMillis(60));
        assertThat(wrong.get()).as("a record read differently than written").isNull();
        assertThat(written).as("records the producer got in before its deadline").isEqualTo(total);
        assertThat(next[0]).as("records the reader saw before its deadline").isEqualTo(total);
        assertThat(counters.getOpaque(EngineCounter.EVENTS_RECORDED)).isEqualTo(total);
    }
}
