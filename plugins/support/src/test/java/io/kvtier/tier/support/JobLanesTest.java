package io.kvtier.tier.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

class JobLanesTest
{
    /** Parks that never time out, so a lost wake-up hangs the test instead of hiding behind a timed park. */
    private static final long UNBOUNDED_PARK_NANOS = TimeUnit.HOURS.toNanos(1);
    private static final Duration HANG_DEADLINE = Duration.ofSeconds(60);

    @Test
    void shouldHandOutTheUrgentLaneFirstAndEachLaneInOrder() throws InterruptedException
    {
        final JobLanes<String> lanes = new JobLanes<>(8, 1);
        assertThat(lanes.offerBulk("w1")).isTrue();
        assertThat(lanes.offerBulk("w2")).isTrue();
        assertThat(lanes.offerUrgent("r1")).isTrue();
        assertThat(lanes.offerUrgent("r2")).isTrue();
        assertThat(lanes.pollUrgent()).isEqualTo("r1");
        assertThat(lanes.take(0)).isEqualTo("r2");
        assertThat(lanes.pollUrgent()).isNull();
        assertThat(lanes.take(0)).isEqualTo("w1");
        assertThat(lanes.poll()).isEqualTo("w2");
        assertThat(lanes.poll()).isNull();
    }

    @Test
    void shouldRejectWhenALaneIsFullWithoutBlockingTheOther()
    {
        final JobLanes<String> lanes = new JobLanes<>(2, 1);
        assertThat(lanes.capacity()).isEqualTo(2);
        assertThat(lanes.offerBulk("w1")).isTrue();
        assertThat(lanes.offerBulk("w2")).isTrue();
        assertThat(lanes.offerBulk("w3")).isFalse();
        assertThat(lanes.offerUrgent("r1")).as("a full bulk lane leaves room for reads").isTrue();
        assertThat(lanes.poll()).isEqualTo("r1");
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void shouldWakeAParkedConsumerForEitherLane(final boolean urgent)
    {
        final JobLanes<String> lanes = new JobLanes<>(8, 1, UNBOUNDED_PARK_NANOS);
        final AtomicReference<String> taken = new AtomicReference<>();
        final Thread consumer = Thread.ofPlatform().daemon(true).name("lanes-consumer").start(() ->
        {
            try
            {
                taken.set(lanes.take(0));
            }
            catch (final InterruptedException ex)
            {
                taken.set("interrupted");
            }
        });
        assertTimeoutPreemptively(HANG_DEADLINE, () ->
        {
            awaitParked(consumer);
            assertThat(urgent ? lanes.offerUrgent("x") : lanes.offerBulk("x")).isTrue();
            consumer.join();
        });
        assertThat(taken.get()).isEqualTo("x");
    }

    /**
     * Producers on both lanes, consumers taking from both: every element is delivered exactly once,
     * and with unbounded parks a lost wake-up would leave a consumer parked for good and hang the run.
     */
    @Test
    void shouldDeliverEveryElementOfBothLanesExactlyOnceUnderContention()
    {
        final int producers = 4;
        final int consumers = 3;
        final int perProducer = 20_000;
        final JobLanes<Integer> lanes = new JobLanes<>(16, consumers, UNBOUNDED_PARK_NANOS);
        final Integer poison = -1;
        final int[] deliveries = new int[producers * perProducer];
        final List<List<Integer>> received = new ArrayList<>();
        final List<Thread> threads = new ArrayList<>();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final CountDownLatch start = new CountDownLatch(1);
        for (int c = 0; c < consumers; c++)
        {
            final int index = c;
            final List<Integer> mine = new ArrayList<>();
            received.add(mine);
            threads.add(Thread.ofPlatform().daemon(true).name("consumer-" + c).unstarted(() ->
            {
                try
                {
                    start.await();
                    for (int value = lanes.take(index); value >= 0; value = lanes.take(index))
                    {
                        mine.add(value);
                    }
                }
                catch (final Throwable t)
                {
                    failure.compareAndSet(null, t);
                }
            }));
        }
        final List<Thread> producerThreads = new ArrayList<>();
        for (int p = 0; p < producers; p++)
        {
            final int first = p * perProducer;
            final boolean urgent = p % 2 == 0;
            producerThreads.add(Thread.ofPlatform().daemon(true).name("producer-" + p).unstarted(() ->
            {
                try
                {
                    start.await();
                    final ThreadLocalRandom random = ThreadLocalRandom.current();
                    for (int i = 0; i < perProducer; i++)
                    {
                        final Integer value = first + i;
                        while (!(urgent ? lanes.offerUrgent(value) : lanes.offerBulk(value)))
                        {
                            Thread.yield();
                        }
                        if (random.nextInt(8) == 0)
                        {
                            // Let the lanes run dry now and then, so consumers park and are woken.
                            LockSupport.parkNanos(random.nextInt(20_000));
                        }
                    }
                }
                catch (final Throwable t)
                {
                    failure.compareAndSet(null, t);
                }
            }));
        }
        threads.forEach(Thread::start);
        producerThreads.forEach(Thread::start);
        assertTimeoutPreemptively(HANG_DEADLINE, () ->
        {
            start.countDown();
            for (final Thread producer : producerThreads)
            {
                producer.join();
            }
            // Pills go in the bulk lane, which consumers reach only once the urgent lane is empty, after
            // every element of the bulk lane offered before them.
            for (int c = 0; c < consumers; c++)
            {
                while (!lanes.offerBulk(poison))
                {
                    Thread.yield();
                }
            }
            for (final Thread thread : threads)
            {
                thread.join();
            }
        }, () -> "hung: consumer states " + threads.stream().map(Thread::getState).toList());
        assertThat(failure.get()).isNull();
        for (final List<Integer> mine : received)
        {
            for (final int value : mine)
            {
                deliveries[value]++;
            }
        }
        for (int i = 0; i < deliveries.length; i++)
        {
            if (deliveries[i] != 1)
            {
                assertThat(deliveries[i]).as("deliveries of element %d", i).isEqualTo(1);
            }
        }
        assertThat(lanes.poll()).isNull();
    }

    private static void awaitParked(final Thread consumer) throws InterruptedException
    {
        while (consumer.getState() != Thread.State.TIMED_WAITING)
        {
            Thread.sleep(1);
        }
    }
}
