package io.kvtier.engine.core;

import io.kvtier.client.pool.CountersDescriptor;
import io.kvtier.engine.config.ConfigException;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.config.MigrationStrategy;
import io.kvtier.engine.operations.Retention;
import io.kvtier.engine.status.EngineCounters;
import io.kvtier.engine.tier.TierHandle;
import io.kvtier.spi.TierCapability;
import io.kvtier.spi.TierUsage;
import io.kvtier.spi.TierWaterLevels;

import java.util.List;
import java.util.Optional;

/**
 * What the engine learns of its tiers at start, before its threads run: each tier's usage and water
 * levels, and whether each migration strategy can ever run on them. A strategy that could not (its source
 * knows no capacity, its trigger is not below the source's eviction level, or it keeps copies in a
 * source that never evicts) stops the start with a message naming its setting: a strategy that would
 * sit idle forever is refused, never silently kept.
 */
final class TierStart
{
    private TierStart()
    {
    }

    /**
     * Reads each tier's usage and water levels (on the starting thread: the tiers' call threads have not
     * started), records the usage in the tiers' gauges, and checks the strategies.
     *
     * @param config   the engine's settings
     * @param counters the pool's counters
     * @param tiers    the started tiers, in order
     * @param nowNanos the engine clock now
     * @return the tiers' levels and budgets
     * @throws ConfigException naming the setting of a strategy that can never run
     */
    static TierLevels levels(final EngineConfig config, final EngineCounters counters, final List<TierHandle> tiers, final long nowNanos)
    {
        final int count = tiers.size();
        final String[] names = new String[count];
        final double[] high = new double[count];
        final double[] low = new double[count];
        final boolean[] selfEvicting = new boolean[count];
        final long[] budget = new long[count];
        final long[] burst = new long[count];
        for (int t = 0; t < count; t++)
        {
            final TierHandle handle = tiers.get(t);
            names[t] = handle.name();
            final Optional<TierWaterLevels> levels = waterLevels(handle);
            high[t] = levels.map(TierWaterLevels::high).orElse(Double.NaN);
            low[t] = levels.map(TierWaterLevels::low).orElse(Double.NaN);
            selfEvicting[t] = handle.capabilities().contains(TierCapability.SELF_EVICTING);
            budget[t] = config.writeBudget(handle.name());
            burst[t] = config.writeBurst(handle.name());
            TierUsageReader.record(handle, t, counters);
        }
        final boolean[] drained = new boolean[count];
        for (final MigrationStrategy strategy : config.migrations())
        {
            for (int t = 0; t < count; t++)
            {
                drained[t] |= names[t].equals(strategy.source());
            }
        }
        final TierLevels result = new TierLevels(counters, names, high, low, selfEvicting, drained, budget, burst, nowNanos);
        for (final MigrationStrategy strategy : config.migrations())
        {
            check(strategy, result);
        }
        return result;
    }

    /**
     * The tiers whose every object this engine will have written: not shared with other engines, and holding no object
     * now, before this engine writes any. Their index entries are then all there is, so lookups need not probe them.
     *
     * @param tiers the started tiers, in order
     * @return per tier, whether it qualifies; a tier that cannot tell its objects (-1) or whose usage() throws does not
     */
    static boolean[] writtenOnlyByThisEngine(final List<TierHandle> tiers)
    {
        final boolean[] qualifies = new boolean[tiers.size()];
        for (int t = 0; t < tiers.size(); t++)
        {
            final TierHandle handle = tiers.get(t);
            if (handle.capabilities().contains(TierCapability.SHARED))
            {
                continue;
            }
            final long[] objects = {-1};
            if (TierUsageReader.record(handle, (used, capacity, count) -> objects[0] = count))
            {
                qualifies[t] = objects[0] == 0;
            }
        }
        return qualifies;
    }

    private static Optional<TierWaterLevels> waterLevels(final TierHandle handle)
    {
        try
        {
            return handle.tier().waterLevels();
        }
        catch (final RuntimeException ex)
        {
            throw new ConfigException(EngineConfig.TIER_PREFIX + handle.name(), "tier " + handle.name() + " (type " + handle.type()
                + ") failed to start: waterLevels() threw " + ex);
        }
    }

    private static void check(final MigrationStrategy strategy, final TierLevels levels)
    {
        final int source = levels.indexOf(strategy.source());
        final String prefix = EngineConfig.MIGRATION_PREFIX + strategy.source() + ".";
        if (!levels.knowsCapacity(source))
        {
            throw new ConfigException(prefix + "trigger", "invalid migration out of tier " + strategy.source() + ": the tier reports no capacity"
                + " (usage() capacity " + (levels.capacityBytes(source) == TierUsage.UNBOUNDED ? "unbounded" : levels.capacityBytes(source))
                + "), so its fill is unknown and " + prefix + "trigger could never be reached; give the tier a capacity (e.g. tier."
                + strategy.source() + ".capacity) or remove the migration");
        }
        final double evictAt = levels.high(source);
        if (!Double.isNaN(evictAt) && strategy.trigger() >= evictAt)
        {
            throw new ConfigException(prefix + "trigger", "invalid " + prefix + "trigger = \"" + strategy.trigger() + "\": expected a fill below"
                + " tier " + strategy.source() + "'s eviction level (evict-high " + evictAt + "), or the tier would evict its pages before the"
                + " migration could move them");
        }
        if (strategy.retention() == Retention.KEEP_SOURCE && !levels.selfEvicting(source))
        {
            throw new ConfigException(prefix + "retention", "invalid " + prefix + "retention = \"keep-source\": tier " + strategy.source()
                + " does not evict by itself, so the copies kept there could never be reclaimed; use move, or give the tier a capacity");
        }
    }

    /** Reads a tier's usage into its gauges. */
    static final class TierUsageReader
    {
        private TierUsageReader()
        {
        }

        /**
         * Calls the tier's {@code usage()} and records it; a tier that throws keeps its last gauges.
         *
         * @param handle   the tier
         * @param tier     its index
         * @param counters the pool's counters
         * @return whether the tier answered
         */
        static boolean record(final TierHandle handle, final int tier, final EngineCounters counters)
        {
            return record(handle, (used, capacity, objects) -> set(counters, tier, used, capacity, objects));
        }

        /**
         * Asks the tier for its usage through a consumer made once, so that the reads allocate nothing.
         *
         * @return whether the tier answered
         */
        static boolean record(final TierHandle handle, final TierUsage.Consumer consumer)
        {
            try
            {
                handle.tier().reportUsage(consumer);
                return true;
            }
            catch (final RuntimeException ex)
            {
                return false;
            }
        }

        static void set(final EngineCounters counters, final int tier, final long used, final long capacity, final long objects)
        {
            counters.setTier(tier, CountersDescriptor.TIER_USED_BYTES, used);
            counters.setTier(tier, CountersDescriptor.TIER_CAPACITY_BYTES, capacity);
            counters.setTier(tier, CountersDescriptor.TIER_OBJECTS, objects);
        }
    }
}
