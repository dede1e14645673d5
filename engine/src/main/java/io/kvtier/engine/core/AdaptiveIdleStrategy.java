package io.kvtier.engine.core;

import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * The engine thread's default idling ({@code engine.idle-strategy = adaptive}): spin for a budget that
 * follows the gaps between requests, then sleep on the {@link Sleeper}, and never yield unless a client
 * it answered has not read its answer for {@link #YIELD_PATIENCE_NANOS}, which is what a client that
 * shares this thread's core looks like.
 *
 * <p>Why not the fixed back-off: on a host whose cores are all busy, a {@code Thread.yield()} hands the
 * core to another process for the rest of its time slice (milliseconds), and a futex sleep costs a
 * wake-up of tens of microseconds when the next request comes; with 100 spins and 100 yields the
 * engine did one or the other between almost every two requests of a client that was itself waiting on
 * its core. Here the budget grows (doubling, up to {@link #MAX_BUDGET_NANOS}) whenever a sleep ended with
 * work sooner than that, so that a client's steady requests find the engine awake, and shrinks by a
 * quarter (down to {@link #MIN_BUDGET_NANOS}) whenever work came only after longer, so that an engine
 * whose clients come seldom leaves its core after a few microseconds; a client preempted now and then
 * (a gap of milliseconds on a busy host) shrinks it only a little, since growing back costs a wake-up.
 * An engine with no work at all sleeps and sleeps again: it spins once per idle period, whatever its
 * budget. Allocation-free; the engine thread only.
 */
final class AdaptiveIdleStrategy implements IdleStrategy
{
    /** The least the engine spins before it sleeps. */
    static final long MIN_BUDGET_NANOS = 5_000;
    /** The most the engine spins before it sleeps: requests further apart than this find it asleep. */
    static final long MAX_BUDGET_NANOS = 100_000;
    /** The budget of a new engine. */
    static final long INITIAL_BUDGET_NANOS = 50_000;
    /** How long an answer may stay unread before the engine, idle, yields its core to the client that may share it. */
    static final long YIELD_PATIENCE_NANOS = 10_000;
    /** The clock and the clients are looked at once every this many idles. */
    private static final int LOOK_EVERY = 8;
    /** Where the idle count stops growing: a multiple of {@link #LOOK_EVERY}, so that an idle period that long still looks at every idle. */
    private static final int SATURATED = Integer.MAX_VALUE & -LOOK_EVERY;

    private final long maxSleepNanos;
    private final Sleeper sleeper;
    private final BooleanSupplier workAfterAnnouncing;
    private final IdleCounts counts;
    private final LongSupplier clock;
    private int idleCount;
    private long idleStartNanos;
    private boolean slept;
    /** Whether the last idle step was a spin. */
    private boolean spun;
    private long budgetNanos = INITIAL_BUDGET_NANOS;

    /**
     * @param maxSleepNanos       the longest sleep: the bound on a wake-up that was missed, and how late a timer may fire
     * @param sleeper             where the thread sleeps, how others wake it, and whether a client waits on an answer unread
     * @param workAfterAnnouncing whether work came in once the sleep was announced
     * @param counts              where its yields, sleeps and budget are counted
     * @param clock               nanoseconds: {@code System::nanoTime}, but in tests
     */
    AdaptiveIdleStrategy(final long maxSleepNanos, final Sleeper sleeper, final BooleanSupplier workAfterAnnouncing, final IdleCounts counts,
                         final LongSupplier clock)
    {
        this.maxSleepNanos = maxSleepNanos;
        this.sleeper = sleeper;
        this.workAfterAnnouncing = workAfterAnnouncing;
        this.counts = counts;
        this.clock = clock;
        counts.spinBudget(budgetNanos);
    }

    @Override
    public void idle()
    {
        final int count = idleCount;
        if (count < SATURATED)
        {
            idleCount = count + 1;
        }
        spun = true;
        if (count == 0)
        {
            idleStartNanos = clock.getAsLong();
            slept = false;
            Thread.onSpinWait();
            return;
        }
        if (count % LOOK_EVERY != 0)
        {
            Thread.onSpinWait();
            return;
        }
        final long idleNanos = clock.getAsLong() - idleStartNanos;
        if (idleNanos >= budgetNanos)
        {
            spun = false;
            slept = true;
            final long start = clock.getAsLong();
            sleeper.sleep(maxSleepNanos, workAfterAnnouncing);
            counts.slept(clock.getAsLong() - start);
        }
        else if (idleNanos >= YIELD_PATIENCE_NANOS && sleeper.answerUnread())
        {
            spun = false;
            counts.yielded();
            Thread.yield();
        }
        else
        {
            Thread.onSpinWait();
        }
    }

    @Override
    public void reset()
    {
        if (idleCount > 0 && slept)
        {
            final long idleNanos = clock.getAsLong() - idleStartNanos;
            final long budget = idleNanos < MAX_BUDGET_NANOS
                ? Math.min(MAX_BUDGET_NANOS, Math.max(budgetNanos * 2, idleNanos * 2))
                : Math.max(MIN_BUDGET_NANOS, budgetNanos - budgetNanos / 4);
            if (budget != budgetNanos)
            {
                budgetNanos = budget;
                counts.spinBudget(budget);
            }
        }
        idleCount = 0;
    }

    @Override
    public boolean lastStepSpun()
    {
        return spun;
    }

    /** @return how long it spins now before it sleeps */
    long budgetNanos()
    {
        return budgetNanos;
    }

    @Override
    public String alias()
    {
        return "adaptive";
    }
}
