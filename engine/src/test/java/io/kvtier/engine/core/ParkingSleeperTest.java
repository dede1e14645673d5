package io.kvtier.engine.core;

import com.lmax.disruptor.EventPoller;
import com.lmax.disruptor.RingBuffer;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hand-offs through a ring to a polling consumer that keeps going to sleep, as the engine thread does: a missed wake-up would leave it asleep until its
 * park times out, which here is a minute, so any missed wake-up fails the test by its bound. The
 * wake-up protocol is a Dekker pair; on x86 HotSpot fences every volatile store, so the store-load
 * reordering this guards against shows on weaker machines (aarch64) only.
 */
class ParkingSleeperTest
{
    @Test
    void shouldWakeAParkedConsumerForEveryPublication() throws Exception
    {
        final int events = 20_000;
        final CountDownLatch consumed = new CountDownLatch(events);
        final AtomicLong sum = new AtomicLong();
        final ParkingSleeper sleeper = new ParkingSleeper();
        final RingBuffer<long[]> ring = RingBuffer.createSingleProducer(() -> new long[1], 64, new RingSignal(sleeper));
        final EventPoller<long[]> poller = ring.newPoller();
        ring.addGatingSequences(poller.getSequence());
        final IdleStrategy idle = new BackoffIdleStrategy(0, 0, TimeUnit.MINUTES.toNanos(1), sleeper,
            () -> ring.getCursor() > poller.getSequence().get());
        final java.util.concurrent.atomic.AtomicBoolean running = new java.util.concurrent.atomic.AtomicBoolean(true);
        final int[] handled = new int[1];
        final EventPoller.Handler<long[]> handler = (event, sequence, endOfBatch) ->
        {
            sum.addAndGet(event[0]);
            consumed.countDown();
            handled[0]++;
            return true;
        };
        final Thread consumer = Thread.ofPlatform().daemon(true).start(() ->
        {
            while (running.get())
            {
                handled[0] = 0;
                try
                {
                    poller.poll(handler);
                }
                catch (final Exception ex)
                {
                    throw new IllegalStateException(ex);
                }
                idle.idle(handled[0]);
            }
        });
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
            running.set(false);
            sleeper.wake();
            consumer.join(TimeUnit.SECONDS.toMillis(10));
        }
    }
}
