package io.kvtier.engine.core;

import io.kvtier.client.pool.CountersDescriptor;
import io.kvtier.engine.status.EngineCounters;
import io.kvtier.spi.TierUsage;

/**
 * What the engine thread knows of each tier's fill and budget: its usage as its call thread last read
 * it (the tier's usage gauges in the pool's counters), the water levels it evicts at, and its write
 * budget. A tier is full for backups and migrations at its high water level; a tier without levels
 * (no capacity of its own) is never full. Engine thread only, but for the gauges it reads.
 */
final class TierLevels
{
    private static final double DAY_SECONDS = 86_400.0;

    private final EngineCounters counters;
    private final String[] names;
    private final double[] high;
    private final double[] low;
    private final boolean[] selfEvicting;
    private final boolean[] drained;
    private final TokenBucket[] budgets;

    /**
     * @param counters     the pool's counters, with each tier's usage gauges
     * @param names        the tiers' names
     * @param high         each tier's high water level, NaN when it has none
     * @param low          each tier's low water level, NaN when it has none
     * @param selfEvicting whether each tier evicts by itself
     * @param drained      whether a migration strategy moves each tier's pages out
     * @param budgetBytes  each tier's write budget in bytes per day, 0 for none
     * @param burstBytes   each tier's write burst
     * @param nowNanos     the engine clock now
     */
    TierLevels(final EngineCounters counters, final String[] names, final double[] high, final double[] low, final boolean[] selfEvicting,
               final boolean[] drained, final long[] budgetBytes, final long[] burstBytes, final long nowNanos)
    {
        this.counters = counters;
        this.names = names.clone();
        this.high = high.clone();
        this.low = low.clone();
        this.selfEvicting = selfEvicting.clone();
        this.drained = drained.clone();
        this.budgets = new TokenBucket[names.length];
        for (int t = 0; t < names.length; t++)
        {
            if (budgetBytes[t] > 0)
            {
                budgets[t] = new TokenBucket(budgetBytes[t] / DAY_SECONDS, burstBytes[t], nowNanos);
            }
        }
    }

    /** @return how many tiers */
    int count()
    {
        return names.length;
    }

    /**
     * @param tier a tier
     * @return its name
     */
    String name(final int tier)
    {
        return names[tier];
    }

    /**
     * @param name a tier's name
     * @return its index, or -1
     */
    int indexOf(final String name)
    {
        for (int t = 0; t < names.length; t++)
        {
            if (names[t].equals(name))
            {
                return t;
            }
        }
        return -1;
    }

    /** @return the tier's used bytes, as its call thread last read them */
    long usedBytes(final int tier)
    {
        return counters.tierOpaque(tier, CountersDescriptor.TIER_USED_BYTES);
    }

    /** @return the tier's capacity, {@link TierUsage#UNBOUNDED} when it has none (or has not been read yet: 0) */
    long capacityBytes(final int tier)
    {
        return counters.tierOpaque(tier, CountersDescriptor.TIER_CAPACITY_BYTES);
    }

    /** @return whether the tier's capacity is known */
    boolean knowsCapacity(final int tier)
    {
        final long capacity = capacityBytes(tier);
        return capacity > 0 && capacity != TierUsage.UNBOUNDED;
    }

    /** @return used bytes over capacity, 0 when the capacity is unknown */
    double fill(final int tier)
    {
        return knowsCapacity(tier) ? (double)usedBytes(tier) / capacityBytes(tier) : 0.0;
    }

    /** @return the tier's high water level, NaN without one */
    double high(final int tier)
    {
        return high[tier];
    }

    /** @return the tier's low water level, NaN without one */
    double low(final int tier)
    {
        return low[tier];
    }

    /** @return whether the tier evicts by itself */
    boolean selfEvicting(final int tier)
    {
        return selfEvicting[tier];
    }

    /** @return whether the tier is at its high water level: full for backups and migrations */
    boolean full(final int tier)
    {
        return !Double.isNaN(high[tier]) && knowsCapacity(tier) && fill(tier) >= high[tier];
    }

    /**
     * @param tier a tier
     * @return whether it is full for a backup: at its high water level, and either not evicting by itself
     *         or drained by a migration strategy, so that the next backup would evict pages the migration has
     *         not moved yet; a self-evicting tier nothing drains takes every backup and evicts its coldest
     */
    boolean fullForBackups(final int tier)
    {
        return full(tier) && (!selfEvicting[tier] || drained[tier]);
    }

    /**
     * @param tier     a tier
     * @param bytes    bytes to be written into it
     * @param nowNanos the engine clock now
     * @return whether its write budget lets them through now (always, without a budget)
     */
    boolean budgetAllows(final int tier, final long bytes, final long nowNanos)
    {
        return budgets[tier] == null || budgets[tier].allows(bytes, nowNanos);
    }

    /**
     * Takes bytes written into a tier from its budget.
     *
     * @param tier     a tier
     * @param bytes    bytes to be written into it
     * @param nowNanos the engine clock now
     */
    void spendBudget(final int tier, final long bytes, final long nowNanos)
    {
        if (budgets[tier] != null)
        {
            budgets[tier].take(bytes, nowNanos);
        }
    }

    /** @return bytes the tier's budget lets through now, or -1 without a budget */
    long budgetAvailable(final int tier)
    {
        return budgets[tier] == null ? -1 : budgets[tier].available();
    }
}
