package io.kvtier.collections;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class ParkingQueueTest
{
    /** Generous: a lost wake-up with unbounded parks hangs, and this turns the hang into a failure. */
    private static final Duration HANG_DEADLINE = Duration.ofSeconds(120);
    /** Parks that never end on their own, so only an unpark can wake a consumer. */
    private static final long UNBOUNDED_PARK_NANOS = TimeUnit.HOURS.toNanos(1);

    @Test
    void shouldRoundTheCapacityUpToAPowerOfTwoOfAtLeastTwo()
    {
        assertThat(new ParkingQueue<Integer>(1, 0).capacity()).isEqualTo(2);
        assertThat(new ParkingQueue<Integer>(2, 0).capacity()).isEqualTo(2);
        assertThat(new ParkingQueue<Integer>(3, 0).capacity()).isEqualTo(4);
        assertThat(new ParkingQueue<Integer>(4096, 0).capacity()).isEqualTo(4096);
        assertThat(new ParkingQueue<Integer>(4097, 3).capacity()).isEqualTo(8192);
        assertThat(new ParkingQueue<Integer>(4097, 3).consumers()).isEqualTo(3);
        assertThatThrownBy(() -> new ParkingQueue<Integer>(0, 0)).hasMessageContaining("capacity=0");
        assertThatThrownBy(() -> new ParkingQueue<Integer>(8, -1)).hasMessageContaining("consumers=-1");
    }

    @Test
    void shouldRejectWhenFullAndAcceptAgainAfterAPoll()
    {
        final ParkingQueue<Integer> queue = new ParkingQueue<>(4, 0);
        for (int i = 0; i < 4; i++)
        {
            assertThat(queue.offer(i)).isTrue();
        }
        assertThat(queue.offer(4)).isFalse();
        assertThat(queue.size()).isEqualTo(4);
        assertThat(queue.poll()).isEqualTo(0);
        assertThat(queue.offer(4)).isTrue();
        assertThat(queue.offer(5)).isFalse();
        for (int i = 1; i <= 4; i++)
        {
            assertThat(queue.poll()).isEqualTo(i);
        }
        assertThat(queue.poll()).isNull();
        assertThat(queue.isEmpty()).isTrue();
        assertThatThrownBy(() -> queue.offer(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void shouldTakeAtOnceWhenAnElementIsThereAndRejectAnUnknownConsumerIndex() throws InterruptedException
    {
        final ParkingQueue<String> queue = new ParkingQueue<>(8, 2);
        queue.offer("a");
        queue.offer("b");
        assertThat(queue.take(1)).isEqualTo("a");
        assertThatThrownBy(() -> queue.take(2)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> new ParkingQueue<String>(8, 0).take(0)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThat(queue.poll()).as("a rejected take leaves the queue alone").isEqualTo("b");
    }

    @Provide
    Arbitrary<List<Integer>> operations()
    {
        // Non-negative: offer that value; negative: poll. Offers a little likelier, so the queue fills.
        return Arbitraries.integers().between(-9, 10).list().ofMaxSize(400);
    }

    @Property(tries = 300)
    void shouldMatchABoundedArrayDeque(@ForAll @IntRange(min = 1, max = 17) final int requestedCapacity,
                                       @ForAll("operations") final List<Integer> operations)
    {
        final ParkingQueue<Integer> queue = new ParkingQueue<>(requestedCapacity, 1);
        final int capacity = queue.capacity();
        final ArrayDeque<Integer> model = new ArrayDeque<>();
        for (final int operation : operations)
        {
            if (operation >= 0)
            {
                final boolean accepted = model.size() < capacity;
                if (accepted)
                {
                    model.addLast(operation);
                }
                assertThat(queue.offer(operation)).as("offer with %d of %d held", model.size(), capacity).isEqualTo(accepted);
            }
            else
            {
                assertThat(queue.poll()).isEqualTo(model.pollFirst());
            }
            assertThat(queue.size()).isEqualTo(model.size());
            assertThat(queue.isEmpty()).isEqualTo(model.isEmpty());
        }
        while (!model.isEmpty())
        {
            assertThat(queue.poll()).isEqualTo(model.pollFirst());
        }
        assertThat(queue.poll()).isNull();
    }

    @Test
    void shouldWrapAroundManyTimesInFifoOrder()
    {
        final ParkingQueue<Integer> queue = new ParkingQueue<>(4, 0);
        int next = 0;
        int expected = 0;
        for (int lap = 0; lap < 1000; lap++)
        {
            while (queue.offer(next))
            {
                next++;
            }
            for (int i = 0; i < 1 + lap % 4; i++)
            {
                assertThat(queue.poll()).isEqualTo(expected++);
            }
        }
        while (!queue.isEmpty())
        {
            assertThat(queue.poll()).isEqualTo(expected++);
        }
        assertThat(expected).isEqualTo(next);
    }

    @Test
    void shouldWakeAParkedConsumer()
    {
        final ParkingQueue<String> queue = new ParkingQueue<>(8, 1, UNBOUNDED_PARK_NANOS);
        final AtomicReference<String> taken = new AtomicReference<>();
        final Thread consumer = Thread.ofPlatform().daemon(true).name("parking-consumer").start(() ->
        {
            try
            {
                taken.set(queue.take(0));
            }
            catch (final InterruptedException ex)
            {
                taken.set("interrupted");
            }
        });
        assertTimeoutPreemptively(HANG_DEADLINE, () ->
        {
            awaitParked(consumer);
            assertThat(queue.offer("x")).isTrue();
            consumer.join();
        });
        assertThat(taken.get()).isEqualTo("x");
    }

    @Test
    void shouldWakeADifferentParkedConsumerForEachElement()
    {
        final int consumers = 3;
        final ParkingQueue<String> queue = new ParkingQueue<>(8, consumers, UNBOUNDED_PARK_NANOS);
        final String[] taken = new String[consumers];
        final List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < consumers; c++)
        {
            final int index = c;
            threads.add(Thread.ofPlatform().daemon(true).name("parking-consumer-" + c).start(() ->
            {
                try
                {
                    taken[index] = queue.take(index);
                }
                catch (final InterruptedException ex)
                {
                    taken[index] = "interrupted";
                }
            }));
        }
        // Were two wake-ups to reach the same consumer, another would stay parked for good.
        assertTimeoutPreemptively(HANG_DEADLINE, () ->
        {
            for (final Thread thread : threads)
            {
                awaitParked(thread);
            }
            for (int i = 0; i < consumers; i++)
            {
                assertThat(queue.offer("e" + i)).isTrue();
            }
            for (final Thread thread : threads)
            {
                thread.join();
            }
        });
        assertThat(taken).containsExactlyInAnyOrder("e0", "e1", "e2");
    }

    @Test
    void shouldThrowOnInterruptAndStayUsable()
    {
        final ParkingQueue<String> queue = new ParkingQueue<>(8, 1, UNBOUNDED_PARK_NANOS);
        final AtomicReference<String> outcome = new AtomicReference<>();
        final Thread consumer = Thread.ofPlatform().daemon(true).name("parking-consumer").start(() ->
        {
            try
            {
                queue.take(0);
                outcome.set("took something");
            }
            catch (final InterruptedException ex)
            {
                outcome.set(Thread.currentThread().isInterrupted() ? "still interrupted" : "interrupted");
            }
        });
        assertTimeoutPreemptively(HANG_DEADLINE, () ->
        {
            awaitParked(consumer);
            consumer.interrupt();
            consumer.join();
        });
        assertThat(outcome.get()).isEqualTo("interrupted");
        assertThat(queue.offer("after")).isTrue();
        assertThat(queue.poll()).isEqualTo("after");
    }

    private static void awaitParked(final Thread consumer) throws InterruptedException
    {
        while (consumer.getState() != Thread.State.TIMED_WAITING)
        {
            Thread.sleep(1);
        }
    }

    /**
     * Several producers and consumers hand over every element exactly once, each consumer sees each
     * producer's elements in order, and nothing is lost: with unbounded parks, a lost wake-up would
     * leave a consumer parked for good and the run would hang. Flat-out producers keep the small ring
     * full and wrapping; paced ones let it run dry, so consumers park and are woken over and over.
     */
    @ParameterizedTest(name = "unbounded parks {0}, paced producers {1}")
    @CsvSource({"true, false", "true, true", "false, false", "false, true"})
    void shouldDeliverEveryElementExactlyOnceUnderContention(final boolean unboundedParks, final boolean paced)
    {
        final int producers = 3;
        final int consumers = 3;
        final int perProducer = paced ? 20_000 : 100_000;
        final ParkingQueue<Integer> queue = unboundedParks
            ? new ParkingQueue<>(16, consumers, UNBOUNDED_PARK_NANOS)
            : new ParkingQueue<>(16, consumers);
        final Integer poison = -1;
        final Integer[] values = new Integer[producers * perProducer];
        for (int i = 0; i < values.length; i++)
        {
            values[i] = i;
        }
        final int[] deliveries = new int[values.length];
        final List<List<Integer>> received = new ArrayList<>();
        final List<Thread> threads = new ArrayList<>();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final CountDownLatch start = new CountDownLatch(1);

        for (int c = 0; c < consumers; c++)
        {
            final int index = c;
            final List<Integer> mine = new ArrayList<>(values.length / consumers);
            received.add(mine);
            threads.add(Thread.ofPlatform().daemon(true).name("consumer-" + c).unstarted(() ->
            {
                try
                {
                    start.await();
                    for (int value = queue.take(index); value >= 0; value = queue.take(index))
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
            producerThreads.add(Thread.ofPlatform().daemon(true).name("producer-" + p).unstarted(() ->
            {
                try
                {
                    start.await();
                    final ThreadLocalRandom random = ThreadLocalRandom.current();
                    for (int i = 0; i < perProducer; i++)
                    {
                        // A full queue is normal here (capacity 16); consumers drain it.
                        while (!queue.offer(values[first + i]))
                        {
                            Thread.yield();
                        }
                        if (paced && random.nextInt(4) == 0)
                        {
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
            // Every element was offered before the pills, and the queue is FIFO: each consumer meets
            // its pill only after all elements are taken.
            for (int c = 0; c < consumers; c++)
            {
                while (!queue.offer(poison))
                {
                    Thread.yield();
                }
            }
            for (final Thread thread : threads)
            {
                thread.join();
            }
        }, () -> "hung: waiting count " + queue.waiting + ", size " + queue.size() + ", consumer states "
            + threads.stream().map(Thread::getState).toList());

        assertThat(failure.get()).isNull();
        for (final List<Integer> mine : received)
        {
            final int[] lastPerProducer = new int[producers];
            Arrays.fill(lastPerProducer, -1);
            for (final int value : mine)
            {
                deliveries[value]++;
                final int producer = value / perProducer;
                assertThat(value).as("FIFO per producer as one consumer sees it").isGreaterThan(lastPerProducer[producer]);
                lastPerProducer[producer] = value;
            }
        }
        for (int i = 0; i < deliveries.length; i++)
        {
            if (deliveries[i] != 1)
            {
                assertThat(deliveries[i]).as("deliveries of element %d", i).isEqualTo(1);
            }
        }
        assertThat(queue.isEmpty()).isTrue();
        assertThat(queue.waiting).isZero();
    }

    @Test
    void shouldNotAllocateToOfferAndPoll()
    {
        assumeTrue(ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean, "no per-thread allocation counter");
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isThreadAllocatedMemorySupported(), "no per-thread allocation counter");
        threads.setThreadAllocatedMemoryEnabled(true);

        final ParkingQueue<Integer> queue = new ParkingQueue<>(64, 1);
        final Integer element = 42;
        // Measure windows until one is clean: the interpreter and the JIT allocate while they warm up.
        long best = Long.MAX_VALUE;
        for (int window = 0; window < 50 && best > 0; window++)
        {
            final long before = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < 100_000; i++)
            {
                queue.offer(element);
                queue.offer(element);
                queue.poll();
                queue.poll();
            }
            best = Math.min(best, threads.getCurrentThreadAllocatedBytes() - before);
        }
        assertThat(best).as("bytes allocated by 400,000 offers and polls in the best window").isZero();
    }
}
