package io.kvtier.engine.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The engine thread's bounded FIFO of fixed-width records. */
class LongRingTest
{
    @Test
    void shouldKeepRecordsInArrivalOrderAcrossManyWraps()
    {
        final LongRing ring = new LongRing(3, 3);
        long next = 0;
        long expected = 0;
        for (int round = 0; round < 50; round++)
        {
            while (!ring.isFull())
            {
                ring.add(next, next * 10, next * 100);
                next++;
            }
            // Take one or two, so that head and tail wrap at different places each round.
            for (int k = 0; k <= round % 2; k++)
            {
                assertThat(ring.peek(0)).isEqualTo(expected);
                assertThat(ring.peek(1)).isEqualTo(expected * 10);
                assertThat(ring.peek(2)).isEqualTo(expected * 100);
                ring.poll();
                expected++;
            }
        }
        assertThat(ring.size()).as("three added each round, as many taken").isEqualTo(next - expected);
        while (!ring.isEmpty())
        {
            assertThat(ring.peek(0)).isEqualTo(expected++);
            ring.poll();
        }
        assertThat(expected).isEqualTo(next);
    }

    @Test
    void shouldCountItsRecordsAndRefuseOneWhenFull()
    {
        final LongRing ring = new LongRing(2, 2);
        assertThat(ring.isEmpty()).isTrue();
        assertThat(ring.size()).isZero();
        ring.add(1, 2, 3);
        assertThat(ring.isEmpty()).isFalse();
        assertThat(ring.isFull()).isFalse();
        ring.add(4, 5, 6);
        assertThat(ring.isFull()).isTrue();
        assertThat(ring.size()).isEqualTo(2);

        assertThatThrownBy(() -> ring.add(7, 8, 9)).isInstanceOf(IllegalStateException.class);
        assertThat(ring.size()).isEqualTo(2);
        assertThat(ring.peek(0)).isEqualTo(1);
        assertThat(ring.peek(1)).isEqualTo(2);
        ring.poll();
        assertThat(ring.peek(0)).isEqualTo(4);
        assertThat(ring.peek(1)).as("a record of width 2 keeps two longs, not the third").isEqualTo(5);
    }

    @Test
    void shouldStoreOnlyItsWidthSoRecordsDoNotOverlap()
    {
        final LongRing ring = new LongRing(3, 1);
        ring.add(10, 99, 99);
        ring.add(20, 99, 99);
        ring.add(30, 99, 99);
        assertThat(ring.peek(0)).isEqualTo(10);
        ring.poll();
        assertThat(ring.peek(0)).isEqualTo(20);
        ring.poll();
        assertThat(ring.peek(0)).isEqualTo(30);
    }

    @Test
    void shouldKeepDeadlinesThatWrapPastLongMaxValue()
    {
        final LongRing ring = new LongRing(4, 2);
        final long nearWrap = Long.MAX_VALUE - 5;
        ring.add(1, nearWrap, 0);
        ring.add(2, nearWrap + 10, 0); // wraps to a negative value
        assertThat(ring.peek(1) - nearWrap).isEqualTo(0);
        ring.poll();
        assertThat(ring.peek(1) - nearWrap).as("comparable by subtraction, as the parts compare deadlines").isEqualTo(10);
    }
}
