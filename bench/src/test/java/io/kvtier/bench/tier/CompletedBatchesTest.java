package io.kvtier.bench.tier;

import io.kvtier.spi.TierStatus;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class CompletedBatchesTest
{
    @Test
    void shouldHandBackABatchCompletedBeforeTheWaitWithoutSleeping()
    {
        final CompletedBatches done = new CompletedBatches(2);
        final BenchTierBatch batch = batch(done, 1);
        batch.load(new long[] {1}, new long[] {2}, 0, 1);
        batch.complete(0, TierStatus.OK);
        assertThat(done.await(TimeUnit.SECONDS.toNanos(5))).isSameAs(batch);
        assertThat(done.sleeps()).isZero();
    }

    @Test
    void shouldWakeTheWaitingThreadWhenABatchCompletesOnAnotherThread() throws InterruptedException
    {
        final CompletedBatches done = new CompletedBatches(1);
        final BenchTierBatch batch = batch(done, 0);
        batch.load(new long[] {1}, new long[] {2}, 0, 1);
        final Thread tier = Thread.ofPlatform().start(() ->
        {
            try
            {
                Thread.sleep(100);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
            batch.complete(0, TierStatus.OK);
        });
        assertThat(done.await(TimeUnit.SECONDS.toNanos(30))).isSameAs(batch);
        assertThat(done.sleeps()).as("the wait slept after its spins and yields").isPositive();
        tier.join();
        // The slot was emptied: nothing more to hand back.
        assertThat(done.await(TimeUnit.MILLISECONDS.toNanos(20))).isNull();
    }

    @Test
    void shouldGiveUpAfterItsTimeoutWhenNothingCompletes()
    {
        final CompletedBatches done = new CompletedBatches(3);
        final long start = System.nanoTime();
        assertThat(done.await(TimeUnit.MILLISECONDS.toNanos(50))).isNull();
        assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(50));
    }

    private static BenchTierBatch batch(final CompletedBatches done, final int slot)
    {
        final MemorySegment segment = Arena.ofAuto().allocate(4096);
        return new BenchTierBatch(new MemorySegment[] {segment}, completed -> done.completed(slot, completed));
    }
}
