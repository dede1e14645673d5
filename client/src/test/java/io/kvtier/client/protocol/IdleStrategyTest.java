package io.kvtier.client.protocol;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client's adaptive waiting for an answer ({@code IdleStrategy.Kind.ADAPTIVE}), on a clock the test moves: it spins while the engine is
 * awake and working, without a yield or a sleep, for its budget; it sleeps at once when the engine has
 * gone to sleep, and soon when an awake engine leaves the request untaken (busy with others, or off its
 * core), and its budget follows the waits it has seen. {@code TIMED} yields instead of sleeping while an
 * awake engine leaves the request untaken, and its budget grows further.
 */
class IdleStrategyTest
{
    /** Nanoseconds each look at the clock takes, as the test's clock says. */
    private static final long TICK = 10;
    /** A sleep as short as the futex allows, so that the tests that sleep do not wait. */
    private static final long SLEEP_NANOS = 1_000;

    /** A clock that moves {@link #TICK} on every read. */
    private static final class FakeClock
    {
        long now = 1_000_000;

        long read()
        {
            now += TICK;
            return now;
        }
    }

    /** The engine as the test sets it. */
    private static final class Engine implements IdleStrategy.Peer
    {
        boolean awake = true;
        boolean took = true;
        boolean woken;

        @Override
        public boolean awakeVolatile()
        {
            return awake;
        }

        @Override
        public boolean tookItAcquire()
        {
            return took;
        }

        @Override
        public boolean wokeIt()
        {
            return woken;
        }
    }

    /** Idles until the clock has moved {@code nanos} or a sleep was counted. */
    private static void idleFor(final IdleStrategy idle, final FakeClock clock, final FutexWord word, final long nanos)
    {
        final long sleepsBefore = idle.counts().sleeps();
        final long start = clock.now;
        idle.idle(word, () -> false);
        while (clock.now - start < nanos && idle.counts().sleeps() == sleepsBefore)
        {
            idle.idle(word, () -> false);
        }
    }

    @Test
    void shouldNeitherYieldNorSleepWhileTheEngineWorksOnItsRequestWithinItsBudget()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final FutexWord word = new FutexWord(arena.allocate(8, 8), 0);
            final FakeClock clock = new FakeClock();
            final IdleStrategy idle = new IdleStrategy(IdleStrategy.Kind.ADAPTIVE, SLEEP_NANOS, new Engine(), clock::read);
            for (int request = 0; request < 100; request++)
            {
                // The engine answers in 15 µs: a batched lookup, or a one-key one whose engine was briefly off its core.
                idle.reset();
                idleFor(idle, clock, word, 15_000);
                idle.arrived();
            }
            assertThat(idle.counts().yields()).as("yields, each a time slice given away on a busy host").isZero();
            assertThat(idle.counts().sleeps()).as("sleeps, each a wake-up the engine must send").isZero();
            assertThat(idle.counts().waits()).isEqualTo(100);
        }
    }

    @Test
    void shouldSleepOnceItsBudgetIsSpentAndLengthenTheBudgetAfterLongerWaits()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final FutexWord word = new FutexWord(arena.allocate(8, 8), 0);
            final FakeClock clock = new FakeClock();
            final IdleStrategy idle = new IdleStrategy(IdleStrategy.Kind.ADAPTIVE, SLEEP_NANOS, new Engine(), clock::read);
            assertThat(idle.spinBudgetNanos()).isEqualTo(IdleStrategy.MIN_SPIN_NANOS);
            idle.reset();
            idleFor(idle, clock, word, 10 * IdleStrategy.MAX_SPIN_NANOS);
            assertThat(idle.counts().sleeps()).as("past the budget").isEqualTo(1);
            assertThat(clock.now).as("not before it").isGreaterThanOrEqualTo(1_000_000 + IdleStrategy.MIN_SPIN_NANOS);
            assertThat(word.getVolatile()).as("the sleeper clears its word").isZero();
            for (int i = 0; i < 40; i++)
            {
                idle.reset();
                idleFor(idle, clock, word, 60_000);
                idle.arrived();
            }
            assertThat(idle.spinBudgetNanos()).as("after waits of 60 µs").isEqualTo(IdleStrategy.MAX_SPIN_NANOS);
            final long sleeps = idle.counts().sleeps();
            idle.reset();
            idleFor(idle, clock, word, 60_000);
            idle.arrived();
            assertThat(idle.counts().sleeps()).as("a wait of 60 µs within the budget grown to").isEqualTo(sleeps);
        }
    }

    @Test
    void shouldSleepAtOnceWhenTheEngineSleepsWithTheRequestTaken()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final FutexWord word = new FutexWord(arena.allocate(8, 8), 0);
            final FakeClock clock = new FakeClock();
            final Engine engine = new Engine();
            engine.awake = false;
            final IdleStrategy idle = new IdleStrategy(IdleStrategy.Kind.ADAPTIVE, SLEEP_NANOS, engine, clock::read);
            idle.reset();
            for (int i = 0; i < 17; i++)
            {
                idle.idle(word, () -> false);
            }
            assertThat(idle.counts().sleeps()).as("asleep at two looks in a row: 16 idles").isEqualTo(1);
            assertThat(clock.now - 1_000_000).as("long before the budget").isLessThan(IdleStrategy.MIN_SPIN_NANOS);
        }
    }

    @Test
    void shouldSleepWhenAnAwakeEngineLeavesTheRequestUntakenUnlessItWasJustWoken()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final FutexWord word = new FutexWord(arena.allocate(8, 8), 0);
            final FakeClock clock = new FakeClock();
            final Engine engine = new Engine();
            engine.took = false;
            engine.woken = true;
            final IdleStrategy idle = new IdleStrategy(IdleStrategy.Kind.ADAPTIVE, SLEEP_NANOS, engine, clock::read);
            idle.reset();
            idleFor(idle, clock, word, IdleStrategy.TAKE_PATIENCE_NANOS * 3);
            assertThat(idle.counts().sleeps()).as("an engine this request woke is coming to a core").isZero();
            engine.woken = false;
            idle.reset();
            idleFor(idle, clock, word, IdleStrategy.TAKE_PATIENCE_NANOS - 100);
            assertThat(idle.counts().sleeps()).as("within the patience").isZero();
            idleFor(idle, clock, word, 1_000);
            assertThat(idle.counts().sleeps()).as("past it, the engine awake and the request untaken").isEqualTo(1);
            assertThat(clock.now - 1_000_000).as("long before the budget").isLessThan(IdleStrategy.MIN_SPIN_NANOS + 10 * IdleStrategy.TAKE_PATIENCE_NANOS);
            assertThat(idle.counts().yields()).as("never a yield").isZero();
        }
    }

    @Test
    void timedShouldYieldRatherThanSleepWhileAnAwakeEngineLeavesTheRequestUntaken()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final FutexWord word = new FutexWord(arena.allocate(8, 8), 0);
            final FakeClock clock = new FakeClock();
            final Engine engine = new Engine();
            engine.took = false;
            final IdleStrategy idle = new IdleStrategy(IdleStrategy.Kind.TIMED, SLEEP_NANOS, engine, clock::read);
            final long start = clock.now;
            idle.reset();
            idleFor(idle, clock, word, IdleStrategy.TIMED_TAKE_PATIENCE_NANOS - 100);
            assertThat(idle.counts().yields()).as("within the patience it spins").isZero();
            idleFor(idle, clock, word, IdleStrategy.TIMED_YIELD_LIMIT_NANOS / 2);
            assertThat(idle.counts().yields()).as("past it, it hands its core to the engine that may be waiting for it").isPositive();
            assertThat(idle.counts().sleeps()).as("no sleep, which the engine would have to end with a futex wake").isZero();
            idleFor(idle, clock, word, IdleStrategy.TIMED_YIELD_LIMIT_NANOS);
            assertThat(idle.counts().sleeps()).as("an engine that took nothing for the yield limit: it sleeps").isEqualTo(1);
            assertThat(clock.now - start).as("not before the limit").isGreaterThanOrEqualTo(IdleStrategy.TIMED_YIELD_LIMIT_NANOS);
        }
    }

    @Test
    void timedShouldSpinThroughAnswersLongerThanAdaptiveSpinsFor()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final FutexWord word = new FutexWord(arena.allocate(8, 8), 0);
            final long[] sleepsInLastTen = new long[2];
            final IdleStrategy.Kind[] kinds = {IdleStrategy.Kind.ADAPTIVE, IdleStrategy.Kind.TIMED};
            for (int k = 0; k < kinds.length; k++)
            {
                final FakeClock clock = new FakeClock();
                final IdleStrategy idle = new IdleStrategy(kinds[k], SLEEP_NANOS, new Engine(), clock::read);
                for (int request = 0; request < 50; request++)
                {
                    if (request == 40)
                    {
                        sleepsInLastTen[k] = -idle.counts().sleeps();
                    }
                    // A batched lookup the engine, awake, answers in 150 µs.
                    idle.reset();
                    idleFor(idle, clock, word, 150_000);
                    idle.arrived();
                }
                sleepsInLastTen[k] += idle.counts().sleeps();
                assertThat(idle.counts().yields()).as(kinds[k] + ": never a yield while the engine works on the request").isZero();
            }
            assertThat(sleepsInLastTen[0]).as("adaptive spins at most " + IdleStrategy.MAX_SPIN_NANOS + " ns").isEqualTo(10);
            assertThat(sleepsInLastTen[1]).as("timed's budget grew to twice the waits it saw").isZero();
        }
    }

    @Test
    void awakeShouldSpinWithoutYieldOrSleepWhileAnAwakeEngineLeavesTheRequestUntaken()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final FutexWord word = new FutexWord(arena.allocate(8, 8), 0);
            final FakeClock clock = new FakeClock();
            final Engine engine = new Engine();
            engine.took = false;
            final IdleStrategy idle = new IdleStrategy(IdleStrategy.Kind.AWAKE, SLEEP_NANOS, engine, clock::read);
            idle.reset();
            // Far past ADAPTIVE's patience with an untaken request (it sleeps there), within the budget.
            idleFor(idle, clock, word, IdleStrategy.MIN_SPIN_NANOS - 2_000);
            assertThat(idle.counts().sleeps()).as("an engine awake but off its core for a moment: no sleep it must end with a wake").isZero();
            assertThat(idle.counts().yields()).as("no yield, which hands the core to another process for a time slice").isZero();
            idleFor(idle, clock, word, 10 * IdleStrategy.MIN_SPIN_NANOS);
            assertThat(idle.counts().sleeps()).as("past its budget it sleeps, awake engine or not").isEqualTo(1);
            assertThat(idle.counts().yields()).isZero();
        }
    }

    @Test
    void awakeShouldSpinThroughBatchesAndSleepSoonWhenTheEngineSleeps()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final FutexWord word = new FutexWord(arena.allocate(8, 8), 0);
            final FakeClock clock = new FakeClock();
            final Engine engine = new Engine();
            final IdleStrategy idle = new IdleStrategy(IdleStrategy.Kind.AWAKE, SLEEP_NANOS, engine, clock::read);
            for (int request = 0; request < 50; request++)
            {
                // A batched lookup the engine, awake, answers in 150 µs.
                idle.reset();
                idleFor(idle, clock, word, 150_000);
                idle.arrived();
            }
            final long sleeps = idle.counts().sleeps();
            idle.reset();
            idleFor(idle, clock, word, 150_000);
            idle.arrived();
            assertThat(idle.counts().sleeps()).as("its budget grew past the batches' 150 µs").isEqualTo(sleeps);
            assertThat(idle.spinBudgetNanos()).isLessThanOrEqualTo(IdleStrategy.TIMED_MAX_SPIN_NANOS);
            engine.awake = false;
            idle.reset();
            for (int i = 0; i < 17; i++)
            {
                idle.idle(word, () -> false);
            }
            assertThat(idle.counts().sleeps()).as("asleep at two looks in a row: 16 idles").isEqualTo(sleeps + 1);
            assertThat(idle.counts().yields()).isZero();
        }
    }

    @Test
    void timedShouldSleepSoonWhenTheEngineSleeps()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final FutexWord word = new FutexWord(arena.allocate(8, 8), 0);
            final FakeClock clock = new FakeClock();
            final Engine engine = new Engine();
            engine.awake = false;
            final IdleStrategy idle = new IdleStrategy(IdleStrategy.Kind.TIMED, SLEEP_NANOS, engine, clock::read);
            idle.reset();
            for (int i = 0; i < 17; i++)
            {
                idle.idle(word, () -> false);
            }
            assertThat(idle.counts().sleeps()).as("asleep at two looks in a row: 16 idles").isEqualTo(1);
            assertThat(idle.counts().yields()).as("nothing to yield to: the engine waits on something else than a core").isZero();
        }
    }

    @Test
    void shouldCountTheWakesItSends()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment mapping = arena.allocate(8, 8);
            final FutexWord word = new FutexWord(mapping, 0);
            final IdleStrategy idle = new IdleStrategy(IdleStrategy.Kind.ADAPTIVE, SLEEP_NANOS);
            assertThat(idle.wakeCounted(word)).as("nobody sleeps").isFalse();
            word.setVolatile(1);
            assertThat(idle.wakeCounted(word)).as("the word says the peer sleeps").isTrue();
            assertThat(word.getVolatile()).as("the waker clears it").isZero();
            assertThat(idle.counts().wakesSent()).isEqualTo(1);
        }
    }

    @Test
    void backoffShouldYieldAsOftenAsItWasToldBeforeItSleeps()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final FutexWord word = new FutexWord(arena.allocate(8, 8), 0);
            final IdleStrategy usual = new IdleStrategy(IdleStrategy.Kind.BACKOFF, SLEEP_NANOS);
            final IdleStrategy patient = IdleStrategy.backoffYielding(SLEEP_NANOS, 200);
            for (final IdleStrategy idle : new IdleStrategy[] {usual, patient})
            {
                idle.reset();
                while (idle.counts().sleeps() == 0)
                {
                    idle.idle(word, () -> false);
                }
            }
            assertThat(usual.counts().yields()).as("the back-off's own").isEqualTo(50);
            assertThat(patient.counts().yields()).as("a large request's wait").isEqualTo(200);
            assertThat(patient.kind()).isEqualTo(IdleStrategy.Kind.BACKOFF);
        }
    }
}
