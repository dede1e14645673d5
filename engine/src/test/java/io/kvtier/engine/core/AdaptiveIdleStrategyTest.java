package io.kvtier.engine.core;

import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.config.EngineSettings;
import io.kvtier.engine.config.IdleStrategyKind;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The engine thread's adaptive idling ({@code engine.idle-strategy = adaptive}), on a clock the test moves: it spins through its budget without
 * yielding or sleeping, sleeps after it, lengthens the budget when a sleep ended with work soon after,
 * shortens it when nothing came for long, and yields only to a client whose answer is unread.
 */
class AdaptiveIdleStrategyTest
{
    /** Nanoseconds each look at the clock takes, as the test's clock says. */
    private static final long TICK = 10;

    /** A clock that moves {@link #TICK} on every read, and as far as a sleep says. */
    private static final class FakeClock
    {
        long now = 1_000_000;

        long read()
        {
            now += TICK;
            return now;
        }
    }

    /** Sleeps as long as told by moving the clock, and says whether an answer is unread. */
    private static final class ClockSleeper implements Sleeper
    {
        final FakeClock clock;
        long sleepFor;
        boolean unread;

        ClockSleeper(final FakeClock clock, final long sleepFor)
        {
            this.clock = clock;
            this.sleepFor = sleepFor;
        }

        @Override
        public void sleep(final long maxNanos, final BooleanSupplier workAfterAnnouncing)
        {
            if (!workAfterAnnouncing.getAsBoolean())
            {
                clock.now += Math.min(sleepFor, maxNanos);
            }
        }

        @Override
        public void wake()
        {
        }

        @Override
        public boolean answerUnread()
        {
            return unread;
        }
    }

    /** Counts what the strategy reports. */
    private static final class Tally implements IdleCounts
    {
        long yields;
        long sleeps;
        long budget;

        @Override
        public void yielded()
        {
            yields++;
        }

        @Override
        public void slept(final long nanos)
        {
            sleeps++;
        }

        @Override
        public void spinBudget(final long nanos)
        {
            budget = nanos;
        }
    }

    /** Idles until the clock has moved {@code nanos} past the first idle, or a sleep was counted. */
    private static void idleFor(final IdleStrategy idle, final FakeClock clock, final Tally tally, final long nanos)
    {
        final long sleepsBefore = tally.sleeps;
        idle.idle(0);
        final long start = clock.now;
        while (clock.now - start < nanos && tally.sleeps == sleepsBefore)
        {
            idle.idle(0);
        }
    }

    @Test
    void shouldNeitherYieldNorSleepWhileRequestsComeWithinItsBudget()
    {
        final FakeClock clock = new FakeClock();
        final ClockSleeper sleeper = new ClockSleeper(clock, 1_000_000);
        final Tally tally = new Tally();
        final IdleStrategyKind adaptive = EngineConfig.from(Map.of(EngineConfig.ENGINE_IDLE_STRATEGY, "adaptive")).get(EngineSettings.ENGINE_IDLE_STRATEGY);
        final IdleStrategy idle = Pipeline.idleStrategy(adaptive, sleeper, () -> false, tally, clock::read);
        for (int request = 0; request < 100; request++)
        {
            // A client's next request comes 20 µs after the last answer: 2,000 idle cycles of the engine thread.
            for (int i = 0; i < 2_000; i++)
            {
                idle.idle(0);
                clock.now += TICK;
            }
            idle.idle(1);
        }
        assertThat(tally.yields).as("yields, each a time slice given away on a busy host").isZero();
        assertThat(tally.sleeps).as("sleeps, each a wake-up the client pays for").isZero();
    }

    @Test
    void shouldSleepOnceItsBudgetIsSpentAndStartOverWithWork()
    {
        final FakeClock clock = new FakeClock();
        final ClockSleeper sleeper = new ClockSleeper(clock, 1_000_000);
        final Tally tally = new Tally();
        final AdaptiveIdleStrategy idle = new AdaptiveIdleStrategy(1_000_000, sleeper, () -> false, tally, clock::read);
        idleFor(idle, clock, tally, idle.budgetNanos() - 1_000);
        assertThat(tally.sleeps).as("within the budget").isZero();
        idleFor(idle, clock, tally, 10 * idle.budgetNanos());
        assertThat(tally.sleeps).as("once it is spent").isEqualTo(1);
        idle.idle(3);
        final long sleeps = tally.sleeps;
        idleFor(idle, clock, tally, AdaptiveIdleStrategy.MIN_BUDGET_NANOS / 2);
        assertThat(tally.sleeps).as("work starts it over from spinning").isEqualTo(sleeps);
    }

    @Test
    void shouldLengthenItsBudgetWhenWorkCameSoonAfterASleepAndShortenItWhenNothingCameForLong()
    {
        final FakeClock clock = new FakeClock();
        final ClockSleeper sleeper = new ClockSleeper(clock, 20_000);
        final Tally tally = new Tally();
        final AdaptiveIdleStrategy idle = new AdaptiveIdleStrategy(1_000_000, sleeper, () -> false, tally, clock::read);
        final long initial = idle.budgetNanos();
        idleFor(idle, clock, tally, 10 * AdaptiveIdleStrategy.MAX_BUDGET_NANOS);
        idle.idle(1);
        assertThat(idle.budgetNanos()).as("a sleep of 20 µs after a budget of %d ns", initial).isEqualTo(AdaptiveIdleStrategy.MAX_BUDGET_NANOS);
        assertThat(tally.budget).as("the gauge").isEqualTo(AdaptiveIdleStrategy.MAX_BUDGET_NANOS);
        sleeper.sleepFor = 1_000_000;
        idleFor(idle, clock, tally, 3 * AdaptiveIdleStrategy.MAX_BUDGET_NANOS);
        idleFor(idle, clock, tally, 3 * AdaptiveIdleStrategy.MAX_BUDGET_NANOS);
        idle.idle(1);
        assertThat(idle.budgetNanos()).as("a quarter less after one long idle period").isEqualTo(AdaptiveIdleStrategy.MAX_BUDGET_NANOS * 3 / 4);
        for (int i = 0; i < 20; i++)
        {
            idleFor(idle, clock, tally, 3 * AdaptiveIdleStrategy.MAX_BUDGET_NANOS);
            idleFor(idle, clock, tally, 3 * AdaptiveIdleStrategy.MAX_BUDGET_NANOS);
            idle.idle(1);
        }
        assertThat(idle.budgetNanos()).as("after long idle periods").isEqualTo(AdaptiveIdleStrategy.MIN_BUDGET_NANOS);
        assertThat(tally.budget).isEqualTo(AdaptiveIdleStrategy.MIN_BUDGET_NANOS);
    }

    @Test
    void shouldYieldOnlyToAClientThatHasNotReadItsAnswer()
    {
        final FakeClock clock = new FakeClock();
        final ClockSleeper sleeper = new ClockSleeper(clock, 1_000_000);
        final Tally tally = new Tally();
        final AdaptiveIdleStrategy idle = new AdaptiveIdleStrategy(1_000_000, sleeper, () -> false, tally, clock::read);
        idleFor(idle, clock, tally, AdaptiveIdleStrategy.YIELD_PATIENCE_NANOS * 3);
        assertThat(tally.yields).as("every answer read").isZero();
        idle.idle(1);
        sleeper.unread = true;
        idleFor(idle, clock, tally, AdaptiveIdleStrategy.YIELD_PATIENCE_NANOS - 100);
        assertThat(tally.yields).as("an answer unread, within the patience").isZero();
        idleFor(idle, clock, tally, 1_000);
        assertThat(tally.yields).as("an answer unread past the patience").isPositive();
        assertThat(tally.sleeps).isZero();
    }
    @Test
    void shouldSayWhetherItsLastIdleStepWasASpinSoThatTheEngineMayLeaveTheClockAlone()
    {
        final FakeClock clock = new FakeClock();
        final ClockSleeper sleeper = new ClockSleeper(clock, 1_000_000);
        final Tally tally = new Tally();
        final AdaptiveIdleStrategy idle = new AdaptiveIdleStrategy(1_000_000, sleeper, () -> false, tally, clock::read);
        assertThat(idle.lastStepSpun()).as("before any idle step").isFalse();
        idle.idle(0);
        assertThat(idle.lastStepSpun()).as("the first idle after work spins").isTrue();
        idleFor(idle, clock, tally, 10 * idle.budgetNanos());
        assertThat(tally.sleeps).isEqualTo(1);
        assertThat(idle.lastStepSpun()).as("a sleep, which may have lasted the longest sleep").isFalse();
        idle.idle(1);
        idle.idle(0);
        assertThat(idle.lastStepSpun()).as("work came: it spins again").isTrue();
        sleeper.unread = true;
        while (tally.yields == 0)
        {
            idle.idle(0);
        }
        assertThat(idle.lastStepSpun()).as("a yield, which may have given away a time slice").isFalse();
    }
}
