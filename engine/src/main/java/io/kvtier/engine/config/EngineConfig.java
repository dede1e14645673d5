package io.kvtier.engine.config;

import io.kvtier.spi.ConfigValues;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * The engine's validated settings. Every setting is listed in {@link #SETTINGS} with its default and
 * what it allows; {@code docs/config.md} documents the same table.
 *
 * <p>Validation happens once, in {@link #from(Map)}: unknown keys, malformed values, ranges, and
 * sizes that do not fit all fail there with a {@link ConfigException} naming the key, the value and
 * what is allowed, before anything is created.
 */
public final class EngineConfig
{
    /** Pool file; under /dev/shm by default, or on hugetlbfs. */
    public static final String POOL_PATH = "pool.path";
    /** Bytes of page payload in the pool. */
    public static final String POOL_SIZE = "pool.size";
    /** Payload bytes per page. */
    public static final String POOL_PAGE_SIZE = "pool.page-size";
    /** Eviction starts above this fraction of pages in use. */
    public static final String POOL_EVICT_HIGH = "pool.evict-high";
    /** Eviction stops at this fraction. */
    public static final String POOL_EVICT_LOW = "pool.evict-low";
    /** Processes that may pin pool pages directly (client slots in the pool file). */
    public static final String POOL_CLIENT_SLOTS = "pool.client-slots";
    /** Entries in the key index (pool pages plus known L3 pages). */
    public static final String INDEX_ENTRIES = "index.entries";
    /** A session idle this long loses its pins and reservations. */
    public static final String LEASE_SESSION_TIMEOUT = "lease.session-timeout";
    /** A reservation not committed within this time is reclaimed. */
    public static final String LEASE_RESERVATION_TIMEOUT = "lease.reservation-timeout";
    /** How long a reclaimed page rests before reuse, so a late writer cannot scribble on a new page. */
    public static final String LEASE_QUARANTINE = "lease.quarantine";
    /** When committed pages are copied to L3. */
    public static final String POLICY_WRITE = "policy.write";
    /** Hits before write-through-selective copies a page. */
    public static final String POLICY_WRITE_HIT_THRESHOLD = "policy.write.hit-threshold";
    /** How lookups prefetch L3 pages. */
    public static final String POLICY_PREFETCH = "policy.prefetch";
    /** L3 pages in a prefix before a lookup prefetches them. */
    public static final String POLICY_PREFETCH_THRESHOLD = "policy.prefetch.threshold-pages";
    /** Longest wait of the timeout prefetch mode. */
    public static final String POLICY_PREFETCH_TIMEOUT = "policy.prefetch.timeout";
    /** Keys past the index's knowledge that a lookup asks L3 about. */
    public static final String L3_PROBE_PAGES = "l3.probe-pages";
    /** How long an L3 answer "not found" to a probe is trusted before asking again. */
    public static final String L3_NEGATIVE_PROBE_TTL = "l3.negative-probe-ttl";
    /** An L3 batch unanswered this long is reported and its waiters answered. */
    public static final String L3_IO_TIMEOUT = "l3.io-timeout";
    /** Most pool pages pinned by backups in flight at once. */
    public static final String L3_MAX_BACKUP_PAGES = "l3.max-backup-pages";
    /** Largest number of keys in one L3 batch. */
    public static final String L3_MAX_BATCH = "l3.max-batch";
    /** L3 batches in flight per tier. */
    public static final String L3_MAX_INFLIGHT = "l3.max-inflight-batches";
    /** Request ring slots. */
    public static final String PIPELINE_RING_SIZE = "pipeline.ring-size";
    /** How the pipeline thread waits. */
    public static final String PIPELINE_WAIT_STRATEGY = "pipeline.wait-strategy";
    /** Housekeeping period: leases, timeouts, heartbeat. */
    public static final String PIPELINE_TICK = "pipeline.tick-interval";
    /** Most keys one session request can name. */
    public static final String SESSION_MAX_KEYS = "session.max-keys";

    /** Prefix of tier settings: {@code tier.<name>.type} and the tier's own keys. */
    public static final String TIER_PREFIX = "tier.";

    /** One documented setting. */
    public record Setting(String key, String defaultValue, String allowed, String meaning)
    {
    }

    /** Every engine setting, in documentation order. */
    public static final List<Setting> SETTINGS = List.of(
        new Setting(POOL_PATH, "/dev/shm/kvtier-pool", "a file path whose directory exists (tmpfs or hugetlbfs for zero-copy sharing); an existing file there must be a kvtier pool, which is replaced only if its engine is dead", "the shared-memory pool file other processes map"),
        new Setting(POOL_SIZE, "1GiB", "a size holding at least 2 pages and fitting the pool filesystem's free space", "page payload bytes in the pool"),
        new Setting(POOL_PAGE_SIZE, "256KiB", "a multiple of 4KiB from 4KiB to 1GiB", "payload bytes per page (one page of KV for one key)"),
        new Setting(POOL_EVICT_HIGH, "0.95", "a fraction in (0, 1], above pool.evict-low", "eviction starts when more than this fraction of pages is in use"),
        new Setting(POOL_EVICT_LOW, "0.85", "a fraction in [0, 1), below pool.evict-high", "eviction frees unpinned pages, least recently used first, down to this fraction"),
        new Setting(POOL_CLIENT_SLOTS, "32", "a whole number from 0 to 1024", "processes that may attach to the pool and pin pages directly; each pin is recorded under its process, which loses it when it dies or stays silent for lease.session-timeout"),
        new Setting(INDEX_ENTRIES, "max(4 x pages, 65536)", "at least the page count, at most 2^30", "keys the index can hold: every pool page plus L3 pages it knows of"),
        new Setting(LEASE_SESSION_TIMEOUT, "60s", "a duration of at least 100ms, not shorter than lease.reservation-timeout", "a client silent this long loses its pins and its reservations"),
        new Setting(LEASE_RESERVATION_TIMEOUT, "30s", "a duration of at least 100ms, not longer than lease.session-timeout", "a reserved page not committed in this time is reclaimed and never becomes visible"),
        new Setting(LEASE_QUARANTINE, "equal to lease.reservation-timeout", "a duration", "a reclaimed page rests this long before reuse, so a late writer cannot change another page"),
        new Setting(POLICY_WRITE, "write-through", "none, write-through, write-through-selective, write-back", "when committed pages are copied to L3"),
        new Setting(POLICY_WRITE_HIT_THRESHOLD, "2", "a whole number from 1 to 1000000", "hits before write-through-selective copies a page"),
        new Setting(POLICY_PREFETCH, "best-effort", "off, best-effort, wait-complete, timeout", "whether a lookup loads its L3 pages into the pool and how long it waits for them"),
        new Setting(POLICY_PREFETCH_THRESHOLD, "4", "a whole number from 1 to 1000000", "L3 pages a prefix must have before a lookup prefetches them"),
        new Setting(POLICY_PREFETCH_TIMEOUT, "2s", "a duration of at least 1ms", "longest wait of the timeout prefetch mode"),
        new Setting(L3_PROBE_PAGES, "64", "a whole number from 0 to session.max-keys", "keys past what the index knows that a lookup asks L3 about (shared or restarted L3); 0 disables"),
        new Setting(L3_NEGATIVE_PROBE_TTL, "2s", "a duration; 0 turns the memory off", "how long the engine trusts an L3 answer that a key is missing before probing it again (a key this engine backs up is forgotten at once; another node's writes show after this time)"),
        new Setting(L3_IO_TIMEOUT, "30s", "a duration of at least 100ms", "an L3 batch unanswered this long is reported; its waiters get a miss"),
        new Setting(L3_MAX_BACKUP_PAGES, "a quarter of the pool's pages", "a whole number from 1 to 1073741824",
            "most pool pages pinned by backups in flight at once; more wait unpinned in a backlog, and one evicted before its backup starts is counted in backups_skipped (write-through) so that a slow L3 never pins the whole pool"),
        new Setting(L3_MAX_BATCH, "256", "a whole number from 1 to 65536", "most keys in one batch handed to a tier"),
        new Setting(L3_MAX_INFLIGHT, "64", "a whole number from 1 to 4096", "batches in flight per tier; more requests wait in the engine"),
        new Setting(PIPELINE_RING_SIZE, "4096", "a power of two from 64 to 1048576", "request ring slots"),
        new Setting(PIPELINE_WAIT_STRATEGY, "park", "park, blocking, sleeping, yielding, busy-spin", "how the pipeline thread waits for work"),
        new Setting(PIPELINE_TICK, "10ms", "a duration from 1ms to 1s", "housekeeping period: leases, timeouts, heartbeat"),
        new Setting(SESSION_MAX_KEYS, "16384", "a whole number from 1 to 1048576", "most pages one session request can name"),
        new Setting("tier.<name>.type", "(no tiers)", "a tier type found on the class path, e.g. posix", "adds an L3 tier named <name>; tiers are used in the order they appear"),
        new Setting("tier.<name>.<setting>", "", "see the tier's documentation", "passed to the tier, e.g. tier.nvme.dir"));

    private final Path poolPath;
    private final long pageSize;
    private final int pageCount;
    private final double evictHigh;
    private final double evictLow;
    private final long indexEntries;
    private final int clientSlots;
    private final Duration sessionTimeout;
    private final Duration reservationTimeout;
    private final Duration quarantine;
    private final WritePolicy writePolicy;
    private final int writeHitThreshold;
    private final PrefetchMode prefetchMode;
    private final int prefetchThresholdPages;
    private final Duration prefetchTimeout;
    private final int probePages;
    private final Duration negativeProbeTtl;
    private final Duration l3IoTimeout;
    private final int l3MaxBatch;
    private final int maxBackupPages;
    private final int l3MaxInflight;
    private final int ringSize;
    private final WaitStrategyKind waitStrategy;
    private final Duration tickInterval;
    private final int sessionMaxKeys;
    private final List<TierSettings> tiers;

    /** The settings of one tier, in configuration order. */
    public record TierSettings(String name, String type, Map<String, String> settings)
    {
    }

    private EngineConfig(final Reader r)
    {
        poolPath = r.path(POOL_PATH, "/dev/shm/kvtier-pool");
        pageSize = r.size(POOL_PAGE_SIZE, 256L << 10, 4096, 1L << 30);
        if (pageSize % 4096 != 0)
        {
            throw r.invalid(POOL_PAGE_SIZE, "a multiple of 4KiB from 4KiB to 1GiB");
        }
        final long poolSize = r.size(POOL_SIZE, 1L << 30, 1, Long.MAX_VALUE);
        final long pages = poolSize / pageSize;
        if (pages < 2)
        {
            throw r.invalid(POOL_SIZE, "at least 2 pages of pool.page-size = " + ConfigValues.formatSize(pageSize) + ", i.e. " + ConfigValues.formatSize(2 * pageSize));
        }
        if (pages > (1 << 30))
        {
            throw r.invalid(POOL_SIZE, "at most 2^30 pages of pool.page-size = " + ConfigValues.formatSize(pageSize) + "; use a larger page size");
        }
        pageCount = (int)pages;
        evictHigh = r.ratio(POOL_EVICT_HIGH, 0.95);
        evictLow = r.ratio(POOL_EVICT_LOW, 0.85);
        if (evictHigh <= 0.0)
        {
            throw r.invalid(POOL_EVICT_HIGH, "a fraction in (0, 1]");
        }
        if (evictLow >= evictHigh)
        {
            throw r.invalid(r.has(POOL_EVICT_LOW) ? POOL_EVICT_LOW : POOL_EVICT_HIGH,
                "pool.evict-low below pool.evict-high (now low = " + evictLow + ", high = " + evictHigh + ")");
        }
        indexEntries = r.longValue(INDEX_ENTRIES, Math.max(4L * pageCount, 65_536L), pageCount, 1L << 30);
        clientSlots = (int)r.longValue(POOL_CLIENT_SLOTS, 32, 0, 1024);
        sessionTimeout = r.duration(LEASE_SESSION_TIMEOUT, Duration.ofSeconds(60), Duration.ofMillis(100));
        reservationTimeout = r.duration(LEASE_RESERVATION_TIMEOUT, Duration.ofSeconds(30), Duration.ofMillis(100));
        if (sessionTimeout.compareTo(reservationTimeout) < 0)
        {
            // A session that expires while its reservation still runs leaves a writer that believes it
            // may write; reservations must lapse (and rest in quarantine) no later than their session.
            final String key = r.has(LEASE_SESSION_TIMEOUT) ? LEASE_SESSION_TIMEOUT : LEASE_RESERVATION_TIMEOUT;
            throw new ConfigException(key, "invalid " + key + " = \"" + r.raw(key, "") + "\": lease.session-timeout ("
                + sessionTimeout.toMillis() + "ms) must not be shorter than lease.reservation-timeout (" + reservationTimeout.toMillis()
                + "ms), or a client whose session expired could still be writing a reserved page when it is reclaimed");
        }
        quarantine = r.duration(LEASE_QUARANTINE, reservationTimeout, Duration.ZERO);
        writePolicy = r.choice(POLICY_WRITE, WritePolicy.WRITE_THROUGH, WritePolicy.values(), WritePolicy::configName);
        writeHitThreshold = (int)r.longValue(POLICY_WRITE_HIT_THRESHOLD, 2, 1, 1_000_000);
        prefetchMode = r.choice(POLICY_PREFETCH, PrefetchMode.BEST_EFFORT, PrefetchMode.values(), PrefetchMode::configName);
        prefetchThresholdPages = (int)r.longValue(POLICY_PREFETCH_THRESHOLD, 4, 1, 1_000_000);
        prefetchTimeout = r.duration(POLICY_PREFETCH_TIMEOUT, Duration.ofSeconds(2), Duration.ofMillis(1));
        sessionMaxKeys = (int)r.longValue(SESSION_MAX_KEYS, 16_384, 1, 1 << 20);
        probePages = (int)r.longValue(L3_PROBE_PAGES, Math.min(64, sessionMaxKeys), 0, sessionMaxKeys);
        negativeProbeTtl = r.duration(L3_NEGATIVE_PROBE_TTL, Duration.ofSeconds(2), Duration.ZERO);
        l3IoTimeout = r.duration(L3_IO_TIMEOUT, Duration.ofSeconds(30), Duration.ofMillis(100));
        l3MaxBatch = (int)r.longValue(L3_MAX_BATCH, 256, 1, 65_536);
        maxBackupPages = (int)r.longValue(L3_MAX_BACKUP_PAGES, 0, 1, 1 << 30);
        l3MaxInflight = (int)r.longValue(L3_MAX_INFLIGHT, 64, 1, 4096);
        ringSize = (int)r.longValue(PIPELINE_RING_SIZE, 4096, 64, 1 << 20);
        if (Integer.bitCount(ringSize) != 1)
        {
            throw r.invalid(PIPELINE_RING_SIZE, "a power of two from 64 to 1048576");
        }
        waitStrategy = r.choice(PIPELINE_WAIT_STRATEGY, WaitStrategyKind.PARK, WaitStrategyKind.values(), WaitStrategyKind::configName);
        tickInterval = r.duration(PIPELINE_TICK, Duration.ofMillis(10), Duration.ofMillis(1));
        if (tickInterval.compareTo(Duration.ofSeconds(1)) > 0)
        {
            throw r.invalid(PIPELINE_TICK, "a duration from 1ms to 1s");
        }
        tiers = r.tiers();
        r.rejectUnknown();
        checkPoolFits(r, poolPath, (long)pageCount * pageSize);
    }

    private static void checkPoolFits(final Reader r, final Path poolPath, final long bytes)
    {
        final Path directory = poolPath.toAbsolutePath().getParent();
        if (directory == null || !Files.isDirectory(directory))
        {
            throw r.invalid(POOL_PATH, "a file in an existing directory; " + directory + " does not exist");
        }
        try
        {
            final long usable = Files.getFileStore(directory).getUsableSpace();
            final long existing = Files.isRegularFile(poolPath) ? Files.size(poolPath) : 0;
            if (bytes > usable + existing)
            {
                throw new ConfigException(POOL_SIZE, "pool.size = \"" + r.raw(POOL_SIZE, "1GiB") + "\" does not fit: the pool needs "
                    + ConfigValues.formatSize(bytes) + " of page data but " + directory + " has " + human(usable + existing)
                    + " free; lower pool.size or move pool.path");
            }
        }
        catch (final IOException ex)
        {
            throw new ConfigException(POOL_PATH, "cannot inspect the filesystem of pool.path = \"" + poolPath + "\": " + ex.getMessage(), ex);
        }
    }

    private static String human(final long bytes)
    {
        return String.format(Locale.ROOT, "%.1fGiB", bytes / (double)(1L << 30));
    }

    /**
     * @param raw settings as read from a file or command line; every key must be known
     * @return validated settings
     * @throws ConfigException naming the key, value and what is allowed
     */
    public static EngineConfig from(final Map<String, String> raw)
    {
        return new EngineConfig(new Reader(raw));
    }

    /**
     * @param file      a settings file, or null for the defaults
     * @param overrides settings that replace the file's (e.g. from {@code --set})
     * @return validated settings
     * @throws ConfigException naming the file, key, value and what is allowed
     */
    public static EngineConfig load(final Path file, final Map<String, String> overrides)
    {
        final Map<String, String> raw = new LinkedHashMap<>(file == null ? Map.of() : ConfigFile.read(file));
        raw.putAll(overrides);
        try
        {
            return from(raw);
        }
        catch (final ConfigException ex)
        {
            if (file == null)
            {
                throw ex;
            }
            throw new ConfigException(ex.key(), file + ": " + ex.getMessage(), ex);
        }
    }

    /** @return the pool file */
    public Path poolPath()
    {
        return poolPath;
    }

    /** @return payload bytes per page */
    public long pageSize()
    {
        return pageSize;
    }

    /** @return pages in the pool */
    public int pageCount()
    {
        return pageCount;
    }

    /** @return the fraction of pages in use above which eviction starts */
    public double evictHigh()
    {
        return evictHigh;
    }

    /** @return the fraction eviction frees down to */
    public double evictLow()
    {
        return evictLow;
    }

    /** @return entries of the key index */
    public long indexEntries()
    {
        return indexEntries;
    }

    /** @return processes that may pin pool pages directly */
    public int clientSlots()
    {
        return clientSlots;
    }

    /** @return idle time after which a session's pins and reservations are reclaimed */
    public Duration sessionTimeout()
    {
        return sessionTimeout;
    }

    /** @return time after which an uncommitted reservation is reclaimed */
    public Duration reservationTimeout()
    {
        return reservationTimeout;
    }

    /** @return how long a reclaimed page rests before reuse */
    public Duration quarantine()
    {
        return quarantine;
    }

    /** @return when pages are copied to L3 */
    public WritePolicy writePolicy()
    {
        return writePolicy;
    }

    /** @return hits before write-through-selective copies a page */
    public int writeHitThreshold()
    {
        return writeHitThreshold;
    }

    /** @return how lookups prefetch */
    public PrefetchMode prefetchMode()
    {
        return prefetchMode;
    }

    /** @return L3 pages before a lookup prefetches */
    public int prefetchThresholdPages()
    {
        return prefetchThresholdPages;
    }

    /** @return longest wait of the timeout mode */
    public Duration prefetchTimeout()
    {
        return prefetchTimeout;
    }

    /** @return keys past the index's knowledge that a lookup probes */
    public int probePages()
    {
        return probePages;
    }

    /** @return how long a negative probe answer is trusted, zero for never */
    public Duration negativeProbeTtl()
    {
        return negativeProbeTtl;
    }

    /** @return time after which an L3 batch is reported as late */
    public Duration l3IoTimeout()
    {
        return l3IoTimeout;
    }

    /**
     * @param pageCount pages in the pool
     * @return most pages pinned by backups in flight: the setting, or a quarter of the pool
     */
    public int maxBackupPages(final int pageCount)
    {
        return maxBackupPages > 0 ? Math.min(maxBackupPages, pageCount) : Math.max(1, pageCount / 4);
    }

    /** @return most keys per tier batch */
    public int l3MaxBatch()
    {
        return l3MaxBatch;
    }

    /** @return batches in flight per tier */
    public int l3MaxInflight()
    {
        return l3MaxInflight;
    }

    /** @return request ring slots */
    public int ringSize()
    {
        return ringSize;
    }

    /** @return how the pipeline thread waits */
    public WaitStrategyKind waitStrategy()
    {
        return waitStrategy;
    }

    /** @return housekeeping period */
    public Duration tickInterval()
    {
        return tickInterval;
    }

    /** @return most keys per session request */
    public int sessionMaxKeys()
    {
        return sessionMaxKeys;
    }

    /** @return the L3 tiers, in configuration order */
    public List<TierSettings> tiers()
    {
        return tiers;
    }

    /** Reads typed values and remembers which keys were consumed, so leftovers are unknown keys. */
    private static final class Reader
    {
        private final Map<String, String> raw;
        private final Map<String, Boolean> used = new LinkedHashMap<>();

        Reader(final Map<String, String> raw)
        {
            this.raw = raw;
        }

        boolean has(final String key)
        {
            return raw.containsKey(key);
        }

        String raw(final String key, final String defaultValue)
        {
            return raw.getOrDefault(key, defaultValue);
        }

        ConfigException invalid(final String key, final String allowed)
        {
            return new ConfigException(key, "invalid " + key + " = \"" + raw.get(key) + "\": expected " + allowed);
        }

        private String take(final String key)
        {
            used.put(key, Boolean.TRUE);
            final String value = raw.get(key);
            return value == null ? null : value.trim();
        }

        Path path(final String key, final String defaultValue)
        {
            final String text = take(key);
            try
            {
                return Path.of(text == null ? defaultValue : text);
            }
            catch (final InvalidPathException ex)
            {
                throw new ConfigException(key, "invalid " + key + " = \"" + text + "\": expected a file path", ex);
            }
        }

        long size(final String key, final long defaultValue, final long min, final long max)
        {
            final String text = take(key);
            if (text == null)
            {
                return defaultValue;
            }
            final long value;
            try
            {
                value = ConfigValues.parseSize(text);
            }
            catch (final IllegalArgumentException ex)
            {
                throw new ConfigException(key, "invalid " + key + " = \"" + text + "\": expected " + ConfigValues.SIZE_SYNTAX, ex);
            }
            if (value < min || value > max)
            {
                throw new ConfigException(key, "invalid " + key + " = \"" + text + "\": expected a size from "
                    + ConfigValues.formatSize(min) + " to " + (max == Long.MAX_VALUE ? "unbounded" : ConfigValues.formatSize(max)));
            }
            return value;
        }

        double ratio(final String key, final double defaultValue)
        {
            final String text = take(key);
            if (text == null)
            {
                return defaultValue;
            }
            try
            {
                return ConfigValues.parseRatio(text);
            }
            catch (final IllegalArgumentException ex)
            {
                throw new ConfigException(key, "invalid " + key + " = \"" + text + "\": " + ex.getMessage(), ex);
            }
        }

        long longValue(final String key, final long defaultValue, final long min, final long max)
        {
            final String text = take(key);
            if (text == null)
            {
                return defaultValue;
            }
            final long value;
            try
            {
                value = Long.parseLong(text.replace("_", ""));
            }
            catch (final NumberFormatException ex)
            {
                throw new ConfigException(key, "invalid " + key + " = \"" + text + "\": expected a whole number from " + min + " to " + max, ex);
            }
            if (value < min || value > max)
            {
                throw new ConfigException(key, "invalid " + key + " = \"" + text + "\": expected a whole number from " + min + " to " + max);
            }
            return value;
        }

        Duration duration(final String key, final Duration defaultValue, final Duration min)
        {
            final String text = take(key);
            if (text == null)
            {
                return defaultValue;
            }
            final Duration value;
            try
            {
                value = ConfigValues.parseDuration(text);
            }
            catch (final IllegalArgumentException ex)
            {
                throw new ConfigException(key, "invalid " + key + " = \"" + text + "\": expected " + ConfigValues.DURATION_SYNTAX, ex);
            }
            if (value.compareTo(min) < 0)
            {
                throw new ConfigException(key, "invalid " + key + " = \"" + text + "\": expected a duration of at least " + min.toMillis() + "ms");
            }
            return value;
        }

        <E extends Enum<E>> E choice(final String key, final E defaultValue, final E[] values, final Function<E, String> name)
        {
            final String text = take(key);
            if (text == null)
            {
                return defaultValue;
            }
            final List<String> names = new ArrayList<>();
            for (final E value : values)
            {
                if (name.apply(value).equals(text.toLowerCase(Locale.ROOT)))
                {
                    return value;
                }
                names.add(name.apply(value));
            }
            throw new ConfigException(key, "invalid " + key + " = \"" + text + "\": expected one of " + String.join(", ", names));
        }

        List<TierSettings> tiers()
        {
            final Map<String, Map<String, String>> byName = new LinkedHashMap<>();
            for (final Map.Entry<String, String> entry : raw.entrySet())
            {
                final String key = entry.getKey();
                if (!key.startsWith(TIER_PREFIX))
                {
                    continue;
                }
                final String rest = key.substring(TIER_PREFIX.length());
                final int dot = rest.indexOf('.');
                if (dot <= 0 || dot == rest.length() - 1)
                {
                    throw new ConfigException(key, "invalid setting " + key + ": tier settings look like tier.<name>.<setting>, e.g. tier.nvme.type");
                }
                used.put(key, Boolean.TRUE);
                byName.computeIfAbsent(rest.substring(0, dot), n -> new LinkedHashMap<>()).put(rest.substring(dot + 1), entry.getValue().trim());
            }
            final List<TierSettings> result = new ArrayList<>();
            for (final Map.Entry<String, Map<String, String>> tier : byName.entrySet())
            {
                final String name = tier.getKey();
                if (!name.matches("[a-z0-9][a-z0-9_-]*"))
                {
                    throw new ConfigException(TIER_PREFIX + name, "invalid tier name '" + name + "' in tier." + name + ".*: use lowercase letters, digits, '-' and '_'");
                }
                final Map<String, String> settings = new LinkedHashMap<>(tier.getValue());
                final String type = settings.remove("type");
                if (type == null || type.isBlank())
                {
                    throw new ConfigException(TIER_PREFIX + name + ".type", "missing setting tier." + name + ".type: every tier needs a type, e.g. tier." + name + ".type = posix");
                }
                result.add(new TierSettings(name, type, Collections.unmodifiableMap(settings)));
            }
            if (result.size() > 30)
            {
                throw new ConfigException(TIER_PREFIX, "too many tiers: " + result.size() + " configured, at most 30 are supported");
            }
            return List.copyOf(result);
        }

        void rejectUnknown()
        {
            for (final String key : raw.keySet())
            {
                if (!used.containsKey(key))
                {
                    final List<String> known = new ArrayList<>();
                    for (final Setting setting : SETTINGS)
                    {
                        known.add(setting.key());
                    }
                    throw new ConfigException(key, "unknown setting " + key + " = \"" + raw.get(key) + "\": known settings are " + String.join(", ", known));
                }
            }
        }
    }
}
