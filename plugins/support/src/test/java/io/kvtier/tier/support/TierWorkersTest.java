package io.kvtier.tier.support;

import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierStatus;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TierWorkersTest
{
    private static final System.Logger LOGGER = System.getLogger(TierWorkersTest.class.getName());
    private static final long WAIT_SECONDS = 30;

    private final List<TierWorkers> opened = new ArrayList<>();

    @AfterEach
    void closeWorkers()
    {
        for (final TierWorkers workers : opened)
        {
            workers.close(Duration.ofSeconds(WAIT_SECONDS));
        }
    }

    @Test
    void shouldCompleteEveryKeyOnceThroughTheHandler() throws InterruptedException
    {
        final TierWorkers workers = start(List.of(new Echo(TierStatus.OK, 3), new Echo(TierStatus.OK, 3)), 16, true);
        final Batch batch = new Batch(100);
        workers.submit(TierWorkers.WRITE, batch);
        batch.await();
        assertThat(batch.statuses).containsOnly(TierStatus.OK);
        assertThat(batch.completions.get()).isEqualTo(100);
    }

    @Test
    void shouldClaimWhatTheHandlerAsksForGivenTheJobsSizeAndSharers() throws InterruptedException
    {
        final List<String> asked = Collections.synchronizedList(new ArrayList<>());
        final List<Integer> claims = Collections.synchronizedList(new ArrayList<>());
        final List<TierWorkers.Handler> handlers = new ArrayList<>();
        for (int w = 0; w < 2; w++)
        {
            handlers.add(new TierWorkers.Handler()
            {
                @Override
                public int claimSize(final int operation)
                {
                    return 32;
                }

                @Override
                public int claimSize(final int operation, final int jobSize, final int sharers)
                {
                    asked.add(operationName(operation) + " of " + jobSize + " keys, " + sharers + " sharers");
                    return (jobSize + sharers - 1) / sharers;
                }

                @Override
                public void serve(final TierWorkers.Claim claim)
                {
                    claims.add(claim.to() - claim.from());
                    for (int i = claim.from(); i < claim.to(); i++)
                    {
                        claim.complete(i, TierStatus.OK);
                    }
                }
            });
        }
        final TierWorkers workers = start(handlers, 16, true);
        final Batch batch = new Batch(16);
        workers.submit(TierWorkers.WRITE, batch);
        batch.await();
        assertThat(batch.statuses).containsOnly(TierStatus.OK);
        // Not 32 at once, as claimSize(operation) alone would have it: the job's 16 keys in halves, whichever worker takes each.
        assertThat(claims).containsExactly(8, 8);
        assertThat(asked).isNotEmpty().containsOnly("write of 16 keys, 2 sharers");
    }

    @Test
    void shouldAnswerClosedToASubmitAfterClose()
    {
        final TierWorkers workers = start(List.of(new Echo(TierStatus.OK, 1)), 16, true);
        assertThat(workers.close(Duration.ofSeconds(WAIT_SECONDS))).isTrue();
        final Batch batch = new Batch(3);
        workers.submit(TierWorkers.READ, batch);
        assertThat(batch.completions.get()).as("completed before submit returned").isEqualTo(3);
        assertThat(batch.statuses).containsOnly(TierStatus.CLOSED);
    }

    @Test
    void shouldRejectABatchWhenItsLaneIsFullAndKeepTheOtherLaneOpen() throws InterruptedException
    {
        final Gate gate = new Gate();
        final TierWorkers workers = start(List.of(gate), 2, true);
        final Batch first = new Batch(1);
        workers.submit(TierWorkers.WRITE, first);
        gate.awaitEntered();
        final Batch queued = new Batch(1);
        final Batch alsoQueued = new Batch(1);
        workers.submit(TierWorkers.WRITE, queued);
        workers.submit(TierWorkers.WRITE, alsoQueued);
        final Batch rejected = new Batch(2);
        workers.submit(TierWorkers.REMOVE, rejected);
        assertThat(rejected.completions.get()).as("answered before submit returned").isEqualTo(2);
        assertThat(rejected.statuses).containsOnly(TierStatus.REJECTED);
        final Batch read = new Batch(1);
        workers.submit(TierWorkers.READ, read);
        assertThat(read.completions.get()).as("a full bulk lane leaves room for reads").isZero();
        gate.open.countDown();
        for (final Batch batch : List.of(first, queued, alsoQueued, read))
        {
            batch.await();
            assertThat(batch.statuses).containsOnly(TierStatus.OK);
        }
    }

    @Test
    void shouldServeUrgentJobsBeforeQueuedBulkOnesAndBetweenClaimsOfABulkJob() throws InterruptedException
    {
        final Gate gate = new Gate();
        final TierWorkers workers = start(List.of(gate), 16, true);
        final Batch blocker = new Batch(3);
        workers.submit(TierWorkers.WRITE, blocker);
        gate.awaitEntered();
        final Batch write = new Batch(2);
        final Batch read = new Batch(2);
        workers.submit(TierWorkers.WRITE, write);
        workers.submit(TierWorkers.READ, read);
        gate.open.countDown();
        blocker.await();
        write.await();
        read.await();
        // The read comes after the first key of a bulk job that is under way, and before the rest of it and
        // before the write queued ahead of it.
        assertThat(gate.order).containsExactly("write[0,1)", "read[0,1)", "read[1,2)", "write[1,2)", "write[2,3)", "write[0,1)", "write[1,2)");
    }

    @Test
    void shouldKeepSubmissionOrderWithoutAnUrgentLane() throws InterruptedException
    {
        final Gate gate = new Gate();
        final TierWorkers workers = start(List.of(gate), 16, false);
        final Batch blocker = new Batch(1);
        workers.submit(TierWorkers.REMOVE, blocker);
        gate.awaitEntered();
        final Batch remove = new Batch(1);
        final Batch probe = new Batch(1);
        workers.submit(TierWorkers.REMOVE, remove);
        workers.submit(TierWorkers.EXISTS, probe);
        gate.open.countDown();
        remove.await();
        probe.await();
        assertThat(gate.order).containsExactly("remove[0,1)", "remove[0,1)", "exists[0,1)");
    }

    @Test
    void shouldAnswerTheRestOfAClaimAsFailedWhenTheHandlerThrowsAndKeepServing() throws InterruptedException
    {
        final TierWorkers.Handler failing = new TierWorkers.Handler()
        {
            @Override
            public int claimSize(final int operation)
            {
                return 4;
            }

            @Override
            public void serve(final TierWorkers.Claim claim)
            {
                claim.complete(claim.from(), TierStatus.OK);
                if (claim.batch() instanceof Batch b && b.size() == 4)
                {
                    throw new IllegalStateException("injected");
                }
                for (int i = claim.from() + 1; i < claim.to(); i++)
                {
                    claim.complete(i, TierStatus.OK);
                }
            }
        };
        final TierWorkers workers = start(List.of(failing), 16, true);
        final Batch failed = new Batch(4);
        workers.submit(TierWorkers.WRITE, failed);
        failed.await();
        assertThat(failed.statuses).containsExactly(TierStatus.OK, TierStatus.IO_ERROR, TierStatus.IO_ERROR, TierStatus.IO_ERROR);
        assertThat(failed.completions.get()).as("each key once").isEqualTo(4);

        final Batch next = new Batch(3);
        workers.submit(TierWorkers.WRITE, next);
        next.await();
        assertThat(next.statuses).containsOnly(TierStatus.OK);
        assertThat(workers.threads().getFirst().isAlive()).isTrue();
    }

    @Test
    void shouldAnswerAKeyTheHandlerForgotAsFailedButNotOneItHandedOff() throws InterruptedException
    {
        final List<Integer> handedOff = Collections.synchronizedList(new ArrayList<>());
        final TierWorkers.Handler forgetful = new TierWorkers.Handler()
        {
            @Override
            public int claimSize(final int operation)
            {
                return Integer.MAX_VALUE;
            }

            @Override
            public void serve(final TierWorkers.Claim claim)
            {
                claim.complete(0, TierStatus.OK);
                claim.handOff(1);
                handedOff.add(1);
            }
        };
        final TierWorkers workers = start(List.of(forgetful), 16, true);
        final Batch batch = new Batch(3);
        workers.submit(TierWorkers.READ, batch);
        awaitCompletions(batch, 2);
        assertThat(batch.statuses).containsExactly(TierStatus.OK, null, TierStatus.IO_ERROR);
        batch.complete(1, TierStatus.NOT_FOUND);
        assertThat(batch.statuses).containsExactly(TierStatus.OK, TierStatus.NOT_FOUND, TierStatus.IO_ERROR);
        assertThat(handedOff).containsExactly(1);
    }

    @Test
    void shouldAnswerQueuedWorkClosedAndStopTheWorkersOnClose() throws InterruptedException
    {
        final Gate gate = new Gate();
        final TierWorkers workers = start(List.of(gate), 16, true);
        final Batch running = new Batch(1);
        workers.submit(TierWorkers.WRITE, running);
        gate.awaitEntered();
        final Batch queuedWrite = new Batch(5);
        final Batch queuedRead = new Batch(2);
        workers.submit(TierWorkers.WRITE, queuedWrite);
        workers.submit(TierWorkers.READ, queuedRead);

        final Thread closer = Thread.ofPlatform().daemon(true).start(() -> workers.close(Duration.ofSeconds(WAIT_SECONDS)));
        awaitClosed(workers);
        gate.open.countDown();
        closer.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
        assertThat(closer.isAlive()).as("close returned").isFalse();

        assertThat(running.statuses).as("the key a worker was on finishes").containsOnly(TierStatus.OK);
        assertThat(queuedWrite.statuses).containsOnly(TierStatus.CLOSED);
        assertThat(queuedRead.statuses).containsOnly(TierStatus.CLOSED);
        assertThat(workers.threads()).allSatisfy(thread -> assertThat(thread.isAlive()).isFalse());
        assertThat(workers.close(Duration.ofSeconds(1))).as("idempotent, same answer").isTrue();
    }

    @Test
    void shouldAnswerPendingWorkAndSayTheWorkersDidNotStopWhenOneOutlivesTheDeadline() throws InterruptedException
    {
        final Gate stuck = new Gate();
        final TierWorkers workers = start(List.of(stuck), 16, true);
        final Batch hung = new Batch(1);
        workers.submit(TierWorkers.WRITE, hung);
        stuck.awaitEntered();
        final Batch pending = new Batch(3);
        workers.submit(TierWorkers.READ, pending);

        assertThat(workers.close(Duration.ofMillis(50))).as("a worker is stuck in its call").isFalse();
        assertThat(pending.statuses).as("answered by close itself").containsOnly(TierStatus.CLOSED);
        assertThat(hung.completions.get()).isZero();

        stuck.open.countDown();
        hung.await();
        assertThat(hung.statuses).containsOnly(TierStatus.OK);
        workers.threads().getFirst().join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
        assertThat(workers.threads().getFirst().isAlive()).as("the late worker still meets its poison").isFalse();
    }

    /** A tier with several sets of workers (3FS: read, write, meta) stops them all taking work before waiting for any. */
    @Test
    void shouldAnswerClosedInEverySetOnceEachBeganClosingBeforeAnyIsAwaited() throws InterruptedException
    {
        final Gate gate = new Gate();
        final TierWorkers busy = start(List.of(gate), 16, false);
        final TierWorkers other = start(List.of(new Echo(TierStatus.OK, 1)), 16, false);
        final Batch running = new Batch(1);
        busy.submit(TierWorkers.READ, running);
        gate.awaitEntered();
        final Batch queued = new Batch(2);
        busy.submit(TierWorkers.READ, queued);

        busy.beginClose();
        other.beginClose();
        final Batch late = new Batch(2);
        other.submit(TierWorkers.WRITE, late);
        assertThat(late.statuses).as("the other set refuses work before the first is awaited").containsOnly(TierStatus.CLOSED);

        gate.open.countDown();
        assertThat(busy.awaitStopped(Duration.ofSeconds(WAIT_SECONDS))).isTrue();
        assertThat(other.awaitStopped(Duration.ofSeconds(WAIT_SECONDS))).isTrue();
        assertThat(running.statuses).containsOnly(TierStatus.OK);
        assertThat(queued.statuses).containsOnly(TierStatus.CLOSED);
        assertThatThrownBy(() -> start(List.of(new Echo(TierStatus.OK, 1)), 16, false).awaitStopped(Duration.ofSeconds(1)))
            .isInstanceOf(IllegalStateException.class).hasMessageContaining("awaitStopped before beginClose");
    }

    @Test
    void shouldCloseFromACompletionCallbackOnAWorkerThread() throws InterruptedException
    {
        final AtomicInteger closes = new AtomicInteger();
        final TierWorkers[] holder = new TierWorkers[1];
        final TierWorkers workers = start(List.of(new Echo(TierStatus.OK, 1)), 2, true);
        holder[0] = workers;
        final Batch closing = new Batch(3)
        {
            @Override
            public void complete(final int index, final TierStatus status)
            {
                super.complete(index, status);
                if (index == 0)
                {
                    assertThat(holder[0].close(Duration.ofSeconds(WAIT_SECONDS))).isTrue();
                    closes.incrementAndGet();
                }
            }
        };
        workers.submit(TierWorkers.WRITE, closing);
        closing.await();
        assertThat(closes.get()).isEqualTo(1);
        assertThat(closing.statuses).containsExactly(TierStatus.OK, TierStatus.CLOSED, TierStatus.CLOSED);
        workers.threads().getFirst().join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
        assertThat(workers.threads().getFirst().isAlive()).isFalse();
    }

    @Test
    void shouldShareABatchBetweenWorkersByClaims() throws InterruptedException
    {
        final CountDownLatch bothIn = new CountDownLatch(2);
        final List<String> threads = Collections.synchronizedList(new ArrayList<>());
        final TierWorkers.Handler meeting = new TierWorkers.Handler()
        {
            @Override
            public int claimSize(final int operation)
            {
                return 1;
            }

            @Override
            public void serve(final TierWorkers.Claim claim)
            {
                threads.add(Thread.currentThread().getName());
                bothIn.countDown();
                try
                {
                    // Each of the first two keys waits for the other: only two workers at once complete them.
                    assertThat(bothIn.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("a second worker claimed a key").isTrue();
                }
                catch (final InterruptedException ex)
                {
                    throw new IllegalStateException(ex);
                }
                claim.complete(claim.from(), TierStatus.OK);
            }
        };
        final TierWorkers workers = start(List.of(meeting, meeting), 16, true);
        final Batch batch = new Batch(2);
        workers.submit(TierWorkers.READ, batch);
        batch.await();
        assertThat(batch.statuses).containsOnly(TierStatus.OK);
        assertThat(Set.copyOf(threads)).hasSize(2);
    }

    @Test
    void shouldRefuseAMarkOutsideTheClaim() throws InterruptedException
    {
        final TierWorkers.Handler wrong = new TierWorkers.Handler()
        {
            @Override
            public int claimSize(final int operation)
            {
                return 1;
            }

            @Override
            public void serve(final TierWorkers.Claim claim)
            {
                assertThatThrownBy(() -> claim.complete(claim.to(), TierStatus.OK)).isInstanceOf(IndexOutOfBoundsException.class);
                claim.complete(claim.from(), TierStatus.OK);
            }
        };
        final TierWorkers workers = start(List.of(wrong), 16, true);
        final Batch batch = new Batch(2);
        workers.submit(TierWorkers.EXISTS, batch);
        batch.await();
        assertThat(batch.statuses).containsOnly(TierStatus.OK);
    }

    private TierWorkers start(final List<? extends TierWorkers.Handler> handlers, final int laneCapacity, final boolean urgentLane)
    {
        final TierWorkers workers = new TierWorkers("test tier", "test-worker", handlers, laneCapacity, urgentLane, LOGGER);
        opened.add(workers);
        workers.start();
        return workers;
    }

    private static void awaitClosed(final TierWorkers workers) throws InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (!workers.isClosed())
        {
            assertThat(System.nanoTime() - deadline).as("close never began").isNegative();
            Thread.sleep(1);
        }
    }

    private static void awaitCompletions(final Batch batch, final int count) throws InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (batch.completions.get() < count)
        {
            assertThat(System.nanoTime() - deadline).as("only " + batch.completions.get() + " of " + count + " keys completed").isNegative();
            Thread.sleep(1);
        }
    }

    private static String operationName(final int operation)
    {
        return switch (operation)
        {
            case TierWorkers.EXISTS -> "exists";
            case TierWorkers.READ -> "read";
            case TierWorkers.WRITE -> "write";
            default -> "remove";
        };
    }

    /** Completes every key of its claims with one status. */
    private record Echo(TierStatus status, int claimSize) implements TierWorkers.Handler
    {
        @Override
        public int claimSize(final int operation)
        {
            return claimSize;
        }

        @Override
        public void serve(final TierWorkers.Claim claim)
        {
            for (int i = claim.from(); i < claim.to(); i++)
            {
                claim.complete(i, status);
            }
        }
    }

    /** Holds its first claim until opened, and records the claims it serves, one key each. */
    private static final class Gate implements TierWorkers.Handler
    {
        private final CountDownLatch entered = new CountDownLatch(1);
        private final CountDownLatch open = new CountDownLatch(1);
        private final List<String> order = Collections.synchronizedList(new ArrayList<>());

        @Override
        public int claimSize(final int operation)
        {
            return 1;
        }

        @Override
        public void serve(final TierWorkers.Claim claim)
        {
            order.add(operationName(claim.operation()) + "[" + claim.from() + "," + claim.to() + ")");
            entered.countDown();
            try
            {
                if (!open.await(WAIT_SECONDS, TimeUnit.SECONDS))
                {
                    throw new IllegalStateException("the test never opened the gate");
                }
            }
            catch (final InterruptedException ex)
            {
                throw new IllegalStateException(ex);
            }
            claim.complete(claim.from(), TierStatus.OK);
        }

        void awaitEntered() throws InterruptedException
        {
            assertThat(entered.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("the worker took the first job").isTrue();
        }
    }

    /** A batch recording each key's status and how many completions arrived. */
    private static class Batch implements TierBatch
    {
        private final TierStatus[] statuses;
        private final AtomicInteger completions = new AtomicInteger();
        private final CountDownLatch done;

        Batch(final int size)
        {
            statuses = new TierStatus[size];
            done = new CountDownLatch(size);
        }

        @Override
        public int size()
        {
            return statuses.length;
        }

        @Override
        public long keyHigh(final int index)
        {
            return index;
        }

        @Override
        public long keyLow(final int index)
        {
            return ~index;
        }

        @Override
        public MemorySegment segment(final int index)
        {
            return MemorySegment.NULL;
        }

        @Override
        public void complete(final int index, final TierStatus status)
        {
            if (statuses[index] != null)
            {
                throw new IllegalStateException("key " + index + " completed twice: " + statuses[index] + " then " + status);
            }
            statuses[index] = status;
            completions.incrementAndGet();
            done.countDown();
        }

        void await() throws InterruptedException
        {
            assertThat(done.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("every key completed; " + completions.get() + " of " + statuses.length).isTrue();
        }
    }
}
