package io.kvtier.tier.posix;

import io.kvtier.spi.ConfigValues;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierConfigException;
import io.kvtier.spi.TierUsage;
import io.kvtier.tier.support.Capacity;
import io.kvtier.tier.support.FileIndex;
import io.kvtier.tier.support.IoErrorLog;
import io.kvtier.tier.support.PathLayout;
import io.kvtier.tier.support.TierSetting;

import java.io.IOException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The POSIX tier's settings, each declared once as a {@link TierSetting} (its parsing, range, default and
 * the row of the README's table), validated: every error names {@code tier.<name>.<key>}, the value and
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
    static final String LAYOUT = "layout";
    static final String EXTENT_SIZE = "extent-size";
    static final String EXTENT_PREALLOCATE = "extent-preallocate";
    static final String FIXED_BUFFERS_MAX = "fixed-buffers-max";

    static final double EVICT_HIGH_DEFAULT = Capacity.EVICT_HIGH_DEFAULT;
    static final double EVICT_LOW_DEFAULT = Capacity.EVICT_LOW_DEFAULT;
    static final int FANOUT_LEVELS_DEFAULT = 2;
    /** The most I/O threads the default gives, however many processors the host has. */
    static final int IO_THREADS_DEFAULT_MAX = 8;
    /** Hosts with at most this many processors get no spare-file thread by default. */
    static final int SPARES_MIN_PROCESSORS = 3;
    static final Duration TMP_MAX_AGE_DEFAULT = Duration.ofMinutes(10);
    static final int INDEX_ENTRIES_MIN = 16;
    static final int INDEX_ENTRIES_MAX = 1 << 26;
    static final int IO_THREADS_MAX = 64;
    /** Room under Linux's PATH_MAX (4096) for the fan-out, name and temp suffix. */
    static final int DIR_MAX_BYTES = 3900;

    // Each setting declared once: its parsing, range, default and the row of the README's table (PosixSettingsTest).
    static final TierSetting<Path> DIR_SETTING = TierSetting.path(DIR)
        .note("at most " + DIR_MAX_BYTES + " bytes; an existing directory, or one whose parent exists; writable")
        .documented("The directory. Created if missing and its parent exists; start fails, naming `tier.<name>.dir`, if the parent is"
            + " missing, the path is not a directory, or a probe file cannot be created in it (read-only directory or filesystem).");
    static final TierSetting<Integer> FANOUT_LEVELS_SETTING = TierSetting.integer(FANOUT_LEVELS).byDefault(FANOUT_LEVELS_DEFAULT).range(0, 3)
        .documented("Directory levels between `dir` and the files; 256 subdirectories per level. Levels 1 and 2 are created at start"
            + " (see Layout); for up to a few million objects, `1` is plenty (about 4,000 files per directory at 1M objects) and costs"
            + " 256 directories instead of 65,792.");
    static final TierSetting<Integer> IO_THREADS_SETTING = TierSetting.integer(IO_THREADS)
        .derivedDefault("half the host's processors (`Runtime.availableProcessors()`), from 1 to " + IO_THREADS_DEFAULT_MAX).range(1, IO_THREADS_MAX)
        .documented("Worker threads doing the file I/O. The default leaves the other half of the processors to the engine and its clients:"
            + " on 2 processors one thread, since a second one only takes CPU from the clients whose pages it writes.");
    static final TierSetting<Boolean> FSYNC_SETTING = TierSetting.bool(FSYNC).byDefault(false)
        .documented("`fdatasync` each temp file before renaming it. See crash safety.");
    static final TierSetting<Boolean> DIRECT_IO_SETTING = TierSetting.bool(DIRECT_IO).byDefault(false)
        .documented("O_DIRECT reads and writes (needs LibC). The alignment comes from `statx` (`STATX_DIOALIGN`, Linux 6.1+) on a probe"
            + " file, else 4 KiB; then an aligned write and read are probed. If the filesystem refuses (EINVAL, at start or later) the"
            + " tier logs why and goes buffered. Buffers not aligned in address and length go buffered.");
    static final TierSetting<IoPath> IO_SETTING = TierSetting.choice(IO, IoPath.class)
        .derivedDefault("`uring`; `libc` when `dir` is on tmpfs")
        .documented("How page bytes move: `uring` (an io_uring per I/O thread), `libc` (`pread`/`pwrite` through FFM) or `channel`"
            + " (`FileChannel`). Each falls back to the next, with the reason logged, when it cannot run here; see I/O paths. On tmpfs"
            + " the kernel hands each io_uring read and write to a worker thread of its own, where `libc` copies on the tier's thread:"
            + " there `libc` moved more bytes in 35 of 36 of the project's measured cases (median 1.4 times) (docs/PERFORMANCE.md, round fifteen).");
    static final TierSetting<Boolean> SHARED_SETTING = TierSetting.bool(SHARED).byDefault(false)
        .documented("Whether anything other than this tier instance changes the files in `dir` while it runs. `false`: nothing does;"
            + " the tier answers `exists` from its in-memory index with no filesystem call (see Probes). `true`: other engines, usually"
            + " on other nodes, use `dir` at once; the tier declares `SHARED` and checks every `exists` with a `stat` of the file.");
    static final TierSetting<Integer> SPARE_TEMP_FILES_SETTING = TierSetting.integer(SPARE_TEMP_FILES)
        .derivedDefault("`" + UringFileStore.RING_ENTRIES + " × io-threads`; 0 (no spare-file thread) on a host of fewer than "
            + SPARES_MIN_PROCESSORS + " processors").range(0, 4096)
        .documented("Empty temp files a thread of the tier makes ahead of the writes that fill them, kept in the tier's root as"
            + " `.kvtier-spare.<token><n>.tmp`; 0 makes each write create its own. Creating a file costs as much as writing a 256 KiB"
            + " page on some filesystems (450 µs on the build machines' ext4); a write that takes a spare opens it without `O_CREAT`."
            + " A spare is opened with `O_NOFOLLOW`, so one replaced by a symbolic link is never written through. A spare older than"
            + " half of `tmp-max-age` is unlinked rather than used (a start-up scan elsewhere may take it for a dead writer's); those"
            + " left at close are unlinked, those of an engine that died are deleted by the start-up scan like any temp file. Not used"
            + " with `io=channel`. Spares are made by a thread of their own, which on a host of 2 processors competes for a core with"
            + " the I/O thread and the clients, hence no spares there unless set.");
    static final TierSetting<Duration> TMP_MAX_AGE_SETTING = TierSetting.duration(TMP_MAX_AGE).byDefault(TMP_MAX_AGE_DEFAULT)
        .documented("At start, temp files older than this are deleted (their writer died); younger ones may be a write in progress on"
            + " another node and are left alone.");
    static final TierSetting<Integer> INDEX_ENTRIES_SETTING = TierSetting.integer(INDEX_ENTRIES)
        .derivedDefault("bounded: `capacity / object size + " + UringFileStore.RING_ENTRIES + " × io-threads + 64` (`"
            + SlabFileStore.RING_PAGES + " × io-threads` with `layout = slab`), at most 4M; unbounded: 256K")
        .range(INDEX_ENTRIES_MIN, INDEX_ENTRIES_MAX)
        .documented("How many files the in-memory index tracks (4M take 192 MiB of native key table).");

    static final TierSetting<PageLayout> LAYOUT_SETTING = TierSetting.choice(LAYOUT, PageLayout.class)
        .derivedDefault("`slab`; `files` when `shared = true`, when `dir` already holds pages in the files layout (and no slab), or when"
            + " the tier runs `io = channel` or LibC is unavailable")
        .documented("How pages are kept in `dir`. `slab`: pages as frames in the slots of large preallocated extent files, written and"
            + " read in batches with no file created, opened or renamed per page (see Slab layout); one engine's alone, so `shared = true`"
            + " with it is refused at start. Needs LibC (`io = uring` or `libc`). `files`: one file per page, published by an atomic"
            + " rename (see Layout); the only layout for `shared = true`. Unset, a directory another engine filled in the files layout"
            + " keeps it (logged), so an upgrade does not strand its pages; set `slab` to start a slab there instead.");
    static final TierSetting<Long> EXTENT_SIZE_SETTING = TierSetting.size(EXTENT_SIZE).byDefault(1L << 30)
        .range(1L << 20, 1L << 40)
        .documented("With `layout = slab`: the size of one extent file, preallocated whole when the tier first needs it (a tier whose"
            + " capacity needs less makes a smaller one, and none is larger than 1/8 of its filesystem, so that a small one can still"
            + " hold several). A directory that already holds extents keeps their size, so that changing this loses no page (the new"
            + " size applies once it is empty); changing the engine's page size makes the next start delete the extents and their pages.");

    static final TierSetting<Boolean> EXTENT_PREALLOCATE_SETTING = TierSetting.bool(EXTENT_PREALLOCATE).byDefault(true)
        .documented("With `layout = slab`: whether a new extent's blocks are allocated when it is made (`posix_fallocate`), so that a"
            + " full filesystem refuses the extent rather than a page's write later (and tmpfs commits its memory then). `false` only"
            + " sizes it (`ftruncate`), for a filesystem without `fallocate`, where glibc's `posix_fallocate` would write into every"
            + " 4 KiB block of it instead: the 3FS tier's slab on a 3FS FUSE mount, which implements no `fallocate`, sets it.");
    static final TierSetting<Long> FIXED_BUFFERS_MAX_SETTING = TierSetting.size(FIXED_BUFFERS_MAX).byDefault(1L << 30)
        .range(0L, 1L << 50)
        .documented("With `io = uring`: the largest engine pool whose frames the tier registers with its rings as fixed buffers at"
            + " start (`READ_FIXED`/`WRITE_FIXED`: the kernel pins the pages once, not per transfer); 0 never. Registering pins every"
            + " page of the pool, and on the build machines that took about 3 s per GiB of pool before the engine could serve (50 s"
            + " for 16 GiB), so a larger pool moves its pages unregistered, from the pool slices, and the tier's description says so.");

    /** Every setting, in the order the README's table lists them. */
    static final List<TierSetting<?>> ALL = List.of(DIR_SETTING, Capacity.CAPACITY_SETTING, Capacity.EVICT_HIGH_SETTING,
        Capacity.EVICT_LOW_SETTING, FANOUT_LEVELS_SETTING, IO_THREADS_SETTING, FSYNC_SETTING, DIRECT_IO_SETTING, IO_SETTING,
        SHARED_SETTING, SPARE_TEMP_FILES_SETTING, TMP_MAX_AGE_SETTING, INDEX_ENTRIES_SETTING, LAYOUT_SETTING, EXTENT_SIZE_SETTING,
        EXTENT_PREALLOCATE_SETTING, FIXED_BUFFERS_MAX_SETTING);

    static final Set<String> KNOWN = TierSetting.keys(ALL);

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
    /** The largest transfer memory registered as fixed buffers; 0 never. */
    final long fixedBuffersMax;
    final boolean shared;
    final Duration tmpMaxAge;
    final int indexEntries;
    final IoPath io;
    /** Why the I/O path is not the usual default, when it was not set: for the start-up log. */
    final String ioReason;
    final int spareTempFiles;
    final PageLayout layout;
    /** Why the layout is what it is, when it was not set: for the start-up log and {@code describe}. */
    final String layoutReason;
    final long extentSize;
    final boolean extentPreallocate;

    private PosixSettings(final TierConfig config, final long objectSize, final boolean libcAvailable)
    {
        config.rejectUnknown(KNOWN);
        tierName = config.tierName();
        this.objectSize = objectSize;
        final Path configured = DIR_SETTING.get(config);
        dir = configured.toAbsolutePath().normalize();
        if (dir.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8).length > DIR_MAX_BYTES)
        {
            throw config.invalid(DIR, configured.toString(), "a path of at most " + DIR_MAX_BYTES + " bytes, so page paths fit in PATH_MAX", null);
        }
        final Capacity limits = Capacity.parse(config, objectSize);
        capacity = limits.bytes();
        evictHigh = limits.evictHigh();
        evictLow = limits.evictLow();
        fanoutLevels = FANOUT_LEVELS_SETTING.get(config);
        final int processors = Runtime.getRuntime().availableProcessors();
        ioThreads = IO_THREADS_SETTING.get(config, () -> defaultIoThreads(processors));
        fsync = FSYNC_SETTING.get(config);
        directIo = DIRECT_IO_SETTING.get(config);
        shared = SHARED_SETTING.get(config);
        tmpMaxAge = TMP_MAX_AGE_SETTING.get(config);
        final Optional<IoPath> setIo = IO_SETTING.find(config);
        if (setIo.isPresent())
        {
            io = setIo.get();
            ioReason = null;
        }
        else
        {
            final boolean tmpfs = onTmpfs(dir);
            io = tmpfs ? IoPath.LIBC : IoPath.URING;
            ioReason = tmpfs ? "the directory is on tmpfs, where io_uring hands every read and write to a kernel worker thread" : null;
        }
        // Before the index's size, whose default depends on how many writes a worker of the layout has in flight.
        final Optional<PageLayout> setLayout = LAYOUT_SETTING.find(config);
        if (setLayout.isPresent())
        {
            layout = setLayout.get();
            layoutReason = null;
        }
        else
        {
            final String filesReason = shared ? config.qualified(SHARED) + "=true"
                : io == IoPath.CHANNEL ? config.qualified(IO) + "=channel (the slab needs LibC)"
                : !libcAvailable ? "LibC is unavailable here, and the slab needs it"
                : filesLayoutIn(dir).map(found -> "the directory already holds the files layout (" + found + ")").orElse(null);
            layout = filesReason == null ? PageLayout.SLAB : PageLayout.FILES;
            layoutReason = filesReason == null ? "the default for a directory that is this engine's alone" : filesReason;
        }
        indexEntries = INDEX_ENTRIES_SETTING.get(config, this::defaultIndexEntries);
        // As many as the workers write at once, so a burst finds them ready.
        spareTempFiles = SPARE_TEMP_FILES_SETTING.get(config, () -> defaultSpareTempFiles(processors, ioThreads));
        extentSize = EXTENT_SIZE_SETTING.get(config);
        extentPreallocate = EXTENT_PREALLOCATE_SETTING.get(config);
        fixedBuffersMax = FIXED_BUFFERS_MAX_SETTING.get(config);
        if (layout == PageLayout.SLAB && shared)
        {
            // Slots are reused in place and the index lives in one process: another node could never tell a frame from its replacement.
            throw config.invalid(SHARED, "true", "false with " + config.qualified(LAYOUT) + "=slab: a slab is one engine's alone (its"
                + " slots are reused in place and only its own process knows which frame is current); share a directory with "
                + config.qualified(LAYOUT) + "=files", null);
        }
        if (layout == PageLayout.SLAB && extentSize < SlabDescriptor.extentBytes(1, SlabDescriptor.slotBytes(objectSize)))
        {
            throw config.invalid(EXTENT_SIZE, ConfigValues.formatSize(extentSize), "at least one slot for the engine's page frame ("
                + ConfigValues.formatSize(objectSize) + ") with the extent's header block and a block of its header table", null);
        }
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
        return parse(config, objectSize, true);
    }

    /**
     * @param config         the tier's settings
     * @param objectSize     the engine's page frame size
     * @param libcAvailable  whether LibC can be used, without which an unset layout is {@code files}
     * @return the validated settings, with the directory ready
     * @throws TierConfigException naming the key at fault
     */
    static PosixSettings parse(final TierConfig config, final long objectSize, final boolean libcAvailable)
    {
        return new PosixSettings(config, objectSize, libcAvailable);
    }

    /**
     * Whether {@code dir} holds a store in the files layout and no slab: a fan-out marker, a page file or a
     * fan-out directory at its top, and neither a slab's lock file nor an extent. Reads the top-level
     * names only (with {@code fanout-levels = 0} that is every page file, which the files layout's own
     * start-up scan reads as well), and stops at the first name of a slab.
     *
     * @param dir the tier's directory, which may not exist yet
     * @return the first files-layout entry found, when there is no slab; empty otherwise
     */
    static Optional<String> filesLayoutIn(final Path dir)
    {
        if (!Files.isDirectory(dir))
        {
            return Optional.empty();
        }
        String found = null;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir))
        {
            for (final Path entry : entries)
            {
                final String name = entry.getFileName().toString();
                if (name.equals(SlabDescriptor.LOCK_FILE) || SlabDescriptor.extentNumber(name) >= 0)
                {
                    return Optional.empty();
                }
                if (found == null && (PathLayout.isFanoutMarker(name) || name.endsWith(PathLayout.PAGE_SUFFIX) || isFanoutDirectoryName(name)))
                {
                    found = name;
                }
            }
        }
        catch (final IOException | DirectoryIteratorException ex)
        {
            // Unreadable here, it fails the directory's own checks below with its reason.
            return Optional.empty();
        }
        return Optional.ofNullable(found);
    }

    /**
     * @param dir a directory, which may not exist yet (its nearest existing ancestor is looked at)
     * @return whether it is on tmpfs; false when that cannot be told
     */
    static boolean onTmpfs(final Path dir)
    {
        Path existing = dir;
        while (existing != null && !Files.exists(existing))
        {
            existing = existing.getParent();
        }
        try
        {
            return existing != null && "tmpfs".equals(Files.getFileStore(existing).type());
        }
        catch (final IOException ex)
        {
            return false; // the directory's own checks below say what is wrong with it
        }
    }

    /** @return whether {@code name} is a first-level fan-out directory's: two lowercase hex digits */
    private static boolean isFanoutDirectoryName(final String name)
    {
        return name.length() == 2 && Character.digit(name.charAt(0), 16) >= 0 && Character.digit(name.charAt(1), 16) >= 0
            && name.equals(name.toLowerCase(java.util.Locale.ROOT));
    }

    /**
     * @param processors the host's processors, as {@code Runtime.availableProcessors()} counts them
     * @return the I/O threads a tier takes unless set: half the processors, from 1 to {@link #IO_THREADS_DEFAULT_MAX}
     */
    static int defaultIoThreads(final int processors)
    {
        return Math.clamp(processors / 2, 1, IO_THREADS_DEFAULT_MAX);
    }

    /**
     * @param processors the host's processors
     * @param ioThreads  the tier's I/O threads
     * @return the spare temp files a tier keeps unless set: as many as its workers write at once, so a burst
     *         finds them ready; none (and so no spare-file thread) on a host of fewer than {@link #SPARES_MIN_PROCESSORS} processors
     */
    static int defaultSpareTempFiles(final int processors, final int ioThreads)
    {
        return processors < SPARES_MIN_PROCESSORS ? 0 : ioThreads * UringFileStore.RING_ENTRIES;
    }

    private int defaultIndexEntries()
    {
        // Each worker holds reservations for as many writes as its store writes at once (with io_uring, 8; 64 with the slab).
        final int perWorker = layout == PageLayout.SLAB ? SlabFileStore.RING_PAGES : UringFileStore.RING_ENTRIES;
        return FileIndex.defaultEntries(capacity, objectSize, ioThreads * perWorker);
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
            + ", spare-temp-files=" + spareTempFiles
            + ", layout=" + TierSetting.settingName(layout)
            + (layout == PageLayout.SLAB ? ", extent-size=" + ConfigValues.formatSize(extentSize) + ", extent-preallocate=" + extentPreallocate : "");
    }
}
