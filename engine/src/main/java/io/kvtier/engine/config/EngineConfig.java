package io.kvtier.engine.config;

import io.kvtier.engine.pool.PoolFilesystem;
import io.kvtier.spi.ConfigValues;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The engine's validated settings. Each setting is declared once, typed, in {@link EngineSettings}:
 * key, default, range and meaning; {@code docs/config.md} lists the same declarations.
 *
 * <p>Validation happens once, in {@link #from(Map)}: unknown keys, malformed values, ranges, the
 * conditions between settings, and a pool that does not fit its filesystem all fail there with a
 * {@link ConfigException} naming the key, the value and what is allowed, before anything is created.
 */
public final class EngineConfig
{
    private static final System.Logger LOG = System.getLogger(EngineConfig.class.getName());
    /** Deprecated keys already warned about: a warning once per process, not once per engine. */
    private static final Set<String> DEPRECATION_WARNED = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** Pool file; under /dev/shm by default, or on hugetlbfs. */
    public static final String POOL_PATH = EngineSettings.POOL_PATH.key();
    /** Bytes of page payload in the pool. */
    public static final String POOL_SIZE = EngineSettings.POOL_SIZE.key();
    /** Payload bytes per page. */
    public static final String POOL_PAGE_SIZE = EngineSettings.POOL_PAGE_SIZE.key();
    /** Eviction starts above this fraction of pages in use. */
    public static final String POOL_EVICT_HIGH = EngineSettings.POOL_EVICT_HIGH.key();
    /** Eviction stops at this fraction. */
    public static final String POOL_EVICT_LOW = EngineSettings.POOL_EVICT_LOW.key();
    /** Processes that may pin pool pages directly (client slots in the pool file). */
    public static final String POOL_CLIENT_SLOTS = EngineSettings.POOL_CLIENT_SLOTS.key();
    /** Whether a dead engine's committed pages are adopted at start. */
    public static final String POOL_WARM_RESTART = EngineSettings.POOL_WARM_RESTART.key();
    /** Whether write-back copies pages ahead of eviction. */
    public static final String POLICY_WRITE_BACK_CLEAN_AHEAD = EngineSettings.POLICY_WRITE_BACK_CLEAN_AHEAD.key();
    /** Whether a clean stop leaves the pool file for the next engine to adopt. */
    public static final String POOL_KEEP_ON_STOP = EngineSettings.POOL_KEEP_ON_STOP.key();
    /** Entries in the key index (pool pages plus known L3 pages). */
    public static final String INDEX_ENTRIES = EngineSettings.INDEX_ENTRIES.key();
    /** A session idle this long loses its pins and reservations. */
    public static final String LEASE_SESSION_TIMEOUT = EngineSettings.LEASE_SESSION_TIMEOUT.key();
    /** A reservation not committed within this time is reclaimed. */
    public static final String LEASE_RESERVATION_TIMEOUT = EngineSettings.LEASE_RESERVATION_TIMEOUT.key();
    /** How long a reclaimed page rests before reuse, so a late writer cannot scribble on a new page. */
    public static final String LEASE_QUARANTINE = EngineSettings.LEASE_QUARANTINE.key();
    /** When committed pages are copied to L3. */
    public static final String POLICY_WRITE = EngineSettings.POLICY_WRITE.key();
    /** Hits before write-through-selective copies a page. */
    public static final String POLICY_WRITE_HIT_THRESHOLD = EngineSettings.POLICY_WRITE_HIT_THRESHOLD.key();
    /** The order in which resident pages leave the pool. */
    public static final String POLICY_EVICTION = EngineSettings.POLICY_EVICTION.key();
    /** How lookups prefetch L3 pages. */
    public static final String POLICY_PREFETCH = EngineSettings.POLICY_PREFETCH.key();
    /** L3 pages in a prefix before a lookup prefetches them. */
    public static final String POLICY_PREFETCH_THRESHOLD = EngineSettings.POLICY_PREFETCH_THRESHOLD.key();
    /** Longest wait of the timeout prefetch mode. */
    public static final String POLICY_PREFETCH_TIMEOUT = EngineSettings.POLICY_PREFETCH_TIMEOUT.key();
    /** Keys past the index's knowledge that a lookup asks L3 about. */
    public static final String L3_PROBE_PAGES = EngineSettings.L3_PROBE_PAGES.key();
    /** How long an L3 answer "not found" to a probe is trusted before asking again. */
    public static final String L3_NEGATIVE_PROBE_TTL = EngineSettings.L3_NEGATIVE_PROBE_TTL.key();
    /** An L3 batch unanswered this long is reported and its waiters answered. */
    public static final String L3_IO_TIMEOUT = EngineSettings.L3_IO_TIMEOUT.key();
    /** Most pool pages pinned by backups in flight at once. */
    public static final String L3_MAX_BACKUP_PAGES = EngineSettings.L3_MAX_BACKUP_PAGES.key();
    /** Largest number of keys in one L3 batch. */
    public static final String L3_MAX_BATCH = EngineSettings.L3_MAX_BATCH.key();
    /** L3 batches in flight per tier. */
    public static final String L3_MAX_INFLIGHT = EngineSettings.L3_MAX_INFLIGHT.key();
    /** Request ring slots. */
    public static final String PIPELINE_RING_SIZE = EngineSettings.PIPELINE_RING_SIZE.key();
    /** Deprecated alias of {@link #ENGINE_IDLE_STRATEGY}. */
    public static final String PIPELINE_WAIT_STRATEGY = EngineSettings.PIPELINE_WAIT_STRATEGY.key();
    /** The engine thread's idle strategy. */
    public static final String ENGINE_IDLE_STRATEGY = EngineSettings.ENGINE_IDLE_STRATEGY.key();
    /** Deprecated alias of {@link #ENGINE_IDLE_STRATEGY}. */
    public static final String IPC_IDLE_STRATEGY = EngineSettings.IPC_IDLE_STRATEGY.key();
    /** Housekeeping period: leases, timeouts, heartbeat. */
    public static final String PIPELINE_TICK = EngineSettings.PIPELINE_TICK.key();
    /** Most keys one session request can name. */
    public static final String SESSION_MAX_KEYS = EngineSettings.SESSION_MAX_KEYS.key();

    /** Prefix of tier settings: {@code tier.<name>.type} and the tier's own keys. */
    public static final String TIER_PREFIX = "tier.";
    /** Settings that start so belong to a source tier's migration strategy. */
    public static final String MIGRATION_PREFIX = "migration.";

    private final Map<Setting<?>, Object> values;
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
    private final String evictionPolicy;
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
    private final Map<String, long[]> writeBudgets;
    private final List<MigrationStrategy> migrations;
    private final AdmissionMode admissionMode;

    /**
     * The settings of one tier, in configuration order.
     *
     * @param name     its name
     * @param type     its provider's type
     * @param settings what goes to its plugin (neither {@code type} nor {@code trusted})
     * @param trusted  {@code tier.<name>.trusted} as set, or null for the default (trusted unless its plugin is in plugins.dir)
     */
    public record TierSettings(String name, String type, Map<String, String> settings, Boolean trusted)
    {
        /**
         * A tier with the default trust.
         *
         * @param name     its name
         * @param type     its provider's type
         * @param settings what goes to its plugin
         */
        public TierSettings(final String name, final String type, final Map<String, String> settings)
        {
            this(name, type, settings, null);
        }
    }

    private EngineConfig(final Values v)
    {
        poolPath = v.get(EngineSettings.POOL_PATH);
        pageSize = v.get(EngineSettings.POOL_PAGE_SIZE);
        pageCount = (int)EngineSettings.pages(v);
        evictHigh = v.get(EngineSettings.POOL_EVICT_HIGH);
        evictLow = v.get(EngineSettings.POOL_EVICT_LOW);
        if (evictLow >= evictHigh)
        {
            final String key = v.isSet(EngineSettings.POOL_EVICT_LOW) ? POOL_EVICT_LOW : POOL_EVICT_HIGH;
            throw new ConfigException(key, "invalid " + key + " = \"" + v.text(key) + "\": expected pool.evict-low below pool.evict-high (now low = "
                + evictLow + ", high = " + evictHigh + ")");
        }
        indexEntries = v.get(EngineSettings.INDEX_ENTRIES);
        clientSlots = v.get(EngineSettings.POOL_CLIENT_SLOTS);
        sessionTimeout = v.get(EngineSettings.LEASE_SESSION_TIMEOUT);
        reservationTimeout = v.get(EngineSettings.LEASE_RESERVATION_TIMEOUT);
        if (sessionTimeout.compareTo(reservationTimeout) < 0)
        {
            // A session that expires while its reservation still runs leaves a writer that believes it
            // may write; reservations must lapse (and rest in quarantine) no later than their session.
            final String key = v.isSet(EngineSettings.LEASE_SESSION_TIMEOUT) ? LEASE_SESSION_TIMEOUT : LEASE_RESERVATION_TIMEOUT;
            throw new ConfigException(key, "invalid " + key + " = \"" + v.text(key) + "\": lease.session-timeout ("
                + sessionTimeout.toMillis() + "ms) must not be shorter than lease.reservation-timeout (" + reservationTimeout.toMillis()
                + "ms), or a client whose session expired could still be writing a reserved page when it is reclaimed");
        }
        quarantine = v.get(EngineSettings.LEASE_QUARANTINE);
        writePolicy = v.get(EngineSettings.POLICY_WRITE);
        evictionPolicy = v.get(EngineSettings.POLICY_EVICTION);
        writeHitThreshold = v.get(EngineSettings.POLICY_WRITE_HIT_THRESHOLD);
        prefetchMode = v.get(EngineSettings.POLICY_PREFETCH);
        prefetchThresholdPages = v.get(EngineSettings.POLICY_PREFETCH_THRESHOLD);
        prefetchTimeout = v.get(EngineSettings.POLICY_PREFETCH_TIMEOUT);
        sessionMaxKeys = v.get(EngineSettings.SESSION_MAX_KEYS);
        probePages = v.get(EngineSettings.L3_PROBE_PAGES);
        negativeProbeTtl = v.get(EngineSettings.L3_NEGATIVE_PROBE_TTL);
        l3IoTimeout = v.get(EngineSettings.L3_IO_TIMEOUT);
        l3MaxBatch = v.get(EngineSettings.L3_MAX_BATCH);
        maxBackupPages = v.get(EngineSettings.L3_MAX_BACKUP_PAGES);
        l3MaxInflight = v.get(EngineSettings.L3_MAX_INFLIGHT);
        ringSize = v.get(EngineSettings.PIPELINE_RING_SIZE);
        waitStrategy = v.get(EngineSettings.PIPELINE_WAIT_STRATEGY);
        tickInterval = v.get(EngineSettings.PIPELINE_TICK);
        v.resolveAs(EngineSettings.ENGINE_IDLE_STRATEGY, idleStrategy(v));
        for (final Setting<?> setting : EngineSettings.ALL)
        {
            v.get(setting);
        }
        values = v.resolved();
        writeBudgets = new LinkedHashMap<>();
        tiers = v.ordered(v.tiers(writeBudgets));
        migrations = v.migrations(tiers);
        admissionMode = v.get(EngineSettings.ADMISSION_MODE);
        v.rejectUnknown();
        checkPoolFits(v, poolPath, (long)pageCount * pageSize);
    }

    /**
     * {@code engine.idle-strategy}, or what a deprecated alias says in its place (a warning, once per alias):
     * {@code ipc.idle-strategy} with IPC enabled, else {@code pipeline.wait-strategy}, as each governed the
     * engine thread before. An alias set to another value than the key itself is an error.
     */
    private static IdleStrategyKind idleStrategy(final Values v)
    {
        final IdleStrategyKind own = v.get(EngineSettings.ENGINE_IDLE_STRATEGY);
        IdleStrategyKind fromAlias = null;
        String alias = null;
        final boolean ipc = v.get(EngineSettings.IPC_ENABLED);
        if (v.isSet(EngineSettings.IPC_IDLE_STRATEGY) && (ipc || !v.isSet(EngineSettings.PIPELINE_WAIT_STRATEGY)))
        {
            alias = IPC_IDLE_STRATEGY;
            fromAlias = IdleStrategyKind.of(v.get(EngineSettings.IPC_IDLE_STRATEGY));
        }
        else if (v.isSet(EngineSettings.PIPELINE_WAIT_STRATEGY))
        {
            alias = PIPELINE_WAIT_STRATEGY;
            fromAlias = IdleStrategyKind.of(v.get(EngineSettings.PIPELINE_WAIT_STRATEGY));
        }
        for (final Setting<?> deprecated : List.of(EngineSettings.PIPELINE_WAIT_STRATEGY, EngineSettings.IPC_IDLE_STRATEGY))
        {
            if (v.isSet(deprecated) && DEPRECATION_WARNED.add(deprecated.key()))
            {
                LOG.log(System.Logger.Level.WARNING, "{0} is deprecated: set {1} instead", deprecated.key(), ENGINE_IDLE_STRATEGY);
            }
        }
        if (fromAlias == null)
        {
            return own;
        }
        if (v.isSet(EngineSettings.ENGINE_IDLE_STRATEGY))
        {
            if (fromAlias != own)
            {
                throw new ConfigException(ENGINE_IDLE_STRATEGY, "conflicting " + ENGINE_IDLE_STRATEGY + " = \"" + v.text(ENGINE_IDLE_STRATEGY)
                    + "\" and " + alias + " = \"" + v.text(alias) + "\" (its deprecated alias, read as " + fromAlias.configName()
                    + "): set " + ENGINE_IDLE_STRATEGY + " only");
            }
            return own;
        }
        return fromAlias;
    }

    private static void checkPoolFits(final Values v, final Path poolPath, final long bytes)
    {
        final Path directory = poolPath.toAbsolutePath().getParent();
        if (directory == null || !Files.isDirectory(directory))
        {
            throw new ConfigException(POOL_PATH, "invalid " + POOL_PATH + " = \"" + v.text(POOL_PATH) + "\": expected a file in an existing directory; "
                + directory + " does not exist");
        }
        try
        {
            final long usable = PoolFilesystem.usableBytes(directory);
            final long existing = Files.isRegularFile(poolPath) ? Files.size(poolPath) : 0;
            if (bytes > usable + existing)
            {
                throw new ConfigException(POOL_SIZE, "pool.size = \"" + v.text(POOL_SIZE) + "\" does not fit: the pool needs "
                    + ConfigValues.formatSize(bytes) + " of page data but " + directory + " has " + human(usable + existing)
                    + " " + PoolFilesystem.freeSpaceWord(directory) + "; lower pool.size or move pool.path");
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
        return new EngineConfig(new Values(raw));
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

    /**
     * @param setting one of {@link EngineSettings#ALL}
     * @param <T>     its type
     * @return its value: as set, or its default (derived ones computed from the other settings)
     */
    public <T> T get(final Setting<T> setting)
    {
        final Object value = values.get(setting);
        if (value == null)
        {
            throw new IllegalArgumentException(setting.key() + " is not an engine setting");
        }
        return setting.type().javaType().cast(value);
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

    /** @return the eviction policy's name, one of {@link io.kvtier.engine.eviction.EvictionPolicies#names()} */
    public String evictionPolicy()
    {
        return evictionPolicy;
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
     * @return most pages pinned by backups in flight: the setting (by default a quarter of the pool), at most the pool's pages
     */
    public int maxBackupPages(final int pageCount)
    {
        return Math.min(maxBackupPages, pageCount);
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

    /** @return the L3 tiers, in the order of l3.tiers, else of configuration */
    public List<TierSettings> tiers()
    {
        return tiers;
    }

    /**
     * @param tier a tier's name
     * @return its write budget in bytes per day, 0 for none
     */
    public long writeBudget(final String tier)
    {
        final long[] budget = writeBudgets.get(tier);
        return budget == null ? 0 : budget[0];
    }

    /**
     * @param tier a tier's name
     * @return the most bytes its write budget lets through at once (a day's budget / 24 unless set), 0 without a budget
     */
    public long writeBurst(final String tier)
    {
        final long[] budget = writeBudgets.get(tier);
        return budget == null ? 0 : budget[1];
    }

    /** @return the migration strategies, one per source tier at most, in the tiers' order */
    public List<MigrationStrategy> migrations()
    {
        return migrations;
    }

    /** @return whether admission refuses or only counts */
    public AdmissionMode admissionMode()
    {
        return admissionMode;
    }

    /** Resolves settings on demand, each once, so derived defaults and bounds may use any other setting. */
    private static final class Values implements Setting.Lookup
    {
        private final Map<String, String> raw;
        private final Map<Setting<?>, Object> resolved = new LinkedHashMap<>();
        private final Set<Setting<?>> resolving = new HashSet<>();

        Values(final Map<String, String> raw)
        {
            this.raw = raw;
        }

        @Override
        public <V> V get(final Setting<V> setting)
        {
            final Object known = resolved.get(setting);
            if (known != null)
            {
                return setting.type().javaType().cast(known);
            }
            if (!resolving.add(setting))
            {
                throw new IllegalStateException("settings derive from each other in a cycle through " + setting.key());
            }
            final V value = setting.read(raw.get(setting.key()), this);
            resolving.remove(setting);
            resolved.put(setting, value);
            return value;
        }

        /**
         * Resolves a setting to a value other settings decided (an alias's).
         *
         * @param setting the setting
         * @param value   its value
         * @param <V>     its type
         */
        <V> void resolveAs(final Setting<V> setting, final V value)
        {
            resolved.put(setting, value);
        }

        boolean isSet(final Setting<?> setting)
        {
            return raw.containsKey(setting.key());
        }

        /** @return the text of a setting as set, or its default's text */
        String text(final String key)
        {
            final String text = raw.get(key);
            if (text != null)
            {
                return Setting.trimAsciiBlanks(text);
            }
            for (final Setting<?> setting : EngineSettings.ALL)
            {
                if (setting.key().equals(key))
                {
                    return textOf(setting);
                }
            }
            return "";
        }

        private <V> String textOf(final Setting<V> setting)
        {
            return setting.type().toText(get(setting));
        }

        Map<Setting<?>, Object> resolved()
        {
            return Collections.unmodifiableMap(new LinkedHashMap<>(resolved));
        }

        /** Orders the tiers as l3.tiers says, which must name each configured tier once. */
        List<TierSettings> ordered(final List<TierSettings> configured)
        {
            final String text = get(EngineSettings.L3_TIERS);
            if (text.isBlank())
            {
                return configured;
            }
            final Map<String, TierSettings> byName = new LinkedHashMap<>();
            for (final TierSettings tier : configured)
            {
                byName.put(tier.name(), tier);
            }
            final List<TierSettings> result = new ArrayList<>();
            for (final String part : text.split(","))
            {
                final String name = part.trim();
                final TierSettings tier = byName.remove(name);
                if (tier == null)
                {
                    final boolean twice = result.stream().anyMatch(t -> t.name().equals(name));
                    throw new ConfigException(EngineSettings.L3_TIERS.key(), "invalid l3.tiers = \"" + text.trim() + "\": expected each configured"
                        + " tier named once, in the order to use them; " + (twice ? "tier " + name + " is named twice" : "no tier named " + name
                        + " is configured (tier." + name + ".type); configured: " + configured.stream().map(TierSettings::name).toList()));
                }
                result.add(tier);
            }
            if (!byName.isEmpty())
            {
                throw new ConfigException(EngineSettings.L3_TIERS.key(), "invalid l3.tiers = \"" + text.trim() + "\": expected each configured"
                    + " tier named once, in the order to use them; it leaves out " + byName.keySet());
            }
            return List.copyOf(result);
        }

        /** The migration.<source>.* settings, each checked against the tiers; what needs the running tiers is checked at start. */
        List<MigrationStrategy> migrations(final List<TierSettings> tiers)
        {
            final Map<String, Map<String, String>> bySource = new LinkedHashMap<>();
            for (final Map.Entry<String, String> entry : raw.entrySet())
            {
                final String key = entry.getKey();
                if (!key.startsWith(MIGRATION_PREFIX))
                {
                    continue;
                }
                final String rest = key.substring(MIGRATION_PREFIX.length());
                final int dot = rest.indexOf('.');
                if (dot <= 0 || dot == rest.length() - 1)
                {
                    throw new ConfigException(key, "invalid setting " + key + ": migration settings look like migration.<source tier>.<setting>,"
                        + " e.g. migration.nvme.target");
                }
                bySource.computeIfAbsent(rest.substring(0, dot), n -> new LinkedHashMap<>()).put(rest.substring(dot + 1), entry.getValue());
            }
            final List<String> names = tiers.stream().map(TierSettings::name).toList();
            final List<MigrationStrategy> result = new ArrayList<>();
            for (final String source : names)
            {
                final Map<String, String> set = bySource.remove(source);
                if (set == null)
                {
                    continue;
                }
                final Map<String, Setting<?>> known = new LinkedHashMap<>();
                for (final Setting<?> setting : EngineSettings.PER_TIER)
                {
                    if (setting.key().startsWith("migration.<source>."))
                    {
                        known.put(setting.key().substring("migration.<source>.".length()), setting);
                    }
                }
                for (final String name : set.keySet())
                {
                    if (!known.containsKey(name))
                    {
                        final String key = MIGRATION_PREFIX + source + "." + name;
                        throw new ConfigException(key, "unknown setting " + key + " = \"" + set.get(name) + "\": a migration's settings are "
                            + known.keySet().stream().map(k -> MIGRATION_PREFIX + source + "." + k).toList());
                    }
                }
                final String targetKey = MIGRATION_PREFIX + source + ".target";
                final String target = set.get("target") == null ? null : set.get("target").trim();
                if (target == null || target.isEmpty())
                {
                    throw new ConfigException(targetKey, "missing setting " + targetKey + ": a migration out of tier " + source
                        + " needs a target tier, one of " + names.stream().filter(n -> !n.equals(source)).toList());
                }
                if (target.equals(source) || !names.contains(target))
                {
                    throw new ConfigException(targetKey, "invalid " + targetKey + " = \"" + target + "\": expected another configured tier, one of "
                        + names.stream().filter(n -> !n.equals(source)).toList());
                }
                final String ttlKey = MIGRATION_PREFIX + source + ".mark-ttl";
                if (set.get("mark-ttl") != null && set.get("mark-ttl").trim().matches("-.*|0+(\\.0*)?\\s*[a-z]*"))
                {
                    throw new ConfigException(ttlKey, "invalid " + ttlKey + " = \"" + set.get("mark-ttl").trim() + "\": a mark's time-to-live must be"
                        + " more than zero, or every mark expires before a backup can use it");
                }
                result.add(new MigrationStrategy(source, target,
                    read(EngineSettings.MIGRATION_TRIGGER, source, set.get("trigger")),
                    read(EngineSettings.MIGRATION_METHOD, source, set.get("method")),
                    read(EngineSettings.MIGRATION_RETENTION, source, set.get("retention")),
                    read(EngineSettings.MIGRATION_BATCH, source, set.get("batch")),
                    read(EngineSettings.MIGRATION_MIN_AGE, source, set.get("min-age")),
                    read(EngineSettings.MIGRATION_RATE, source, set.get("rate")),
                    read(EngineSettings.MIGRATION_CONCURRENCY, source, set.get("concurrency")),
                    read(EngineSettings.MIGRATION_MARK_TTL, source, set.get("mark-ttl"))));
            }
            if (!bySource.isEmpty())
            {
                final String source = bySource.keySet().iterator().next();
                final String key = MIGRATION_PREFIX + source + "." + bySource.get(source).keySet().iterator().next();
                throw new ConfigException(key, "invalid setting " + key + ": no tier named " + source + " is configured; tiers: " + names);
            }
            return List.copyOf(result);
        }

        private <V> V read(final Setting<V> setting, final String name, final String text)
        {
            final String template = setting.key();
            final String key = template.replace("<source>", name).replace("<name>", name);
            return setting.readAs(key, text, this);
        }

        List<TierSettings> tiers(final Map<String, long[]> writeBudgets)
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
                final String trustedText = settings.remove(EngineSettings.TIER_TRUSTED);
                final Boolean trusted;
                if (trustedText == null)
                {
                    trusted = null;
                }
                else if (trustedText.equalsIgnoreCase("true") || trustedText.equalsIgnoreCase("false"))
                {
                    trusted = Boolean.valueOf(trustedText.toLowerCase(Locale.ROOT));
                }
                else
                {
                    final String key = TIER_PREFIX + name + "." + EngineSettings.TIER_TRUSTED;
                    throw new ConfigException(key, "invalid " + key + " = \"" + trustedText + "\": expected true or false");
                }
                final long budget = read(EngineSettings.TIER_WRITE_BUDGET, name, settings.remove("write-budget"));
                final String burstText = settings.remove("write-burst");
                final long burst = burstText == null ? budget / 24 : read(EngineSettings.TIER_WRITE_BURST, name, burstText);
                if (budget > 0)
                {
                    writeBudgets.put(name, new long[] {budget, Math.max(burst, 1)});
                }
                else if (burstText != null)
                {
                    final String key = TIER_PREFIX + name + ".write-burst";
                    throw new ConfigException(key, "invalid " + key + " = \"" + burstText.trim() + "\": a burst needs tier." + name
                        + ".write-budget set above 0");
                }
                result.add(new TierSettings(name, type, Collections.unmodifiableMap(settings), trusted));
            }
            if (result.size() > 30)
            {
                throw new ConfigException(TIER_PREFIX, "too many tiers: " + result.size() + " configured, at most 30 are supported");
            }
            return List.copyOf(result);
        }

        void rejectUnknown()
        {
            final List<String> known = new ArrayList<>();
            for (final Setting<?> setting : EngineSettings.ALL)
            {
                known.add(setting.key());
            }
            for (final String key : raw.keySet())
            {
                if (!key.startsWith(TIER_PREFIX) && !key.startsWith(MIGRATION_PREFIX) && !known.contains(key))
                {
                    throw new ConfigException(key, "unknown setting " + key + " = \"" + raw.get(key) + "\": known settings are " + String.join(", ", known));
                }
            }
        }
    }
}
