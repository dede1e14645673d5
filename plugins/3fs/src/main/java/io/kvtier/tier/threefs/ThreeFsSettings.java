package io.kvtier.tier.threefs;

import io.kvtier.spi.ConfigValues;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierConfigException;
import io.kvtier.spi.TierUsage;
import io.kvtier.tier.support.Capacity;
import io.kvtier.tier.support.TierSetting;
import io.kvtier.tier.threefs.hf3fs.Hf3fsLibrary;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The 3FS tier's settings, each declared once as a {@link TierSetting} (its parsing, range, default and the
 * row of {@code docs/plugins/3fs.md}'s table), validated: every error names {@code tier.<name>.<key>}, the
 * value and what is allowed. The keys the POSIX tier also has (capacity, water levels, fan-out, temp age, I/O threads) mean
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
    static final String LAYOUT = "layout";
    static final String EXTENT_SIZE = "extent-size";

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

    // Each setting declared once: its parsing, range, default and the row of docs/plugins/3fs.md (ThreeFsSettingsTest).
    // The directory and the library are checked further in the constructor and at start (ThreeFsTierProvider).
    static final TierSetting<Path> DIR_SETTING = TierSetting.path(DIR)
        .note("at most " + DIR_MAX_BYTES + " bytes; an existing directory, on a 3FS mount when USRBIO is used")
        .documented("The page directory, on the 3FS mount. It must exist (operators create it on the shared mount; a missing one is"
            + " usually an unmounted 3FS or a typo), else start fails naming `tier.<name>.dir`. With USRBIO it must be on a 3FS mount"
            + " (`hf3fs_extract_mount_point`), else start fails.");
    static final TierSetting<String> LIB_SETTING = TierSetting.custom(LIB, text -> text, "a path to " + Hf3fsLibrary.SONAME, text -> text)
        .derivedDefault("`$" + Hf3fsLibrary.LIBRARY_ENV_NAME + "`, else `" + Hf3fsLibrary.SONAME + "` through the dynamic loader")
        .documented("The USRBIO library. One named here or in `" + Hf3fsLibrary.LIBRARY_ENV_NAME + "` must load and export every function"
            + " kvtier binds; otherwise start fails, naming the file and the missing functions. One process binds one library: a second"
            + " 3FS tier naming another fails to start.");
    static final TierSetting<Usrbio> USRBIO_SETTING = TierSetting.choice(USRBIO, Usrbio.class).byDefault(Usrbio.AUTO)
        .documented("`auto`: USRBIO when the library is found, otherwise POSIX I/O on the mount (logged as a warning with the reason)."
            + " `on`: USRBIO or a start error saying what was looked for. `off`: POSIX I/O.");
    static final TierSetting<Integer> ENTRIES_SETTING = TierSetting.integer(ENTRIES).byDefault(ENTRIES_DEFAULT).range(1, ENTRIES_MAX)
        .documented("Entries of each ring (one read ring, one write ring): the most pages in flight per direction; a batch is done in"
            + " chunks of this many.");
    static final TierSetting<Integer> IO_DEPTH_SETTING = TierSetting.integer(IO_DEPTH).byDefault(0).range(-ENTRIES_MAX, ENTRIES_MAX)
        .documented("`io_depth` of `hf3fs_iorcreate4`: 0 lets the client issue I/Os as they come; n > 0 issues them in batches of"
            + " exactly n; n < 0 at most -n at a time.");
    static final TierSetting<Duration> TIMEOUT_SETTING = atLeastOneMilli(TierSetting.duration(TIMEOUT).byDefault(TIMEOUT_DEFAULT))
        .documented("How long a chunk's I/Os may take from their submit. Pages not back by then complete `TIMEOUT` (see Timeouts)."
            + " Also the ring's own `timeout` (the client's batching wait).");
    static final TierSetting<Duration> DRAIN_TIMEOUT_SETTING = atLeastOneMilli(TierSetting.duration(DRAIN_TIMEOUT).byDefault(DRAIN_TIMEOUT_DEFAULT))
        .documented("After a timeout, how much longer the tier waits for the late I/Os before it abandons the ring (see Timeouts).");
    static final TierSetting<Integer> FANOUT_LEVELS_SETTING = TierSetting.integer(FANOUT_LEVELS).byDefault(FANOUT_LEVELS_DEFAULT).range(0, 3)
        .documented("Directory levels between `dir` and the files, as in [the POSIX tier](../../plugins/posix/README.md).");
    static final TierSetting<Duration> TMP_MAX_AGE_SETTING = TierSetting.duration(TMP_MAX_AGE).byDefault(TMP_MAX_AGE_DEFAULT)
        .documented("At start, temp files older than this are deleted (their writer died), as in the POSIX tier.");
    static final TierSetting<Integer> IO_THREADS_SETTING = TierSetting.integer(IO_THREADS).byDefault(IO_THREADS_DEFAULT).range(1, 64)
        .documented("I/O threads of the POSIX fallback. With `layout = slab`, set: the slab's I/O threads, each with a read and a write"
            + " ring of `entries`; unset: the POSIX tier's default there (half the host's processors, at least 1).");
    static final TierSetting<Layout> LAYOUT_SETTING = TierSetting.choice(LAYOUT, Layout.class).byDefault(Layout.FILES)
        .documented("`files`: one file per page, which every node mounting the 3FS sees (see Layout, shared between nodes). `slab`: pages"
            + " as frames in the slots of large extent files in `dir`, the POSIX tier's slab layout (see Slab layout): no file is created,"
            + " opened or renamed per page, and USRBIO moves page bytes between the pool and extents registered once. A slab is one"
            + " engine's alone, not shared: give each engine a directory of its own.");
    static final TierSetting<Long> EXTENT_SIZE_SETTING = TierSetting.size(EXTENT_SIZE).byDefault(1L << 30).range(1L << 20, 1L << 40)
        .documented("With `layout = slab`: the size of one extent file, as in [the POSIX tier](../../plugins/posix/README.md).");

    /**
     * Every setting, in the order the docs' table lists them; capacity and the water levels are the POSIX
     * tier's declarations, since the fallback reads them too.
     */
    static final List<TierSetting<?>> ALL = List.of(DIR_SETTING, LIB_SETTING, USRBIO_SETTING, ENTRIES_SETTING, IO_DEPTH_SETTING,
        TIMEOUT_SETTING, DRAIN_TIMEOUT_SETTING, Capacity.CAPACITY_SETTING, Capacity.EVICT_HIGH_SETTING, Capacity.EVICT_LOW_SETTING,
        FANOUT_LEVELS_SETTING, TMP_MAX_AGE_SETTING, IO_THREADS_SETTING, LAYOUT_SETTING, EXTENT_SIZE_SETTING);

    static final Set<String> KNOWN = TierSetting.keys(ALL);

    /** How pages are kept in {@code dir}. */
    enum Layout
    {
        /** One file per page, shared by every node. */
        FILES,
        /** Frames in extent files, this engine's alone. */
        SLAB
    }

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
    final Layout layout;
    final long extentSize;
    private final TierConfig config;

    private ThreeFsSettings(final TierConfig config, final long objectSize, final Map<String, String> environment)
    {
        config.rejectUnknown(KNOWN);
        this.config = config;
        tierName = config.tierName();
        this.objectSize = objectSize;
        final Path configured = DIR_SETTING.get(config);
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
        final Optional<String> configuredLib = LIB_SETTING.find(config);
        if (configuredLib.isPresent())
        {
            lib = configuredLib;
            libFrom = config.qualified(LIB);
        }
        else
        {
            final String fromEnvironment = environment.get(Hf3fsLibrary.LIBRARY_ENV_NAME);
            lib = fromEnvironment == null || fromEnvironment.isBlank() ? Optional.empty() : Optional.of(fromEnvironment);
            libFrom = Hf3fsLibrary.LIBRARY_ENV_NAME;
        }
        usrbio = USRBIO_SETTING.get(config);
        final Capacity limits = Capacity.parse(config, objectSize);
        capacity = limits.bytes();
        evictHigh = limits.evictHigh();
        evictLow = limits.evictLow();
        fanoutLevels = FANOUT_LEVELS_SETTING.get(config);
        tmpMaxAge = TMP_MAX_AGE_SETTING.get(config);
        ioThreads = IO_THREADS_SETTING.get(config);
        entries = ENTRIES_SETTING.get(config);
        ioDepth = IO_DEPTH_SETTING.get(config);
        timeout = TIMEOUT_SETTING.get(config);
        drainTimeout = DRAIN_TIMEOUT_SETTING.get(config);
        layout = LAYOUT_SETTING.get(config);
        extentSize = EXTENT_SIZE_SETTING.get(config);
        if (layout == Layout.FILES && config.has(EXTENT_SIZE))
        {
            throw config.invalid(EXTENT_SIZE, config.string(EXTENT_SIZE), "unset with " + config.qualified(LAYOUT) + "=files: only a slab"
                + " has extents", null);
        }
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

    private static TierSetting.Builder<Duration> atLeastOneMilli(final TierSetting.Builder<Duration> setting)
    {
        return setting.rule("a duration of at least 1ms, such as 5s", value -> value.toMillis() > 0);
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
        if (layout == Layout.SLAB)
        {
            return posixSlabConfig(false);
        }
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
     * The settings of the POSIX tier's slab on the directory: not shared, and with USRBIO moving the bytes no O_DIRECT
     * (the client does the I/O) and no ring of the POSIX tier's own.
     *
     * @param usrbio whether USRBIO moves the page bytes, else the POSIX tier does its own I/O on the mount
     * @return the POSIX tier's configuration
     */
    TierConfig posixSlabConfig(final boolean usrbio)
    {
        final Map<String, String> values = new HashMap<>();
        values.put("dir", dir.toString());
        values.put("shared", "false");
        values.put("layout", "slab");
        // 3FS's FUSE client implements no fallocate: glibc's posix_fallocate would write into every 4 KiB block of an extent.
        values.put("extent-preallocate", "false");
        if (usrbio)
        {
            values.put("io", "libc");
            values.put("direct-io", "false");
        }
        for (final String key : new String[] {CAPACITY, EVICT_HIGH, EVICT_LOW, IO_THREADS, EXTENT_SIZE})
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
            + ", drain-timeout=" + drainTimeout
            + ", layout=" + layout.name().toLowerCase(Locale.ROOT)
            + (layout == Layout.SLAB ? ", extent-size=" + ConfigValues.formatSize(extentSize) : "");
    }
}
