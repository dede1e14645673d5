package io.kvtier.engine.core;

import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.config.EngineSettings;
import io.kvtier.engine.config.IdleStrategyKind;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The engine thread's idling: the strategies a setting names, the backoff's steps, and the runner that
 * drives an agent with them.
 */
class IdleStrategiesTest
{
    /** Counts sleeps instead of sleeping. */
    private static final class CountingSleeper implements Sleeper
    {
        final AtomicInteger sleeps = new AtomicInteger();
        final AtomicInteger wakes = new AtomicInteger();

        @Override
        public void sleep(final long maxNanos, final BooleanSupplier workAfterAnnouncing)
        {
            if (!workAfterAnnouncing.getAsBoolean())
            {
                sleeps.incrementAndGet();
            }
        }

        @Override
        public void wake()
        {
            wakes.incrementAndGet();
        }
    }

    @Test
    void shouldBuildTheStrategyEachSettingNamesAndEachDeprecatedAliasMeans()
    {
        final CountingSleeper sleeper = new CountingSleeper();
        for (final IdleStrategyKind kind : IdleStrategyKind.values())
        {
            assertThat(Pipeline.idleStrategy(kind, sleeper, () -> false).alias()).isEqualTo(kind.configName());
        }
        final EngineConfig alias = EngineConfig.from(Map.of(EngineConfig.PIPELINE_WAIT_STRATEGY, "busy-spin"));
        assertThat(Pipeline.idleStrategy(alias.get(EngineSettings.ENGINE_IDLE_STRATEGY), sleeper, () -> false))
            .as("pipeline.wait-strategy=busy-spin still spins").isInstanceOf(BusySpinIdleStrategy.class);
    }

    @Test
    void shouldSpinThenYieldThenSleepAndStartOverOnceWorkIsFound()
    {
        final CountingSleeper sleeper = new CountingSleeper();
        final IdleStrategy idle = new BackoffIdleStrategy(2, 1, 1_000_000, sleeper, () -> false);
        for (int i = 0; i < 3; i++)
        {
            idle.idle(0);
        }
        assertThat(sleeper.sleeps).as("two spins and a yield first").hasValue(0);
        idle.idle(0);
        idle.idle(0);
        assertThat(sleeper.sleeps).as("then it sleeps at every idle").hasValue(2);
        idle.idle(5);
        idle.idle(0);
        assertThat(sleeper.sleeps).as("work starts it over from spinning").hasValue(2);
        final IdleStrategy sleepAtOnce = new BackoffIdleStrategy(0, 0, 1_000_000, sleeper, () -> false);
        sleepAtOnce.idle(0);
        assertThat(sleeper.sleeps).hasValue(3);
    }

    @Test
    void shouldSayWhetherItsLastIdleStepWasASpin()
    {
        final CountingSleeper sleeper = new CountingSleeper();
        final IdleStrategy idle = new BackoffIdleStrategy(2, 1, 1_000_000, sleeper, () -> false);
        final java.util.List<Boolean> spun = new java.util.ArrayList<>();
        for (int i = 0; i < 4; i++)
        {
            idle.idle(0);
            spun.add(idle.lastStepSpun());
        }
        assertThat(spun).as("two spins, a yield, a sleep").containsExactly(true, true, false, false);
        idle.idle(3);
        idle.idle(0);
        assertThat(idle.lastStepSpun()).as("work starts it over from spinning").isTrue();
        final CountingSleeper other = new CountingSleeper();
        assertThat(Pipeline.idleStrategy(IdleStrategyKind.SPIN, other, () -> false).lastStepSpun()).as("spin").isTrue();
        assertThat(Pipeline.idleStrategy(IdleStrategyKind.YIELD, other, () -> false).lastStepSpun()).as("yield").isFalse();
        final IdleStrategy sleep = Pipeline.idleStrategy(IdleStrategyKind.SLEEP, other, () -> false);
        sleep.idle(0);
        assertThat(sleep.lastStepSpun()).as("sleep").isFalse();
    }

    @Test
    void shouldSkipTheSleepWhenWorkCameInAfterItWasAnnounced()
    {
        final CountingSleeper sleeper = new CountingSleeper();
        final IdleStrategy idle = new BackoffIdleStrategy(0, 0, 1_000_000, sleeper, () -> true);
        idle.idle(0);
        assertThat(sleeper.sleeps).hasValue(0);
    }

    @Test
    void shouldRunTheAgentOnItsOwnThreadUntilClosedAndSurviveAFailedCycle() throws Exception
    {
        final CopyOnWriteArrayList<String> threads = new CopyOnWriteArrayList<>();
        final AtomicInteger cycles = new AtomicInteger();
        final CountDownLatch pastTheFailure = new CountDownLatch(1);
        final Agent agent = new Agent()
        {
            @Override
            public void onStart()
            {
                threads.add("start " + Thread.currentThread().getName());
            }

            @Override
            public int doWork()
            {
                final int cycle = cycles.incrementAndGet();
                if (cycle == 2)
                {
                    throw new IllegalStateException("a cycle that fails");
                }
                if (cycle > 3)
                {
                    pastTheFailure.countDown();
                }
                return 0;
            }

            @Override
            public void onClose()
            {
                threads.add("close " + Thread.currentThread().getName());
            }

            @Override
            public String roleName()
            {
                return "test agent";
            }
        };
        final ParkingSleeper sleeper = new ParkingSleeper();
        final AgentRunner runner = new AgentRunner(agent, new BackoffIdleStrategy(0, 0, 1_000_000, sleeper, () -> false), sleeper, "kvtier-test-agent");
        runner.start();
        assertThat(pastTheFailure.await(30, TimeUnit.SECONDS)).as("cycles go on after one failed").isTrue();
        assertThat(runner.close(30_000)).as("the thread ends once closed").isTrue();
        assertThat(threads).containsExactly("start kvtier-test-agent", "close kvtier-test-agent");
    }
}
