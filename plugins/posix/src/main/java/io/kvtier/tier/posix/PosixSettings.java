package io.kvtier.tier.posix;

import io.kvtier.spi.ConfigValues;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierConfigException;
import io.kvtier.spi.TierUsage;
import io.kvtier.tier.support.Capacity;
import io.kvtier.tier.support.FileIndex;
import io.kvtier.tier.support.IoErrorLog;
import io.kvtier.tier.support.PathLayout;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The POSIX tier's settings, validated: every error names {@code tier.<name>.<key>}, the value and
 * what is allowed. {@link #parse} also prepares the directory (creates it when only it is missing,
 * and proves it writable), so a bad directory fails the engine at start.
 */
final class PosixSettings
{
    static final String DIR = "dir";
    static final String CAPACITY = Capacity.CAPACITY;
    static final String EVICT_HIGH = Capacity.EVICT_HIGH;
    static final String EVICT_LOW = Capacity.EVICT_LOW;
    static final String FANOUT_LEVELS = "fanout-levels";
    static final String IO_THREADS = "io-threads";
    static final String FSYNC = "fsync";
    static final String DIRECT_IO = "direct-io";
    static final String SHARED = "shared";
    static final String TMP_MAX_AGE = "tmp-max-age";
    static final String INDEX_ENTRIES = "index-entries";
    static final String IO = "io";
    static final String SPARE_TEMP_FILES = "spare-temp-files";

    static final Set<String> KNOWN = Set.of(DIR, CAPACITY, EVICT_HIGH, EVICT_LOW, FANOUT_LEVELS, IO_THREADS, FSYNC, DIRECT_IO,
        SHARED, TMP_MAX_AGE, INDEX_ENTRIES, IO, SPARE_TEMP_FILES);

    static final double EVICT_HIGH_DEFAULT = Capacity.EVICT_HIGH_DEFAULT;
    static final double EVICT_LOW_DEFAULT = Capacity.EVICT_LOW_DEFAULT;
    static final int FANOUT_LEVELS_DEFAULT = 2;
    static final int IO_THREADS_DEFAULT = 2;
    static final Duration TMP_MAX_AGE_DEFAULT = Duration.ofMinutes(10);
    static final int INDEX_ENTRIES_MIN = 16;
    static final int INDEX_ENTRIES_MAX = 1 << 26;
    static final int IO_THREADS_MAX = 64;
    /** Room under Linux's PATH_MAX (4096) for the fan-out, name and temp suffix. */
    static final int DIR_MAX_BYTES = 3900;

    final String tierName;
    final Path dir;
    final long objectSize;
    final long capacity;
    final double evictHigh;
    final double evictLow;
    final int fanoutLevels;
    final int ioThreads;
    final boolean fsync;
    final boolean directIo;
    final boolean shared;
    final Duration tmpMaxAge;
    final int indexEntries;
    final IoPath io;
    final int spareTempFiles;

    private PosixSettings(final TierConfig config, final long objectSize)
    {
        config.rejectUnknown(KNOWN);
        tierName = config.tierName();
        this.objectSize = objectSize;
        final Path configured = config.path(DIR);
        dir = configured.toAbsolutePath().normalize();
        if (dir.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8).length > DIR_MAX_BYTES)
        {
            throw config.invalid(DIR, configured.toString(), "a path of at most " + DIR_MAX_BYTES + " bytes, so page paths fit in PATH_MAX", null);
        }
        final Capacity limits = Capacity.parse(config, objectSize);
        capacity = limits.bytes();
        evictHigh = limits.evictHigh();
        evictLow = limits.evictLow();
        fanoutLevels = config.integer(FANOUT_LEVELS, FANOUT_LEVELS_DEFAULT, 0, 3);
        ioThreads = config.integer(IO_THREADS, IO_THREADS_DEFAULT, 1, IO_THREADS_MAX);
        fsync = config.bool(FSYNC, false);
        directIo = config.bool(DIRECT_IO, false);
        shared = config.bool(SHARED, false);
        tmpMaxAge = config.duration(TMP_MAX_AGE, TMP_MAX_AGE_DEFAULT);
        indexEntries = config.integer(INDEX_ENTRIES, defaultIndexEntries(), INDEX_ENTRIES_MIN, INDEX_ENTRIES_MAX);
        io = ioPath(config);
        // As many as the workers write at once, so a burst finds them ready.
        spareTempFiles = config.integer(SPARE_TEMP_FILES, ioThreads * UringFileStore.RING_ENTRIES, 0, 4096);
        prepareDirectory(config, configured);
    }

    /**
     * @param config     the tier's settings
     * @param objectSize the engine's page frame size
     * @return the validated settings, with the directory ready
     * @throws TierConfigException naming the key at fault
     */
    static PosixSettings parse(final TierConfig config, final long objectSize)
    {
        return new PosixSettings(config, objectSize);
    }

    private static IoPath ioPath(final TierConfig config)
    {
        final String value = config.string(IO, IoPath.URING.settingValue).strip().toLowerCase(Locale.ROOT);
        for (final IoPath path : IoPath.values())
        {
            if (path.settingValue.equals(value))
            {
                return path;
            }
        }
        throw config.invalid(IO, config.string(IO), "one of uring (the default), libc or channel", null);
    }

    private int defaultIndexEntries()
    {
        // Each worker holds reservations for as many writes as its store writes at once (with io_uring, 8).
        return FileIndex.defaultEntries(capacity, objectSize, ioThreads * UringFileStore.RING_ENTRIES);
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

    private void prepareDirectory(final TierConfig config, final Path configured)
    {
        final String text = configured.toString();
        if (Files.exists(dir))
        {
            if (!Files.isDirectory(dir))
            {
                throw config.invalid(DIR, text, "a directory, but " + dir + " is " + (Files.isRegularFile(dir) ? "a regular file" : "not a directory"), null);
            }
        }
        else
        {
            final Path parent = dir.getParent();
            if (parent == null || !Files.isDirectory(parent))
            {
                throw config.invalid(DIR, text, "an existing directory, or one whose parent exists so it can be created; "
                    + "the parent " + parent + " does not exist", null);
            }
            try
            {
                Files.createDirectory(dir);
            }
            catch (final FileAlreadyExistsException ex)
            {
                if (!Files.isDirectory(dir))
                {
                    throw config.invalid(DIR, text, "a directory, but " + dir + " is not a directory", ex);
                }
            }
            catch (final IOException ex)
            {
                throw config.invalid(DIR, text, "a directory that can be created, but creating " + dir + " failed: " + describe(ex), ex);
            }
        }
        // Permissions bits do not tell (root, read-only mounts, ACLs, immutable flags): only a real write does.
        final Path probe = dir.resolve(PathLayout.PROBE_PREFIX + Long.toHexString(ThreadLocalRandom.current().nextLong()) + PathLayout.TEMP_SUFFIX);
        try
        {
            Files.write(probe, new byte[] {1}, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            Files.delete(probe);
        }
        catch (final IOException ex)
        {
            try
            {
                Files.deleteIfExists(probe);
            }
            catch (final IOException ignored)
            {
                // The probe is named like a temp file, so a later start cleans it up.
            }
            throw config.invalid(DIR, text, "a writable directory, but creating a file in " + dir + " failed: " + describe(ex), ex);
        }
    }

    static String describe(final IOException ex)
    {
        return IoErrorLog.describe(ex);
    }

    @Override
    public String toString()
    {
        return "dir=" + dir
            + ", capacity=" + (isBounded() ? ConfigValues.formatSize(capacity) : "unbounded")
            + ", evict-high=" + evictHigh
            + ", evict-low=" + evictLow
            + ", fanout-levels=" + fanoutLevels
            + ", io-threads=" + ioThreads
            + ", fsync=" + fsync
            + ", direct-io=" + directIo
            + ", shared=" + shared
            + ", tmp-max-age=" + tmpMaxAge
            + ", index-entries=" + indexEntries
            + ", io=" + io.settingValue
            + ", spare-temp-files=" + spareTempFiles;
    }
}
