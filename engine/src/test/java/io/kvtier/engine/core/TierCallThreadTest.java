package io.kvtier.engine.core;

import io.kvtier.engine.ManualClock;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierStatus;
import io.kvtier.spi.TierUsage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A tier's call thread on its own: it makes the calls the engine thread hands it, records each call's
 * start and end where another thread reads them, lets a batch come back only once its call returned,
 * skips a batch the engine took back, and turns a plugin's exception into I/O errors.
 */
class TierCallThreadTest
{
    @TempDir
    Path dir;

    private final ManualClock clock = new ManualClock();
    private final List<TierIoBatch> handedBack = new CopyOnWriteArrayList<>();
    private PagePool pool;
    private TierCallThread calls;

    /** A tier whose calls block until the test lets them go, then complete each key NOT_FOUND, or throw. */
    private static final class GatedTier implements StorageTier
    {
        final AtomicInteger calls = new AtomicInteger();
        final CountDownLatch gate = new CountDownLatch(1);
        volatile boolean completeInsideTheCall;
        volatile boolean throwFromTheCall;

        @Override
        public String name()
        {
            return "gated";
        }

        private void call(final TierBatch batch)
        {
            calls.incrementAndGet();
            if (completeInsideTheCall)
            {
                for (int i = 0; i < batch.size(); i++)
                {
                    batch.complete(i, TierStatus.NOT_FOUND);
                }
            }
            if (throwFromTheCall)
            {
                throw new IllegalStateException("scripted plugin failure");
            }
            try
            {
                gate.await();
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public void exists(final TierBatch batch)
        {
            call(batch);
        }

        @Override
        public void read(final TierBatch batch)
        {
            call(batch);
        }

        @Override
        public void write(final TierBatch batch)
        {
            call(batch);
        }

        @Override
        public void remove(final TierBatch batch)
        {
            call(batch);
        }

        @Override
        public TierUsage usage()
        {
            return new TierUsage(0, TierUsage.UNBOUNDED, 0);
        }

        @Override
        public void close()
        {
        }
    }

    @BeforeEach
    void createPool() throws IOException
    {
        pool = PagePool.create(dir.resolve("pool"), 4096, 4, 32, 1, Duration.ofSeconds(30));
    }

    @AfterEach
    void stop()
    {
        if (calls != null)
        {
            calls.stop(1000);
        }
        pool.close();
    }

    private TierIoBatch queued(final int keys)
    {
        final TierIoBatch batch = new TierIoBatch(0, TierIoBatch.EXISTS, 4, pool, handedBack::add);
        for (int i = 0; i < keys; i++)
        {
            batch.add(5, i + 1, 0, new io.kvtier.client.L3ObjectName(""), -1, 1, i, 7);
        }
        batch.arm(clock.nanoTime());
        batch.callQueuedRelease();
        return batch;
    }

    private static void await(final BooleanSupplier condition, final String what)
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean())
        {
            assertThat(System.nanoTime() - deadline).as("gave up waiting for: %s", what).isNegative();
            java.util.concurrent.locks.LockSupport.parkNanos(100_000);
        }
    }

    @Test
    void shouldCallOnItsOwnThreadRecordTheCallAndHandTheBatchBackOnlyOnceTheCallReturned()
    {
        final GatedTier tier = new GatedTier();
        tier.completeInsideTheCall = true;
        calls = new TierCallThread(tier, "gated", clock, 4, watch());
        calls.start();
        assertThat(calls.callStartedNanos()).isZero();
        assertThat(calls.isIdle()).isTrue();

        final TierIoBatch batch = queued(2);
        assertThat(calls.hand(batch)).isTrue();
        await(() -> calls.callStartedNanos() != 0, "the call starts");

        assertThat(calls.callStartedNanos()).as("on the engine's clock").isEqualTo(clock.nanoTime());
        assertThat(calls.isIdle()).isFalse();
        assertThat(calls.thread().getName()).isEqualTo("kvtier-tier-gated");
        // The call's start is recorded before the tier is entered: wait for the tier to have completed the keys.
        await(() -> batch.status[0] == TierStatus.NOT_FOUND && batch.status[1] == TierStatus.NOT_FOUND, "the tier completes both keys inside the call");
        assertThat(handedBack).as("every key is complete, but the call has not returned").isEmpty();

        tier.gate.countDown();
        await(() -> calls.callsFinished() == 1, "the call returns");
        assertThat(calls.callStartedNanos()).isZero();
        await(() -> !handedBack.isEmpty(), "the batch comes back");
        assertThat(handedBack).containsExactly(batch);
    }

    @Test
    void shouldNotCallABatchTheEngineTookBackWhileItWaitedBehindAStuckCall()
    {
        final GatedTier tier = new GatedTier();
        calls = new TierCallThread(tier, "gated", clock, 4, watch());
        calls.start();
        final TierIoBatch stuck = queued(1);
        final TierIoBatch behind = queued(1);
        calls.hand(stuck);
        calls.hand(behind);
        await(() -> tier.calls.get() == 1, "the first call starts");

        assertThat(behind.compareAndSetCallState(TierIoBatch.CALL_REFUSED)).as("the engine takes it back").isTrue();
        tier.gate.countDown();
        await(() -> calls.callsFinished() == 1 && calls.isIdle(), "the stuck call returns and the queue drains");

        assertThat(tier.calls.get()).as("the refused batch is never handed to the tier").isEqualTo(1);
        assertThat(stuck.compareAndSetCallState(TierIoBatch.CALL_REFUSED)).as("a batch being called cannot be taken back").isFalse();
    }

    @Test
    void shouldTurnWhatThePluginThrowsIntoIoErrorsForTheKeysItLeft()
    {
        final GatedTier tier = new GatedTier();
        tier.throwFromTheCall = true;
        calls = new TierCallThread(tier, "gated", clock, 4, watch());
        calls.start();
        final TierIoBatch batch = queued(2);
        calls.hand(batch);

        await(() -> !handedBack.isEmpty(), "the batch comes back");
        assertThat(batch.status).startsWith(TierStatus.IO_ERROR, TierStatus.IO_ERROR);
        assertThat(batch.pluginFailure).isInstanceOf(IllegalStateException.class).hasMessage("scripted plugin failure");
        assertThat(calls.callsFinished()).isEqualTo(1);
    }

    /** A watch over a counters region of the test's own, as the engine's pipeline keeps one over the pool's. */
    private static io.kvtier.engine.status.ThreadWatch watch()
    {
        return new io.kvtier.engine.status.ThreadWatch(new io.kvtier.engine.pool.Counters(java.lang.foreign.Arena.ofAuto().allocate(
            io.kvtier.client.pool.CountersDescriptor.REGION_LENGTH, 64)), java.util.concurrent.TimeUnit.SECONDS.toNanos(60));
    }
}
