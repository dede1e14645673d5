package io.kvtier.bench.tier;

import org.junit.jupiter.api.Test;

import java.util.concurrent.LinkedBlockingQueue;

import static org.assertj.core.api.Assertions.assertThat;

class TierDriverTest
{
    @Test
    void shouldReturnABatchAlreadyDoneWithoutParking() throws Exception
    {
        final LinkedBlockingQueue<String> done = new LinkedBlockingQueue<>();
        done.add("first");
        done.add("second");
        assertThat(TierDriver.awaitBatch(done, 1)).isEqualTo("first");
        assertThat(TierDriver.awaitBatch(done, 1)).isEqualTo("second");
    }

    @Test
    void shouldStillGetABatchThatCompletesLongAfterItsPollsAndYields() throws Exception
    {
        final LinkedBlockingQueue<String> done = new LinkedBlockingQueue<>();
        // Handed back only once the waiter has spun and yielded its budget out, so it is found by the park.
        final Thread tier = Thread.ofPlatform().start(() ->
        {
            try
            {
                Thread.sleep(300);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
            done.add("late");
        });
        assertThat(TierDriver.awaitBatch(done, 60)).isEqualTo("late");
        tier.join();
    }

    @Test
    void shouldGiveNullWhenNothingCompletesWithinTheTimeout() throws Exception
    {
        assertThat(TierDriver.awaitBatch(new LinkedBlockingQueue<String>(), 1)).isNull();
    }
}
