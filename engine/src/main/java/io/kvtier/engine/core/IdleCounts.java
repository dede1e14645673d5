package io.kvtier.engine.core;

import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;

/**
 * Where the engine thread's idle strategy counts what it did: its yields, its sleeps and the time in
 * them, and the adaptive strategy's spin budget ({@code engine_yields}, {@code engine_sleeps},
 * {@code engine_sleep_ns}, {@code engine_spin_budget_ns}). Written by the engine thread only, as every
 * engine counter is; {@code kvtier bench ipc} reads them to say which side slept and how often.
 */
interface IdleCounts
{
    /** Counts nothing. */
    IdleCounts NONE = new IdleCounts()
    {
        @Override
        public void yielded()
        {
        }

        @Override
        public void slept(final long nanos)
        {
        }

        @Override
        public void spinBudget(final long nanos)
        {
        }
    };

    /** A {@code Thread.yield()}. */
    void yielded();

    /**
     * A sleep announced (and taken, unless work came in once it was announced).
     *
     * @param nanos how long it lasted
     */
    void slept(long nanos);

    /** @param nanos the spin budget from now on */
    void spinBudget(long nanos);

    /**
     * @param counters the engine's counters
     * @return counts into them
     */
    static IdleCounts of(final EngineCounters counters)
    {
        return new IdleCounts()
        {
            @Override
            public void yielded()
            {
                counters.increment(EngineCounter.ENGINE_YIELDS);
            }

            @Override
            public void slept(final long nanos)
            {
                counters.increment(EngineCounter.ENGINE_SLEEPS);
                counters.add(EngineCounter.ENGINE_SLEEP_NANOS, nanos);
            }

            @Override
            public void spinBudget(final long nanos)
            {
                counters.set(EngineCounter.ENGINE_SPIN_BUDGET_NANOS, nanos);
            }
        };
    }
}
