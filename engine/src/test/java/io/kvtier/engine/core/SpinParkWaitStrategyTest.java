package io.kvtier.engine.core;

import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.dsl.Disruptor;
import com.lmax.disruptor.dsl.ProducerType;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hand-offs to a consumer that keeps going to sleep: a missed wake-up would leave it asleep until its
 * park times out, which here is a minute, so any missed wake-up fails the test by its bound. The
 * wake-up protocol is a Dekker pair; on x86 HotSpot fences every volatile store, so the store-load
 * reordering this guards against shows on weaker machines (aarch64) only.
 */
class SpinParkWaitStrategyTest
{
    @Test
    void shouldWakeAParkedConsumerForEveryPublication() throws Exception
    {
        final int events = 20_000;
        final CountDownLatch consumed = new CountDownLatch(events);
        final AtomicLong sum = new AtomicLong();
        final Disruptor<long[]> disruptor = new Disruptor<>(() -> new long[1], 64, Thread.ofPlatform().daemon(true).factory(), ProducerType.SINGLE,
            new SpinParkWaitStrategy(0, TimeUnit.MINUTES.toNanos(1)));
        disruptor.handleEventsWith((event, sequence, endOfBatch) ->
        {
            sum.addAndGet(event[0]);
            consumed.countDown();
        });
        final RingBuffer<long[]> ring = disruptor.start();
        try
        {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            for (int i = 1; i <= events; i++)
            {
                final long value = i;
                // A consumer stuck asleep fills the ring: give up at the deadline rather than block.
                while (!ring.tryPublishEvent((event, sequence) -> event[0] = value))
                {
                    assertThat(System.nanoTime()).as("the consumer drains the ring; event %d waits", value).isLessThan(deadline);
                    Thread.onSpinWait();
                }
                // Vary the gap so publications land before, during and after the consumer parks.
                final int gap = ThreadLocalRandom.current().nextInt(4);
                if (gap == 0)
                {
                    LockSupport.parkNanos(ThreadLocalRandom.current().nextInt(20_000));
                }
                else if (gap == 1)
                {
                    Thread.onSpinWait();
                }
            }
            assertThat(consumed.await(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)).as("every event consumed, none waiting on a missed wake-up").isTrue();
            assertThat(sum.get()).isEqualTo((long)events * (events + 1) / 2);
        }
        finally
        {
            disruptor.halt();
        }
    }
}
