package io.kvtier.tier.support;

import io.kvtier.spi.ConfigValues;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierConfigException;
import io.kvtier.spi.TierUsage;

import java.util.Locale;

/**
 * A directory tier's capacity and eviction water levels ({@code capacity}, {@code evict-high},
 * {@code evict-low}), read and checked the same way by the POSIX tier and by the 3FS tier, which keeps
 * its pages in the same layout.
 *
 * @param bytes     the most bytes to hold, or {@link TierUsage#UNBOUNDED}
 * @param evictHigh fraction of it above which eviction starts
 * @param evictLow  fraction eviction brings it down to
 */
public record Capacity(long bytes, double evictHigh, double evictLow)
{
    /** The capacity setting. */
    public static final String CAPACITY = "capacity";
    /** The high water level setting. */
    public static final String EVICT_HIGH = "evict-high";
    /** The low water level setting. */
    public static final String EVICT_LOW = "evict-low";
    /** Default high water level. */
    public static final double EVICT_HIGH_DEFAULT = 0.90;
    /** Default low water level. */
    public static final double EVICT_LOW_DEFAULT = 0.80;

    /** {@code capacity}: a size, or {@code unbounded}; the tier checks it holds one object ({@link #parse}). */
    public static final TierSetting<Long> CAPACITY_SETTING = TierSetting.custom(CAPACITY, Capacity::parseBytes,
            ConfigValues.SIZE_SYNTAX + ", or unbounded", bytes -> bytes == TierUsage.UNBOUNDED ? "unbounded" : ConfigValues.formatSize(bytes))
        .byDefault(TierUsage.UNBOUNDED)
        .rule("a size from 1B to unbounded", bytes -> bytes >= 1)
        .note("at least one object (the engine's page frame)")
        .documented("Most bytes the tier keeps (`512GiB`, `1.5TB`, `unbounded`). When set, the tier evicts by itself (`SELF_EVICTING`).");
    /** {@code evict-high}. */
    public static final TierSetting<Double> EVICT_HIGH_SETTING = TierSetting.ratio(EVICT_HIGH).byDefault(EVICT_HIGH_DEFAULT)
        .rule("a fraction above 0 and at most 1, such as 0.9", ratio -> ratio > 0.0)
        .documented("When used bytes exceed this fraction of `capacity`, evict least recently used files…");
    /** {@code evict-low}; the tier checks it is below {@code evict-high} ({@link #parse}). */
    public static final TierSetting<Double> EVICT_LOW_SETTING = TierSetting.ratio(EVICT_LOW).byDefault(EVICT_LOW_DEFAULT)
        .note("below evict-high")
        .documented("…down to this fraction.");

    /**
     * @param config     the tier's settings
     * @param objectSize one object's bytes: a bounded capacity holds at least one
     * @return the validated capacity
     * @throws TierConfigException naming the setting that is wrong
     */
    public static Capacity parse(final TierConfig config, final long objectSize)
    {
        final long bytes = CAPACITY_SETTING.get(config);
        if (bytes != TierUsage.UNBOUNDED && bytes < objectSize)
        {
            throw config.invalid(CAPACITY, config.string(CAPACITY), "at least one object, " + ConfigValues.formatSize(objectSize)
                + " (the engine's page frame), or unbounded", null);
        }
        final double evictHigh = EVICT_HIGH_SETTING.get(config);
        final double evictLow = EVICT_LOW_SETTING.get(config);
        if (evictLow >= evictHigh)
        {
            throw config.has(EVICT_LOW)
                ? config.invalid(EVICT_LOW, config.string(EVICT_LOW), "a fraction below " + config.qualified(EVICT_HIGH) + " (" + evictHigh + ")", null)
                : config.invalid(EVICT_HIGH, config.string(EVICT_HIGH), "a fraction above " + config.qualified(EVICT_LOW)
                    + " (default " + EVICT_LOW_DEFAULT + "); set both to lower the water levels", null);
        }
        return new Capacity(bytes, evictHigh, evictLow);
    }

    private static long parseBytes(final String text)
    {
        return text.toLowerCase(Locale.ROOT).equals("unbounded") ? TierUsage.UNBOUNDED : ConfigValues.parseSize(text);
    }

    /** @return whether a capacity is set */
    public boolean isBounded()
    {
        return bytes != TierUsage.UNBOUNDED;
    }

    /** @return bytes above which eviction starts, or Long.MAX_VALUE when unbounded */
    public long highWaterBytes()
    {
        return isBounded() ? (long)(evictHigh * bytes) : Long.MAX_VALUE;
    }

    /** @return bytes eviction brings the tier down to, or Long.MAX_VALUE when unbounded */
    public long lowWaterBytes()
    {
        return isBounded() ? (long)(evictLow * bytes) : Long.MAX_VALUE;
    }
}
