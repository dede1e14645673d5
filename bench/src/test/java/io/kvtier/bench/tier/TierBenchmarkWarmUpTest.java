package io.kvtier.bench.tier;

import io.kvtier.bench.workload.JitSettling;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** The tier benchmark's warm-up: rounds until the JIT compilers settle, at least one, and no longer than its limit. */
class TierBenchmarkWarmUpTest
{
    private static final long MS = 1_000_000L;
    private static final long ROUND_NANOS = 100 * MS;

    @Test
    void shouldGoOnWhileTheCompilersAreBusyAndStopOnceTheySettle() throws InterruptedException
    {
        final AtomicLong now = new AtomicLong();
        final AtomicLong compiled = new AtomicLong();
        // Half a core compiling for the first 3 s of rounds, nothing after.
        final int rounds = TierBenchmark.warmUp(() ->
        {
            now.addAndGet(ROUND_NANOS);
            if (now.get() <= 3_000 * MS)
            {
                compiled.addAndGet(ROUND_NANOS / MS / 2);
            }
        }, new JitSettling(compiled::get), now::get, 30_000 * MS);
        assertThat((long)rounds * ROUND_NANOS)
            .as("warmed up past the compiling and a whole window of quiet after it, then stopped")
            .isGreaterThanOrEqualTo(3_000 * MS + JitSettling.WINDOW_NANOS)
            .isLessThanOrEqualTo(3_000 * MS + JitSettling.WINDOW_NANOS + 2 * ROUND_NANOS);
    }

    @Test
    void shouldStopAtItsLimitWhenTheCompilersNeverSettle() throws InterruptedException
    {
        final AtomicLong now = new AtomicLong();
        final AtomicLong compiled = new AtomicLong();
        final int rounds = TierBenchmark.warmUp(() ->
        {
            now.addAndGet(ROUND_NANOS);
            compiled.addAndGet(ROUND_NANOS / MS);
        }, new JitSettling(compiled::get), now::get, 2_000 * MS);
        assertThat(rounds).as("rounds of 100 ms until the limit of 2 s").isEqualTo(20);
    }

    @Test
    void shouldStopAQuietWindowAfterTheFirstRoundWhenNothingCompiles() throws InterruptedException
    {
        final AtomicLong now = new AtomicLong();
        final int rounds = TierBenchmark.warmUp(() -> now.addAndGet(ROUND_NANOS), new JitSettling(() -> 0), now::get, 30_000 * MS);
        assertThat((long)rounds * ROUND_NANOS).as("the first round, then a window of rounds without compiling")
            .isEqualTo(ROUND_NANOS + JitSettling.WINDOW_NANOS);
    }

    @Test
    void shouldNotTakeALongColdFirstRoundForSettledCompilers() throws InterruptedException
    {
        final AtomicLong now = new AtomicLong();
        final AtomicLong compiled = new AtomicLong();
        // The first round makes the tier's extent: a second with nothing hot enough to compile. Then the rounds
        // make the code hot and the compilers use half a core until 3 s, and nothing after.
        final int rounds = TierBenchmark.warmUp(() ->
        {
            final boolean first = now.get() == 0;
            now.addAndGet(first ? 1_000 * MS : ROUND_NANOS);
            if (!first && now.get() <= 3_000 * MS)
            {
                compiled.addAndGet(ROUND_NANOS / MS / 2);
            }
        }, new JitSettling(compiled::get), now::get, 30_000 * MS);
        assertThat(now.get()).as("went on through the compiling that began after the first round (%d rounds)", rounds)
            .isGreaterThanOrEqualTo(3_000 * MS + JitSettling.WINDOW_NANOS);
    }
}
