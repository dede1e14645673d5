package io.kvtier.tier.threefs;

import io.kvtier.nativeaccess.hf3fs.Hf3fsLibrary;
import io.kvtier.spi.ConfigValues;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierConfigException;
import io.kvtier.spi.TierUsage;
import io.kvtier.tier.support.Capacity;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The 3FS tier's settings, validated: every error names {@code tier.<name>.<key>}, the value and what is
 * allowed. The keys the POSIX tier also has (capacity, water levels, fan-out, temp age, I/O threads) mean
 * the same here and are checked by the same rules, because on a host without the USRBIO library the tier
 * is a POSIX tier on the mount ({@link #posixFallbackConfig}).
 */
final class ThreeFsSettings
{
    static final String DIR = "dir";
    static final String LIB = "lib";
    static final String USRBIO = "usrbio";
    static final String CAPACITY = Capacity.CAPACITY;
    static final String EVICT_HIGH = Capacity.EVICT_HIGH;
    static final String EVICT_LOW = Capacity.EVICT_LOW;
    static final String FANOUT_LEVELS = "fanout-levels";
    static final String TMP_MAX_AGE = "tmp-max-age";
    static final String IO_THREADS = "io-threads";
    static final String ENTRIES = "entries";
    static final String IO_DEPTH = "io-depth";
    static final String TIMEOUT = "timeout";
    static final String DRAIN_TIMEOUT = "drain-timeout";

    static final Set<String> KNOWN = Set.of(DIR, LIB, USRBIO, CAPACITY, EVICT_HIGH, EVICT_LOW, FANOUT_LEVELS, TMP_MAX_AGE, IO_THREADS,
        ENTRIES, IO_DEPTH, TIMEOUT, DRAIN_TIMEOUT);

    static final double EVICT_HIGH_DEFAULT = Capacity.EVICT_HIGH_DEFAULT;
    static final double EVICT_LOW_DEFAULT = Capacity.EVICT_LOW_DEFAULT;
    static final int FANOUT_LEVELS_DEFAULT = 2;
    static final int IO_THREADS_DEFAULT = 2;
    static final Duration TMP_MAX_AGE_DEFAULT = Duration.ofMinutes(10);
    static final int ENTRIES_DEFAULT = 64;
    static final int ENTRIES_MAX = 4096;
    static final Duration TIMEOUT_DEFAULT = Duration.ofSeconds(5);
    static final Duration DRAIN_TIMEOUT_DEFAULT = Duration.ofSeconds(30);
    /** Room under Linux's PATH_MAX (4096) for the fan-out, name and temp suffix. */
    static final int DIR_MAX_BYTES = 3900;

    /** Whether the tier uses USRBIO. */
    enum Usrbio
    {
        /** When the library is found; otherwise POSIX I/O on the mount, logged with the reason. */
        AUTO,
        /** Always; a missing library, symbol or 3FS mount fails the start. */
        ON,
        /** Never: POSIX I/O on the mount. */
        OFF
    }

    final String tierName;
    final Path dir;
    final Optional<String> lib;
    final String libFrom;
    final Usrbio usrbio;
    final long objectSize;
    final long capacity;
    final double evictHigh;
    final double evictLow;
    final int fanoutLevels;
    final Duration tmpMaxAge;
    final int ioThreads;
    final int entries;
    final int ioDepth;
    final Duration timeout;
    final Duration drainTimeout;
    private final TierConfig config;

    private ThreeFsSettings(final TierConfig config, final long objectSize, final Map<String, String> environment)
    {
        config.rejectUnknown(KNOWN);
        this.config = config;
        tierName = config.tierName();
        this.objectSize = objectSize;
        final Path configured = config.path(DIR);
        dir = configured.toAbsolutePath().normalize();
        if (dir.toString().getBytes(StandardCharsets.UTF_8).length > DIR_MAX_BYTES)
        {
            throw config.invalid(DIR, configured.toString(), "a path of at most " + DIR_MAX_BYTES + " bytes, so page paths fit in PATH_MAX", null);
        }
        // On a shared mount the directory is the operators' to make (and to give its permissions): a missing one
        // is far more often a typo or an unmounted 3FS than a wish for a fresh directory on the local disk.
        if (!Files.isDirectory(dir))
        {
            throw config.invalid(DIR, configured.toString(), "an existing directory on the 3FS mount, but " + dir
                + (Files.exists(dir) ? " is not a directory" : " does not exist (is 3FS mounted?)"), null);
        }
        if (config.has(LIB))
        {
            lib = Optional.of(config.string(LIB));
            libFrom = config.qualified(LIB);
            if (lib.get().isBlank())
            {
                throw config.invalid(LIB, lib.get(), "a path to " + Hf3fsLibrary.SONAME, null);
            }
        }
        else
        {
            final String fromEnvironment = environment.get(Hf3fsLibrary.LIBRARY_ENV_NAME);
            lib = fromEnvironment == null || fromEnvironment.isBlank() ? Optional.empty() : Optional.of(fromEnvironment);
            libFrom = Hf3fsLibrary.LIBRARY_ENV_NAME;
        }
        usrbio = usrbio(config);
        final Capacity limits = Capacity.parse(config, objectSize);
        capacity = limits.bytes();
        evictHigh = limits.evictHigh();
        evictLow = limits.evictLow();
        fanoutLevels = config.integer(FANOUT_LEVELS, FANOUT_LEVELS_DEFAULT, 0, 3);
        tmpMaxAge = config.duration(TMP_MAX_AGE, TMP_MAX_AGE_DEFAULT);
        ioThreads = config.integer(IO_THREADS, IO_THREADS_DEFAULT, 1, 64);
        entries = config.integer(ENTRIES, ENTRIES_DEFAULT, 1, ENTRIES_MAX);
        ioDepth = config.integer(IO_DEPTH, 0, -ENTRIES_MAX, ENTRIES_MAX);
        timeout = positive(config, TIMEOUT, TIMEOUT_DEFAULT);
        drainTimeout = positive(config, DRAIN_TIMEOUT, DRAIN_TIMEOUT_DEFAULT);
    }

    /**
     * @param config      the tier's settings
     * @param objectSize  the engine's page frame size
     * @param environment the process environment, for {@code KVTIER_3FS_LIB}
     * @return the validated settings
     * @throws TierConfigException naming the key at fault
     */
    static ThreeFsSettings parse(final TierConfig config, final long objectSize, final Map<String, String> environment)
    {
        return new ThreeFsSettings(config, objectSize, environment);
    }

    private static Usrbio usrbio(final TierConfig config)
    {
        final String value = config.string(USRBIO, "auto");
        try
        {
            return Usrbio.valueOf(value.strip().toUpperCase(Locale.ROOT));
        }
        catch (final IllegalArgumentException ex)
        {
            throw config.invalid(USRBIO, value, "auto, on or off", ex);
        }
    }

    private static Duration positive(final TierConfig config, final String key, final Duration defaultValue)
    {
        final Duration value = config.duration(key, defaultValue);
        if (value.isZero() || value.isNegative() || value.toMillis() == 0)
        {
            throw config.invalid(key, config.string(key), "a duration of at least 1ms, such as 5s", null);
        }
        return value;
    }

    boolean isBounded()
    {
        return capacity != TierUsage.UNBOUNDED;
    }

    long highWaterBytes()
    {
        return isBounded() ? (long)(evictHigh * capacity) : Long.MAX_VALUE;
    }

    long lowWaterBytes()
    {
        return isBounded() ? (long)(evictLow * capacity) : Long.MAX_VALUE;
    }

    /**
     * The settings of the POSIX tier that stands in when USRBIO is not used: same directory and layout, and
     * {@code shared = true}, because a 3FS directory is there to be shared by nodes.
     *
     * @return the POSIX tier's configuration
     */
    TierConfig posixFallbackConfig()
    {
        final Map<String, String> values = new HashMap<>();
        values.put("dir", dir.toString());
        values.put("shared", "true");
        for (final String key : new String[] {CAPACITY, EVICT_HIGH, EVICT_LOW, FANOUT_LEVELS, TMP_MAX_AGE, IO_THREADS})
        {
            if (config.has(key))
            {
                values.put(key, config.string(key));
            }
        }
        return new TierConfig(tierName, values);
    }

    /**
     * @param key     a setting
     * @param value   its value as configured
     * @param allowed what would have been accepted
     * @return the exception naming the key
     */
    TierConfigException invalid(final String key, final String value, final String allowed)
    {
        return config.invalid(key, value, allowed, null);
    }

    /**
     * @param key a setting
     * @return {@code tier.<name>.<key>}
     */
    String qualified(final String key)
    {
        return config.qualified(key);
    }

    @Override
    public String toString()
    {
        return "dir=" + dir
            + ", usrbio=" + usrbio.name().toLowerCase(Locale.ROOT)
            + ", lib=" + lib.map(l -> l + " (" + libFrom + ")").orElse("(loader search for " + Hf3fsLibrary.SONAME + ")")
            + ", capacity=" + (isBounded() ? ConfigValues.formatSize(capacity) : "unbounded")
            + ", evict-high=" + evictHigh
            + ", evict-low=" + evictLow
            + ", fanout-levels=" + fanoutLevels
            + ", tmp-max-age=" + tmpMaxAge
            + ", entries=" + entries
            + ", io-depth=" + ioDepth
            + ", timeout=" + timeout
            + ", drain-timeout=" + drainTimeout;
    }
}
