package io.kvtier.bench.workload;

import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** The warm-up's wait for the JIT: settled only after a whole window of little compiling. */
class JitSettlingTest
{
    private static final long MS = 1_000_000L;

    @Test
    void shouldNotCallTheCompilersSettledBeforeAWholeWindowWasSeen()
    {
        final AtomicLong compiled = new AtomicLong();
        final JitSettling jit = new JitSettling(compiled::get);
        for (long t = 0; t < JitSettling.WINDOW_NANOS; t += JitSettling.SAMPLE_NANOS)
        {
            assertThat(jit.settled(t)).as("at %d ms, less than a window seen, no compiling at all", t / MS).isFalse();
        }
        assertThat(jit.settled(JitSettling.WINDOW_NANOS)).as("a whole window without compiling").isTrue();
    }

    @Test
    void shouldWaitWhileTheCompilersUseMoreThanATenthOfACoreAndNotAfter()
    {
        final AtomicLong compiled = new AtomicLong();
        final JitSettling jit = new JitSettling(compiled::get);
        long t = 0;
        // Half a core compiling for two seconds: never settled.
        for (; t <= 2_000 * MS; t += 50 * MS)
        {
            assertThat(jit.settled(t)).as("at %d ms, compiling 25 ms of every 50", t / MS).isFalse();
            compiled.addAndGet(25);
        }
        // Then 2 ms of every 50 (a twenty-fifth of a core): settled once the window holds only that.
        boolean settled = false;
        long settledAt = -1;
        for (; t <= 4_000 * MS && !settled; t += 50 * MS)
        {
            settled = jit.settled(t);
            settledAt = t;
            compiled.addAndGet(2);
        }
        assertThat(settled).isTrue();
        assertThat(settledAt).as("settled no sooner than a window after the compiling slowed").isGreaterThanOrEqualTo(2_000 * MS + JitSettling.WINDOW_NANOS);
    }

    @Test
    void shouldCallItSettledWhenTheJvmDoesNotSayWhatItCompiles()
    {
        assertThat(new JitSettling(() -> -1).settled(0)).isTrue();
    }

    @Test
    void shouldCountSamplesTakenCloserThanTheSamplePeriodOnce()
    {
        final AtomicLong calls = new AtomicLong();
        final JitSettling jit = new JitSettling(() ->
        {
            calls.incrementAndGet();
            return 0;
        });
        for (long t = 0; t < JitSettling.SAMPLE_NANOS; t += MS)
        {
            jit.settled(t);
        }
        assertThat(calls.get()).as("one sample within the sample period").isEqualTo(1);
    }
}
