package io.kvtier.tier.posix;

import io.kvtier.nativeaccess.libc.LibC;
import io.kvtier.spi.PageKey;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.StorageTierProvider;
import io.kvtier.spi.TierCapability;
import io.kvtier.spi.TierConfigException;
import io.kvtier.spi.TierStatus;
import io.kvtier.spi.TierUsage;
import io.kvtier.tck.ContractTierContext;
import io.kvtier.tck.PageArena;
import io.kvtier.tck.PageBytes;
import io.kvtier.tck.RecordingTierBatch;
import io.kvtier.tier.support.Capacity;
import io.kvtier.tier.support.PathLayout;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class PosixTierTest
{
    private static final String NAME = "t";
    private static final long SIZE = 16 * 1024;
    private static final Duration DEADLINE = PosixTierFixture.DEADLINE;

    /** Which file I/O the tier uses. */
    enum Io
    {
        URING,
        LIBC,
        CHANNEL
    }

    @TempDir
    Path tmp;

    private final PosixTierFixture fixture = new PosixTierFixture(NAME);
    private Path scratchToDelete;

    @AfterEach
    void closeAll() throws IOException
    {
        fixture.close();
        if (scratchToDelete != null && !scratchToDelete.startsWith(tmp))
        {
            PosixTierFixture.deleteTree(scratchToDelete);
        }
    }

    private static StorageTierProvider provider(final Io io)
    {
        return new PosixTierProvider(io != Io.CHANNEL);
    }

    private PosixTier open(final Io io, final ContractTierContext context, final Path dir, final String... settings)
    {
        return fixture.open(provider(io), context, dir, List.of("io", io.name().toLowerCase(java.util.Locale.ROOT), "layout", "files"), settings);
    }

    private PosixTier open(final Io io, final Path dir, final String... settings)
    {
        return open(io, new ContractTierContext(NAME, SIZE), dir, settings);
    }

    private PageArena arena(final int slices, final long sliceSize)
    {
        return fixture.arena(slices, sliceSize);
    }

    private List<PageKey> keys(final int count)
    {
        return fixture.keys(count);
    }

    private static RecordingTierBatch write(final StorageTier tier, final List<PageKey> keys, final long seed, final PageArena arena, final long size)
    {
        return PosixTierFixture.write(tier, keys, seed, arena, size);
    }

    private static RecordingTierBatch read(final StorageTier tier, final List<PageKey> keys, final PageArena arena, final long size)
    {
        return PosixTierFixture.read(tier, keys, arena, size);
    }

    private static RecordingTierBatch exists(final StorageTier tier, final List<PageKey> keys)
    {
        return PosixTierFixture.exists(tier, keys);
    }

    private static RecordingTierBatch remove(final StorageTier tier, final List<PageKey> keys)
    {
        return PosixTierFixture.remove(tier, keys);
    }

    private static void writeOne(final StorageTier tier, final PageKey key, final PageArena arena)
    {
        assertThat(write(tier, List.of(key), key.low(), arena, SIZE).statuses()).containsExactly(TierStatus.OK);
    }

    private static Path pagePath(final PosixTier tier, final PageKey key)
    {
        return tier.layout().pagePath(key.high(), key.low());
    }

    // ------------------------------------------------------------------------------------------------
    // Torn, truncated and temp files
    // ------------------------------------------------------------------------------------------------

    @ParameterizedTest
    @EnumSource(Io.class)
    void shouldReportCorruptNeverOkForAFileOfTheWrongSize(final Io io) throws IOException
    {
        // Shared, so exists looks at the file (a stat) rather than answering from the index.
        final PosixTier tier = open(io, tmp, "direct-io", "true", "shared", "true");
        final PageArena arena = arena(16, SIZE);
        for (final long size : new long[] {0, 1, SIZE - 1, SIZE - 4096, SIZE + 1, SIZE + 4096, 12345})
        {
            final PageKey key = keys(1).getFirst();
            writeOne(tier, key, arena);
            try (RandomAccessFile file = new RandomAccessFile(pagePath(tier, key).toFile(), "rw"))
            {
                file.setLength(size);
            }
            assertThat(read(tier, List.of(key), arena, SIZE).statuses()).as("read of a %d-byte file", size).containsExactly(TierStatus.CORRUPT);
            assertThat(exists(tier, List.of(key)).statuses()).as("exists of a %d-byte file", size).containsExactly(TierStatus.CORRUPT);
        }
        arena.assertGuardsIntact();
    }

    @ParameterizedTest
    @EnumSource(Io.class)
    void shouldNeverReadATempFileAsAPage(final Io io) throws IOException
    {
        final PosixTier tier = open(io, tmp);
        final PageArena arena = arena(4, SIZE);
        final PageKey key = keys(1).getFirst();
        final Path page = pagePath(tier, key);
        Files.createDirectories(page.getParent());
        // A whole, correctly sized object that a writer never renamed: still not a page.
        Files.write(page.resolveSibling(page.getFileName() + ".00000000000000aa00000001.tmp"), new byte[(int)SIZE]);
        assertThat(read(tier, List.of(key), arena, SIZE).statuses()).containsExactly(TierStatus.NOT_FOUND);
        assertThat(exists(tier, List.of(key)).statuses()).containsExactly(TierStatus.NOT_FOUND);
        assertThat(remove(tier, List.of(key)).statuses()).containsExactly(TierStatus.NOT_FOUND);
    }

    @ParameterizedTest
    @EnumSource(Io.class)
    void shouldKeepThePreviousObjectWhenAWriteWasInterrupted(final Io io) throws IOException
    {
        final PosixTier tier = open(io, tmp);
        final PageArena arena = arena(4, SIZE);
        final PageKey key = keys(1).getFirst();
        writeOne(tier, key, arena);
        final Path page = pagePath(tier, key);
        // A writer died after writing half of a new version to its temp file.
        Files.write(page.resolveSibling(page.getFileName() + ".00000000000000bb00000002.tmp"), new byte[(int)SIZE / 2]);
        final RecordingTierBatch readBack = read(tier, List.of(key), arena, SIZE);
        assertThat(readBack.statuses()).containsExactly(TierStatus.OK);
        PageBytes.assertContent(readBack.slice(0), key.low(), "the object before the interrupted write");
    }

    @Test
    void shouldDeleteOldTempFilesAtStartAndKeepYoungOnesAndOtherFiles() throws IOException
    {
        final Path dir = Files.createDirectories(tmp.resolve("tier"));
        final PageKey key = keys(1).getFirst();
        final PathLayout layout = new PathLayout(dir, 2);
        final Path page = layout.pagePath(key.high(), key.low());
        Files.createDirectories(page.getParent());
        final Path oldTemp = page.resolveSibling(page.getFileName() + ".00000000000000cc00000003.tmp");
        final Path youngTemp = page.resolveSibling(page.getFileName() + ".00000000000000dd00000004.tmp");
        final Path oldProbe = dir.resolve(PathLayout.PROBE_PREFIX + "1234" + PathLayout.TEMP_SUFFIX);
        final Path notes = dir.resolve("notes.txt");
        final Path misplaced = dir.resolve(key.toHex() + PathLayout.PAGE_SUFFIX);
        for (final Path file : List.of(oldTemp, youngTemp, oldProbe, notes, misplaced))
        {
            Files.write(file, new byte[(int)SIZE]);
        }
        final FileTime hourAgo = FileTime.from(Instant.now().minus(Duration.ofHours(1)));
        for (final Path file : List.of(oldTemp, oldProbe, notes, misplaced))
        {
            Files.setLastModifiedTime(file, hourAgo);
        }

        final PosixTier tier = open(Io.LIBC, dir, "tmp-max-age", "10m");
        assertThat(oldTemp).as("temp file older than tmp-max-age").doesNotExist();
        assertThat(oldProbe).as("probe file left by a crash").doesNotExist();
        assertThat(youngTemp).as("temp file younger than tmp-max-age, maybe another node's write").exists();
        assertThat(notes).as("a file that is not the tier's").exists();
        assertThat(misplaced).as("a page name outside its fan-out directory").exists();
        assertThat(tier.usage().objects()).as("nothing here is a page").isZero();
        assertThat(exists(tier, List.of(key)).statuses()).containsExactly(TierStatus.NOT_FOUND);
    }

    // ------------------------------------------------------------------------------------------------
    // Capacity and start-up scan
    // ------------------------------------------------------------------------------------------------

    @ParameterizedTest
    @EnumSource(Io.class)
    void shouldEvictLeastRecentlyUsedFilesDownToTheLowWaterLevelAndReportEach(final Io io)
    {
        final ContractTierContext context = new ContractTierContext(NAME, SIZE);
        final PosixTier tier = open(io, context, tmp, "capacity", Long.toString(10 * SIZE), "evict-high", "0.9", "evict-low", "0.5",
            "io-threads", "1");
        final PageArena arena = arena(16, SIZE);
        final List<PageKey> keys = keys(10);
        for (int i = 0; i < 9; i++)
        {
            writeOne(tier, keys.get(i), arena);
        }
        assertThat(context.removedKeys()).as("nothing evicted at the high water level").isEmpty();
        assertThat(read(tier, List.of(keys.get(0)), arena, SIZE).statuses()).containsExactly(TierStatus.OK);
        writeOne(tier, keys.get(9), arena);

        assertThat(context.removedKeys()).as("evicted least recently used first; the read moved key 0 back")
            .containsExactly(keys.get(1), keys.get(2), keys.get(3), keys.get(4), keys.get(5));
        final TierUsage usage = tier.usage();
        assertThat(usage.usedBytes()).isEqualTo(5 * SIZE).isLessThanOrEqualTo((long)(0.5 * 10 * SIZE));
        assertThat(usage.objects()).isEqualTo(5);
        assertThat(usage.capacityBytes()).isEqualTo(10 * SIZE);
        assertThat(exists(tier, keys).statuses()).containsExactly(TierStatus.OK,
            TierStatus.NOT_FOUND, TierStatus.NOT_FOUND, TierStatus.NOT_FOUND, TierStatus.NOT_FOUND, TierStatus.NOT_FOUND,
            TierStatus.OK, TierStatus.OK, TierStatus.OK, TierStatus.OK);
        assertThat(pagePath(tier, keys.get(1))).doesNotExist();

        assertThat(remove(tier, List.of(keys.get(6))).statuses()).containsExactly(TierStatus.OK);
        assertThat(context.removedKeys()).as("a remove the engine asked for is not an eviction").hasSize(5);
        assertThat(tier.usage().usedBytes()).isEqualTo(4 * SIZE);
    }

    @ParameterizedTest
    @EnumSource(Io.class)
    void shouldWriteOneJobOfManyKeysWithAndWithoutFsyncAndReadEveryPageBack(final Io io)
    {
        // More keys than a worker claims at once (io_uring: 8), shared by two workers, so claims are full, partial and split.
        for (final String fsync : List.of("false", "true"))
        {
            final Path dir = tmp.resolve("fsync-" + fsync);
            final PosixTier tier = open(io, dir, "fsync", fsync, "io-threads", "2", "fanout-levels", "1");
            final PageArena arena = arena(2 * 37, SIZE);
            final List<PageKey> keys = keys(37);
            assertThat(write(tier, keys, 500, arena, SIZE).statuses()).as("fsync=%s", fsync).containsOnly(TierStatus.OK);
            final RecordingTierBatch readBack = read(tier, keys, arena, SIZE);
            assertThat(readBack.statuses()).containsOnly(TierStatus.OK);
            for (int i = 0; i < keys.size(); i++)
            {
                PageBytes.assertContent(readBack.slice(i), 500 + i, "key " + i + ", fsync=" + fsync);
            }
            assertThat(tier.usage().objects()).isEqualTo(keys.size());
            try (Stream<Path> files = Files.walk(dir))
            {
                assertThat(files.filter(file -> file.toString().endsWith(PathLayout.TEMP_SUFFIX) && !file.getFileName().toString().startsWith(SpareTempFiles.PREFIX))).as("temp files left").isEmpty();
            }
            catch (final IOException ex)
            {
                throw new java.io.UncheckedIOException(ex);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Io.class)
    void shouldWriteAJobOfMoreKeysThanTheCapacityHoldsByEvictingAsOneAtATimeWould(final Io io)
    {
        // The claim's reservations count against the capacity together; the keys they crowd out still get written.
        final ContractTierContext context = new ContractTierContext(NAME, SIZE);
        final PosixTier tier = open(io, context, tmp, "capacity", Long.toString(4 * SIZE), "io-threads", "1");
        final PageArena arena = arena(16, SIZE);
        final List<PageKey> keys = keys(8);
        assertThat(write(tier, keys, 900, arena, SIZE).statuses()).containsOnly(TierStatus.OK);
        assertThat(tier.usage().usedBytes()).isLessThanOrEqualTo(4 * SIZE);
        assertThat(context.removedKeys()).as("evicted to make room").isNotEmpty().doesNotContain(keys.getLast());
        final RecordingTierBatch last = read(tier, List.of(keys.getLast()), arena, SIZE);
        assertThat(last.statuses()).containsExactly(TierStatus.OK);
        PageBytes.assertContent(last.slice(0), 900 + 7, "the last key written");
    }

    @Test
    void shouldLearnUsageAndLruOrderFromFilesOfAnEarlierInstance() throws IOException
    {
        final PageArena arena = arena(16, SIZE);
        final List<PageKey> keys = keys(6);
        final PosixTier first = open(Io.LIBC, tmp);
        for (final PageKey key : keys)
        {
            writeOne(first, key, arena);
        }
        first.close();
        // Age the files in an order unlike the write order: 3, 5, 0, 1, 2, 4 from oldest.
        final int[] oldestFirst = {3, 5, 0, 1, 2, 4};
        final Instant now = Instant.now();
        for (int rank = 0; rank < oldestFirst.length; rank++)
        {
            Files.setLastModifiedTime(pagePath(first, keys.get(oldestFirst[rank])), FileTime.from(now.minus(Duration.ofMinutes(60 - rank))));
        }

        final ContractTierContext context = new ContractTierContext(NAME, SIZE);
        final PosixTier second = open(Io.LIBC, context, tmp, "capacity", Long.toString(8 * SIZE));
        assertThat(second.usage()).isEqualTo(new TierUsage(6 * SIZE, 8 * SIZE, 6));
        final List<PageKey> fresh = keys(2);
        writeOne(second, fresh.get(0), arena);
        assertThat(context.removedKeys()).isEmpty();
        writeOne(second, fresh.get(1), arena);
        assertThat(context.removedKeys()).as("the oldest files of the earlier instance go first").containsExactly(keys.get(3), keys.get(5));
        second.close();

        final ContractTierContext smaller = new ContractTierContext(NAME, SIZE);
        final PosixTier third = open(Io.LIBC, smaller, tmp, "capacity", Long.toString(4 * SIZE));
        assertThat(smaller.removedKeys()).as("evicted at start to fit a smaller capacity, oldest first")
            .containsExactly(keys.get(0), keys.get(1), keys.get(2));
        assertThat(third.usage().usedBytes()).isEqualTo(3 * SIZE);
        assertThat(exists(third, List.of(keys.get(4), fresh.get(0), fresh.get(1))).statuses()).containsOnly(TierStatus.OK);
    }

    @Test
    void shouldCountFilesBeyondTheIndexInBytesAndReportObjectsAsUnknown()
    {
        final PosixTier tier = open(Io.LIBC, tmp, "index-entries", "16");
        final PageArena arena = arena(24, SIZE);
        final List<PageKey> keys = keys(20);
        assertThat(write(tier, keys, 1, arena, SIZE).statuses()).containsOnly(TierStatus.OK);
        assertThat(tier.usage()).isEqualTo(new TierUsage(20 * SIZE, TierUsage.UNBOUNDED, -1));
        assertThat(exists(tier, keys).statuses()).containsOnly(TierStatus.OK);
        assertThat(remove(tier, keys.subList(0, 4)).statuses()).containsOnly(TierStatus.OK);
        assertThat(tier.usage().usedBytes()).isEqualTo(16 * SIZE);
    }

    // ------------------------------------------------------------------------------------------------
    // Directory checks and settings
    // ------------------------------------------------------------------------------------------------

    @Test
    void shouldCreateAMissingDirectoryWhoseParentExists()
    {
        final Path dir = tmp.resolve("new");
        open(Io.LIBC, dir);
        assertThat(dir).isDirectory();
    }

    @Test
    void shouldRejectADirectoryWhoseParentIsMissing()
    {
        assertRejectedDir(tmp.resolve("missing/child"), "does not exist");
    }

    @Test
    void shouldRejectADirThatIsARegularFile() throws IOException
    {
        final Path file = Files.writeString(tmp.resolve("file"), "x");
        assertRejectedDir(file, "regular file");
    }

    @Test
    void shouldRejectAReadOnlyDirectory() throws IOException
    {
        final Path dir = Files.createDirectories(tmp.resolve("read-only"));
        // Root ignores permission bits, so make the directory immutable (chattr +i stops root too).
        final boolean immutable = run("chattr", "+i", dir.toString());
        try
        {
            final Path target = immutable ? dir : readOnlyMount().orElse(null);
            assumeTrue(target != null, "no read-only location to test with: chattr +i failed and /proc/mounts lists no read-only mount");
            assertRejectedDir(target, "writable");
        }
        finally
        {
            if (immutable)
            {
                run("chattr", "-i", dir.toString());
            }
        }
    }

    private void assertRejectedDir(final Path dir, final String reason)
    {
        assertThatThrownBy(() -> open(Io.LIBC, dir))
            .isInstanceOf(TierConfigException.class)
            .hasMessageContaining("tier.t.dir")
            .hasMessageContaining(dir.toString())
            .hasMessageContaining(reason)
            .satisfies(ex -> assertThat(((TierConfigException)ex).key()).isEqualTo("tier.t.dir"));
    }

    private static boolean run(final String... command)
    {
        try
        {
            final Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            return process.waitFor(10, TimeUnit.SECONDS) && process.exitValue() == 0;
        }
        catch (final IOException ex)
        {
            return false;
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static Optional<Path> readOnlyMount() throws IOException
    {
        final Set<String> pseudo = Set.of("proc", "sysfs", "cgroup", "cgroup2", "devpts", "mqueue", "securityfs", "debugfs", "tracefs", "bpf");
        try (Stream<String> lines = Files.lines(Path.of("/proc/mounts")))
        {
            return lines.map(line -> line.split(" "))
                .filter(fields -> fields.length >= 4 && !pseudo.contains(fields[2]) && !fields[1].contains("\\"))
                .filter(fields -> List.of(fields[3].split(",")).contains("ro"))
                .map(fields -> Path.of(fields[1]))
                .filter(Files::isDirectory)
                .findFirst();
        }
    }

    @Test
    void shouldNameTheKeyTheValueAndWhatIsAllowed()
    {
        assertThatThrownBy(() -> open(Io.LIBC, tmp, "capacity", "lots"))
            .hasMessageContaining("tier.t.capacity").hasMessageContaining("\"lots\"").hasMessageContaining("GiB");
        assertThatThrownBy(() -> open(Io.LIBC, tmp, "capacity", "8KiB"))
            .hasMessageContaining("tier.t.capacity").hasMessageContaining("\"8KiB\"").hasMessageContaining("16KiB");
        assertThatThrownBy(() -> open(Io.LIBC, tmp, "evict-low", "0.95"))
            .hasMessageContaining("tier.t.evict-low").hasMessageContaining("\"0.95\"").hasMessageContaining("tier.t.evict-high");
        assertThatThrownBy(() -> open(Io.LIBC, tmp, "fanout-levels", "4"))
            .hasMessageContaining("tier.t.fanout-levels").hasMessageContaining("\"4\"").hasMessageContaining("0 to 3");
        assertThatThrownBy(() -> open(Io.LIBC, tmp, "capasity", "1GiB"))
            .hasMessageContaining("tier.t.capasity").hasMessageContaining("capacity");
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, 3})
    void shouldLayOutPagesByFanoutLevel(final int levels) throws IOException
    {
        final PosixTier tier = open(Io.LIBC, tmp, "fanout-levels", Integer.toString(levels));
        final PageKey key = PageKey.fromHex("a1b2c3d4e5f60718293a4b5c6d7e8f90");
        writeOne(tier, key, arena(1, SIZE));
        final String fanout = switch (levels)
        {
            case 0 -> "";
            case 1 -> "a1/";
            case 2 -> "a1/b2/";
            default -> "a1/b2/c3/";
        };
        final Path expected = tmp.resolve(fanout + key.toHex() + ".kvp");
        assertThat(expected).isRegularFile();
        assertThat(Files.size(expected)).isEqualTo(SIZE);
        try (Stream<Path> files = Files.walk(tmp))
        {
            // Spare temp files made ahead for later writes are the tier's, not this write's leftovers; so is the fan-out marker, which
            // the start-up thread writes once the directories are made, before or after this walk (before it, on tmpfs).
            assertThat(files.filter(Files::isRegularFile).filter(f -> !f.getFileName().toString().startsWith(SpareTempFiles.PREFIX))
                .filter(f -> !PathLayout.isFanoutMarker(f.getFileName().toString())))
                .as("no temp files left behind").containsExactly(expected);
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Probes, priorities and fan-out directories
    // ------------------------------------------------------------------------------------------------

    @ParameterizedTest
    @EnumSource(Io.class)
    void shouldAnswerProbesFromTheIndexWithoutIoWhenTheDirectoryIsNotShared(final Io io) throws IOException
    {
        final PosixTier local = open(io, tmp);
        final PosixTier shared = open(io, tmp, "shared", "true");
        final PageArena arena = arena(8, SIZE);
        final List<PageKey> keys = keys(3);
        assertThat(write(local, keys, 1, arena, SIZE).statuses()).containsOnly(TierStatus.OK);

        // Behind the tier's back: key 0's file is deleted, and a file appears for a key it never wrote.
        Files.delete(pagePath(local, keys.get(0)));
        final PageKey stranger = keys(1).getFirst();
        Files.createDirectories(pagePath(local, stranger).getParent());
        Files.copy(pagePath(local, keys.get(1)), pagePath(local, stranger));
        final List<PageKey> probed = List.of(keys.get(0), keys.get(1), keys.get(2), stranger);

        // Not shared: what the tier wrote, from memory, completed before exists() returns; no file was looked at.
        final RecordingTierBatch fromIndex = RecordingTierBatch.ofKeys("exists", probed);
        local.exists(fromIndex);
        assertThat(fromIndex.isComplete()).as("answered on the caller's thread, not queued").isTrue();
        assertThat(fromIndex.statuses()).containsExactly(TierStatus.OK, TierStatus.OK, TierStatus.OK, TierStatus.NOT_FOUND);
        fromIndex.assertNoViolations();

        // Shared: a stat of each file sees what is really there.
        assertThat(exists(shared, probed).statuses()).containsExactly(TierStatus.NOT_FOUND, TierStatus.OK, TierStatus.OK, TierStatus.OK);

        // A read finds key 0 missing (a miss, never wrong bytes), and the index forgets it.
        assertThat(read(local, keys.subList(0, 1), arena, SIZE).statuses()).containsExactly(TierStatus.NOT_FOUND);
        assertThat(exists(local, keys.subList(0, 2)).statuses()).containsExactly(TierStatus.NOT_FOUND, TierStatus.OK);
    }

    @Test
    void shouldNotCountAWriteInFlightOrARemovedFileAsPresent()
    {
        final PosixTier tier = open(Io.LIBC, tmp, "io-threads", "1");
        final PageArena arena = arena(4, SIZE);
        final List<PageKey> keys = keys(2);
        final java.util.concurrent.CountDownLatch entered = new java.util.concurrent.CountDownLatch(1);
        final java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        final List<MemorySegment> sources = arena.slices(1, SIZE);
        PageBytes.fill(sources.getFirst(), 3);
        final RecordingTierBatch held = new RecordingTierBatch("write", keys.subList(0, 1), sources);
        assertTimeoutPreemptively(DEADLINE, () ->
        {
            tier.write(new BlockingBatch(held, 0, entered, release));
            entered.await();
            assertThat(exists(tier, keys.subList(0, 1)).statuses()).as("a write not yet published").containsExactly(TierStatus.NOT_FOUND);
            release.countDown();
            held.awaitCompletion(DEADLINE);
        });
        assertThat(held.statuses()).containsExactly(TierStatus.OK);
        assertThat(exists(tier, keys.subList(0, 1)).statuses()).containsExactly(TierStatus.OK);
        assertThat(remove(tier, keys.subList(0, 1)).statuses()).containsExactly(TierStatus.OK);
        assertThat(exists(tier, keys.subList(0, 1)).statuses()).containsExactly(TierStatus.NOT_FOUND);
    }

    @Test
    void shouldProbeTheFilesWhenTheIndexOverflowed()
    {
        // An unbounded tier whose index holds 16 keys: the rest are counted in bytes only, so a probe
        // for a key the index lacks must look at the file.
        final PosixTier tier = open(Io.LIBC, tmp, "index-entries", "16");
        final PageArena arena = arena(24, SIZE);
        final List<PageKey> keys = keys(20);
        assertThat(write(tier, keys, 9, arena, SIZE).statuses()).containsOnly(TierStatus.OK);
        final List<PageKey> probed = new ArrayList<>(keys);
        probed.add(keys(1).getFirst());
        final List<TierStatus> expected = new ArrayList<>(java.util.Collections.nCopies(keys.size(), TierStatus.OK));
        expected.add(TierStatus.NOT_FOUND);
        assertThat(exists(tier, probed).statuses()).containsExactlyElementsOf(expected);
    }

    @Test
    void shouldServeReadsAndProbesAheadOfAWriteBacklog()
    {
        // One worker, held inside the first key of a write batch: everything queued meanwhile waits, and
        // when it is let go the order in which keys complete shows who went first.
        final PosixTier tier = open(Io.LIBC, tmp, "io-threads", "1", "shared", "true");
        final PageArena arena = arena(128, SIZE);
        final PageKey stored = keys(1).getFirst();
        writeOne(tier, stored, arena);

        final java.util.concurrent.atomic.AtomicLong clock = new java.util.concurrent.atomic.AtomicLong();
        final java.util.concurrent.CountDownLatch entered = new java.util.concurrent.CountDownLatch(1);
        final java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        final OrderedBatch held = OrderedBatch.writing("held write", keys(4), arena, clock);
        final List<OrderedBatch> backlog = new ArrayList<>();
        for (int i = 0; i < 20; i++)
        {
            backlog.add(OrderedBatch.writing("backlog write " + i, keys(4), arena, clock));
        }
        final OrderedBatch read = new OrderedBatch(new RecordingTierBatch("read", List.of(stored), arena.slices(1, SIZE)), clock);
        final OrderedBatch probe = new OrderedBatch(RecordingTierBatch.ofKeys("exists", List.of(stored)), clock);

        assertTimeoutPreemptively(DEADLINE, () ->
        {
            tier.write(new BlockingBatch(held, 0, entered, release));
            entered.await();
            backlog.forEach(tier::write);
            tier.read(read);
            tier.exists(probe);
            release.countDown();
            for (final OrderedBatch batch : backlog)
            {
                batch.recorded.awaitCompletion(DEADLINE);
            }
            held.recorded.awaitCompletion(DEADLINE);
            read.recorded.awaitCompletion(DEADLINE);
            probe.recorded.awaitCompletion(DEADLINE);
        });
        assertThat(read.recorded.statuses()).containsExactly(TierStatus.OK);
        assertThat(probe.recorded.statuses()).containsExactly(TierStatus.OK);
        // The held key finishes first; then the read and the probe, before the held batch's next key
        // and before any of the 80 keys of the 20 batches queued ahead of them.
        assertThat(held.order(0)).isEqualTo(1);
        assertThat(read.order(0)).isEqualTo(2);
        assertThat(probe.order(0)).isEqualTo(3);
        assertThat(held.order(1)).isEqualTo(4);
        for (final OrderedBatch batch : backlog)
        {
            assertThat(batch.recorded.statuses()).containsOnly(TierStatus.OK);
            assertThat(batch.firstOrder()).as(batch.recorded.label()).isGreaterThan(held.order(3));
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3})
    void shouldCreateTheFanoutDirectoriesAtStartSoWritesNeverMakeThem(final int levels) throws Exception
    {
        // tmpfs when there is one: 65,792 directories take about 0.5 s there and 2 s on ext4.
        final Path shm = Path.of("/dev/shm");
        final Path dir = levels > 1 && Files.isDirectory(shm) && Files.isWritable(shm) ? Files.createTempDirectory(shm, "kvtier-posix-fanout-") : tmp;
        scratchToDelete = dir;
        final PosixTier tier = open(Io.LIBC, dir, "fanout-levels", Integer.toString(levels));
        assertThat(tier.fanout().await(Duration.ofMinutes(2))).as("the start-up thread finished").isTrue();
        assertThat(tier.fanout().complete()).isTrue();
        assertThat(FanoutDirectories.marker(tier.layout())).isRegularFile();
        final int eager = FanoutDirectories.eagerDirectories(levels);
        assertThat(eager).isEqualTo(levels == 1 ? 256 : 256 + 65_536);
        try (Stream<Path> tree = Files.walk(dir, 2))
        {
            assertThat(tree.filter(Files::isDirectory).count() - 1).isEqualTo(eager);
        }

        final List<PageKey> keys = keys(64);
        assertThat(write(tier, keys, 1, arena(64, SIZE), SIZE).statuses()).containsOnly(TierStatus.OK);
        // Level 3's 16.7M leaves are made by the first write into each, once.
        final long leaves = keys.stream().map(key -> key.toHex().substring(0, 6)).distinct().count();
        assertThat(tier.directoriesMadeByWrites()).isEqualTo(levels == 3 ? leaves : 0);

        // The marker makes the next start skip the work.
        final PosixTier again = open(Io.LIBC, dir, "fanout-levels", Integer.toString(levels));
        assertThat(again.fanout().needed()).isFalse();
        assertThat(exists(again, keys).statuses()).containsOnly(TierStatus.OK);
    }

    @ParameterizedTest
    @EnumSource(Io.class)
    void shouldMakeAFanoutDirectoryAgainWhenItWentMissing(final Io io) throws Exception
    {
        final PosixTier tier = open(io, tmp, "fanout-levels", "1");
        assertThat(tier.fanout().await(Duration.ofMinutes(2))).isTrue();
        final PageKey key = keys(1).getFirst();
        Files.delete(pagePath(tier, key).getParent());
        writeOne(tier, key, arena(1, SIZE));
        assertThat(pagePath(tier, key)).isRegularFile();
        assertThat(tier.directoriesMadeByWrites()).isEqualTo(1);
    }

    // ------------------------------------------------------------------------------------------------
    // I/O paths and capabilities
    // ------------------------------------------------------------------------------------------------

    @Test
    void shouldDeclareCapabilitiesFromTheSettingsAndTheIoPath()
    {
        assumeTrue(LibC.instance().isPresent(), "LibC is unavailable in this JVM");
        assertThat(open(Io.LIBC, tmp.resolve("plain")).capabilities()).containsExactlyInAnyOrder(TierCapability.PERSISTENT, TierCapability.ZERO_COPY);
        assertThat(open(Io.CHANNEL, tmp.resolve("channel"), "direct-io", "true").capabilities()).containsExactly(TierCapability.PERSISTENT);
        final PosixTier everything = open(Io.LIBC, tmp.resolve("all"), "shared", "true", "capacity", "1GiB", "direct-io", "true");
        assertThat(everything.capabilities()).contains(TierCapability.PERSISTENT, TierCapability.SHARED, TierCapability.SELF_EVICTING,
            TierCapability.ZERO_COPY);
        assertThat(everything.capabilities().contains(TierCapability.DIRECT_IO)).isEqualTo(everything.directIoActive());
        assertThat(everything.usesLibc()).isTrue();
    }

    @ParameterizedTest
    @EnumSource(Io.class)
    void shouldRoundTripWithFsync(final Io io)
    {
        final PosixTier tier = open(io, tmp, "fsync", "true");
        final PageArena arena = arena(8, SIZE);
        final List<PageKey> keys = keys(4);
        assertThat(write(tier, keys, 7, arena, SIZE).statuses()).containsOnly(TierStatus.OK);
        final RecordingTierBatch readBack = read(tier, keys, arena, SIZE);
        assertThat(readBack.statuses()).containsOnly(TierStatus.OK);
        for (int i = 0; i < keys.size(); i++)
        {
            PageBytes.assertContent(readBack.slice(i), 7 + i, "key " + i);
        }
    }

    @Test
    void shouldReadPagesWrittenThroughTheOtherIoPath()
    {
        final PageArena arena = arena(16, SIZE);
        final List<PageKey> keys = keys(4);
        final PosixTier libcTier = open(Io.LIBC, tmp, "direct-io", "true");
        final PosixTier channelTier = open(Io.CHANNEL, tmp);
        assertThat(write(libcTier, keys.subList(0, 2), 100, arena, SIZE).statuses()).containsOnly(TierStatus.OK);
        assertThat(write(channelTier, keys.subList(2, 4), 102, arena, SIZE).statuses()).containsOnly(TierStatus.OK);
        for (final PosixTier reader : List.of(libcTier, channelTier))
        {
            final RecordingTierBatch readBack = read(reader, keys, arena, SIZE);
            assertThat(readBack.statuses()).containsOnly(TierStatus.OK);
            for (int i = 0; i < keys.size(); i++)
            {
                PageBytes.assertContent(readBack.slice(i), 100 + i, "key " + i);
            }
        }
    }

    @Test
    void shouldWorkWithDirectIoOnTmpfsOrFallBack() throws IOException
    {
        final Path shm = Path.of("/dev/shm");
        assumeTrue(Files.isDirectory(shm) && Files.isWritable(shm), "no /dev/shm");
        final Path dir = Files.createTempDirectory(shm, "kvtier-posix-test-");
        scratchToDelete = dir;
        final PosixTier tier = open(Io.LIBC, dir, "direct-io", "true");
        assertThat(tier.capabilities().contains(TierCapability.DIRECT_IO)).isEqualTo(tier.directIoActive());
        final PageArena arena = arena(4, SIZE);
        final List<PageKey> keys = keys(2);
        assertThat(write(tier, keys, 5, arena, SIZE).statuses()).containsOnly(TierStatus.OK);
        final RecordingTierBatch readBack = read(tier, keys, arena, SIZE);
        assertThat(readBack.statuses()).containsOnly(TierStatus.OK);
        PageBytes.assertContent(readBack.slice(1), 6, "key 1");
    }

    @Test
    void shouldCloseFromACompletionCallbackWhileTheJobQueueIsFull() throws Exception
    {
        final PosixTier tier = open(Io.LIBC, tmp, "io-threads", "1");
        final PageArena arena = arena(1, SIZE);
        final MemorySegment slice = arena.slice(SIZE);
        // Reads of missing keys: they reach the worker (a probe of a directory that is not shared would not).
        final RecordingTierBatch recorded = new RecordingTierBatch("read", keys(1), List.of(slice));
        final java.util.concurrent.CountDownLatch filled = new java.util.concurrent.CountDownLatch(1);
        final io.kvtier.spi.TierBatch closing = new CallbackBatch(recorded, index ->
        {
            try
            {
                filled.await();
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
            tier.close();
        });
        final List<RecordingTierBatch> queued = new ArrayList<>();
        assertTimeoutPreemptively(Duration.ofSeconds(60), () ->
        {
            tier.read(closing);
            // The only worker is stuck in the callback: fill the job queue until the tier refuses more.
            boolean refused = false;
            // Removes, which go to the lane close() puts its poison pills in.
            while (!refused && queued.size() < 10_000)
            {
                final RecordingTierBatch batch = RecordingTierBatch.ofKeys("remove", keys(1));
                tier.remove(batch);
                queued.add(batch);
                refused = batch.isComplete() && batch.statuses().contains(TierStatus.REJECTED);
            }
            assertThat(refused).as("the job queue filled up").isTrue();
            filled.countDown();
            recorded.awaitCompletion(DEADLINE);
            for (final RecordingTierBatch batch : queued)
            {
                batch.awaitCompletion(DEADLINE);
            }
        });
        // In queue order: removes a worker got to before close (NOT_FOUND: the key was never written), then
        // the ones close() drained (CLOSED), then the one refused because the queue was full (REJECTED).
        final StringBuilder outcomes = new StringBuilder();
        for (final RecordingTierBatch batch : queued)
        {
            assertThat(batch.statuses()).hasSize(1);
            outcomes.append(switch (batch.status(0))
            {
                case NOT_FOUND -> 'n';
                case CLOSED -> 'c';
                case REJECTED -> 'r';
                default -> '?';
            });
        }
        assertThat(outcomes.toString()).as("outcomes in queue order (n not found, c closed, r rejected)").matches("n*c*r");
    }

    @Test
    void shouldCloseFromACompletionCallback()
    {
        final PosixTier tier = open(Io.LIBC, tmp, "io-threads", "1");
        final List<PageKey> keys = keys(8);
        final RecordingTierBatch recorded = new RecordingTierBatch("read", keys, arena(keys.size(), SIZE).slices(keys.size(), SIZE));
        final io.kvtier.spi.TierBatch closing = new CallbackBatch(recorded, index ->
        {
            if (index == 0)
            {
                tier.close();
            }
        });
        // The engine may close the tier from a completion; the worker must not wait for itself.
        assertTimeoutPreemptively(Duration.ofSeconds(20), () ->
        {
            tier.read(closing);
            recorded.awaitCompletion(DEADLINE);
        });
        assertThat(recorded.statuses()).startsWith(TierStatus.NOT_FOUND).containsOnly(TierStatus.NOT_FOUND, TierStatus.CLOSED);
    }

    @Test
    void shouldCloseFromTheCompletionCallbackOfAProbeAnsweredFromTheIndex()
    {
        final PosixTier tier = open(Io.LIBC, tmp);
        final RecordingTierBatch recorded = RecordingTierBatch.ofKeys("exists", keys(8));
        final io.kvtier.spi.TierBatch closing = new CallbackBatch(recorded, index ->
        {
            if (index == 0)
            {
                tier.close();
            }
        });
        // Completed on this thread, inside exists(): close() from the callback must not wait for that call.
        assertTimeoutPreemptively(Duration.ofSeconds(20), () -> tier.exists(closing));
        assertThat(recorded.isComplete()).isTrue();
        assertThat(recorded.statuses()).startsWith(TierStatus.NOT_FOUND).containsOnly(TierStatus.NOT_FOUND, TierStatus.CLOSED);
        recorded.assertNoViolations();
    }

    @Test
    void shouldBeFoundByServiceLoader()
    {
        assertThat(ServiceLoader.load(StorageTierProvider.class).stream().map(ServiceLoader.Provider::get).map(StorageTierProvider::type))
            .contains("posix");
    }

    @Test
    void shouldMapFullDiskAndQuotaToNoSpace()
    {
        assertThat(LibcFileStore.statusOf(LibC.ENOSPC)).isEqualTo(TierStatus.NO_SPACE);
        assertThat(LibcFileStore.statusOf(LibC.EDQUOT)).isEqualTo(TierStatus.NO_SPACE);
        assertThat(LibcFileStore.statusOf(LibC.EIO)).isEqualTo(TierStatus.IO_ERROR);
        assertThat(LibcFileStore.statusOf(LibC.EACCES)).isEqualTo(TierStatus.IO_ERROR);
        assertThat(ChannelFileStore.statusOf(new FileSystemException("/x", null, "No space left on device"))).isEqualTo(TierStatus.NO_SPACE);
        assertThat(ChannelFileStore.statusOf(new FileSystemException("/x", null, "Disk quota exceeded"))).isEqualTo(TierStatus.NO_SPACE);
        assertThat(ChannelFileStore.statusOf(new IOException("Input/output error"))).isEqualTo(TierStatus.IO_ERROR);
    }

    @ParameterizedTest
    @CsvSource({"LIBC, files", "URING, files", "LIBC, slab", "URING, slab", "LIBC, slab-frames", "URING, slab-frames"})
    void shouldNotAllocatePerKeyOnTheLibcOrIoUringPath(final Io io, final String layout) throws IOException
    {
        assumeTrue(LibC.instance().isPresent(), "LibC is unavailable in this JVM");
        assumeTrue(ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean, "no per-thread allocation counter");
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isThreadAllocatedMemorySupported(), "no per-thread allocation counter");
        threads.setThreadAllocatedMemoryEnabled(true);

        // slab-frames: engine-shaped frames of a 4 KiB page, each trimmed, its trailer kept in its header and put back on each read.
        final boolean frames = layout.equals("slab-frames");
        final long size = frames ? 8192 : 4096;
        final int count = 256;
        // tmpfs when there is one: the JIT needs tens of thousands of keys before its escape analysis
        // removes the FFM linker's transient allocations, and metadata operations are cheap there.
        final Path shm = Path.of("/dev/shm");
        final Path dir = Files.isDirectory(shm) && Files.isWritable(shm) ? Files.createTempDirectory(shm, "kvtier-posix-alloc-") : tmp;
        scratchToDelete = dir;
        // With io_uring, writes and reads go in batches of 8 keys, each through its own write slot.
        final PageArena arena = arena(2 * count, size);
        // The slab checksums each page: allocation-free for slices of the transfer memory, which the engine always offers.
        final PosixTier tier = open(io, new ContractTierContext(NAME, size, layout.startsWith("slab") ? arena.region() : null), dir,
            "io-threads", "1", "capacity", "64MiB", "layout", frames ? "slab" : layout);
        final List<PageKey> keys = keys(count);
        final List<MemorySegment> sources = arena.slices(count, size);
        for (int i = 0; frames && i < count; i++)
        {
            // An arena's slices start as noise: a trailer's first bytes, then zeros, as an engine frame's last block is.
            sources.get(i).asSlice(4096).fill((byte)0);
            sources.get(i).set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, 4096, 0x314547415054564BL + i);
        }
        final List<MemorySegment> destinations = arena.slices(count, size);
        final Runnable round = () ->
        {
            final RecordingTierBatch written = new RecordingTierBatch("write", keys, sources);
            tier.write(written);
            assertThat(written.awaitCompletion(DEADLINE).statuses()).containsOnly(TierStatus.OK);
            final RecordingTierBatch readBack = new RecordingTierBatch("read", keys, destinations);
            tier.read(readBack);
            assertThat(readBack.awaitCompletion(DEADLINE).statuses()).containsOnly(TierStatus.OK);
            final RecordingTierBatch present = RecordingTierBatch.ofKeys("exists", keys);
            tier.exists(present);
            assertThat(present.awaitCompletion(DEADLINE).statuses()).containsOnly(TierStatus.OK);
        };
        // The FFM linker allocates until C2 has compiled and inlined the downcalls, which happens in the
        // background: measure windows of rounds until one is clean; a real per-key allocation never is.
        final long worker = tier.workerThreads().getFirst().threadId();
        final int roundsPerWindow = 5;
        final long keysPerWindow = 3L * roundsPerWindow * count;
        double best = Double.MAX_VALUE;
        long bestBytes = -1;
        for (int window = 0; window < 200 && best >= 1.0; window++)
        {
            final long before = threads.getThreadAllocatedBytes(worker);
            for (int i = 0; i < roundsPerWindow; i++)
            {
                round.run();
            }
            final long allocated = threads.getThreadAllocatedBytes(worker) - before;
            if (allocated / (double)keysPerWindow < best)
            {
                best = allocated / (double)keysPerWindow;
                bestBytes = allocated;
            }
        }
        assertThat(best)
            .as("bytes the I/O thread allocated per key in its best window (%d bytes over %d keys)", bestBytes, keysPerWindow)
            .isLessThan(1.0);
        if (frames)
        {
            // The case is about the trimmed path: its frames must have taken it, not the spilled one.
            final Slab slab = tier.slab();
            assertThat(slab.form(slab.slotOf(keys.get(0).high(), keys.get(0).low()))).isEqualTo(SlabDescriptor.FORM_TRIMMED);
        }
    }

    @Test
    void shouldNotAllocateWhenAWorkerWaitsForJobs() throws IOException
    {
        assumeTrue(LibC.instance().isPresent(), "LibC is unavailable in this JVM");
        assumeTrue(ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean, "no per-thread allocation counter");
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isThreadAllocatedMemorySupported(), "no per-thread allocation counter");
        threads.setThreadAllocatedMemoryEnabled(true);

        final Path shm = Path.of("/dev/shm");
        final Path dir = Files.isDirectory(shm) && Files.isWritable(shm) ? Files.createTempDirectory(shm, "kvtier-posix-wait-") : tmp;
        scratchToDelete = dir;
        final PosixTier tier = open(Io.LIBC, dir, "io-threads", "1");
        // One key per batch, each awaited: the worker runs dry and waits for every job, which is what a
        // blocking queue's per-wait node would show up on (one key per batch leaves nothing to amortise it).
        // Removes of a missing key: one libc call on the worker (a probe would be answered from the
        // index, and a read goes deeper, where the JIT may leave the FFM linker's per-call capture-state
        // slice in place; shouldNotAllocatePerKeyOnTheLibcPath covers reads).
        final List<PageKey> absent = keys(1);
        final long worker = tier.workerThreads().getFirst().threadId();
        final int batchesPerWindow = 500;
        long best = Long.MAX_VALUE;
        // Until the JIT compiles the downcall, the FFM linker allocates ~40 bytes per call; on a loaded
        // machine that takes longer than a fixed number of windows, so give it up to a minute of them.
        final long giveUp = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
        for (int window = 0; window < 2_000 && best > 0 && System.nanoTime() - giveUp < 0; window++)
        {
            final long before = threads.getThreadAllocatedBytes(worker);
            for (int i = 0; i < batchesPerWindow; i++)
            {
                final RecordingTierBatch batch = RecordingTierBatch.ofKeys("remove", absent);
                tier.remove(batch);
                assertThat(batch.awaitCompletion(DEADLINE).statuses()).containsExactly(TierStatus.NOT_FOUND);
            }
            best = Math.min(best, threads.getThreadAllocatedBytes(worker) - before);
        }
        assertThat(best).as("bytes the I/O thread allocated over %d awaited single-key batches, in its best window", batchesPerWindow)
            .isZero();
    }

    /** Records completions like its delegate, then runs a callback on the completing thread, as the engine's batches do. */
    private static final class CallbackBatch implements io.kvtier.spi.TierBatch
    {
        private final RecordingTierBatch recorded;
        private final java.util.function.IntConsumer afterComplete;

        CallbackBatch(final RecordingTierBatch recorded, final java.util.function.IntConsumer afterComplete)
        {
            this.recorded = recorded;
            this.afterComplete = afterComplete;
        }

        @Override
        public int size()
        {
            return recorded.size();
        }

        @Override
        public long keyHigh(final int index)
        {
            return recorded.keyHigh(index);
        }

        @Override
        public long keyLow(final int index)
        {
            return recorded.keyLow(index);
        }

        @Override
        public MemorySegment segment(final int index)
        {
            return recorded.segment(index);
        }

        @Override
        public void complete(final int index, final TierStatus status)
        {
            recorded.complete(index, status);
            afterComplete.accept(index);
        }
    }

    /** Holds the worker inside {@code segment(held)} of a batch until released, so what is queued meanwhile waits. */
    private static final class BlockingBatch implements io.kvtier.spi.TierBatch
    {
        private final io.kvtier.spi.TierBatch recorded;
        private final int held;
        private final java.util.concurrent.CountDownLatch entered;
        private final java.util.concurrent.CountDownLatch release;

        BlockingBatch(final io.kvtier.spi.TierBatch recorded, final int held, final java.util.concurrent.CountDownLatch entered,
                      final java.util.concurrent.CountDownLatch release)
        {
            this.recorded = recorded;
            this.held = held;
            this.entered = entered;
            this.release = release;
        }

        @Override
        public int size()
        {
            return recorded.size();
        }

        @Override
        public long keyHigh(final int index)
        {
            return recorded.keyHigh(index);
        }

        @Override
        public long keyLow(final int index)
        {
            return recorded.keyLow(index);
        }

        @Override
        public MemorySegment segment(final int index)
        {
            if (index == held && entered.getCount() > 0)
            {
                entered.countDown();
                try
                {
                    release.await();
                }
                catch (final InterruptedException ex)
                {
                    Thread.currentThread().interrupt();
                }
            }
            return recorded.segment(index);
        }

        @Override
        public void complete(final int index, final TierStatus status)
        {
            recorded.complete(index, status);
        }
    }

    /** Records the order of every key's completion on a clock shared by several batches. */
    private static final class OrderedBatch implements io.kvtier.spi.TierBatch
    {
        private final RecordingTierBatch recorded;
        private final java.util.concurrent.atomic.AtomicLong clock;
        private final long[] order;

        OrderedBatch(final RecordingTierBatch recorded, final java.util.concurrent.atomic.AtomicLong clock)
        {
            this.recorded = recorded;
            this.clock = clock;
            this.order = new long[recorded.size()];
        }

        static OrderedBatch writing(final String label, final List<PageKey> keys, final PageArena arena, final java.util.concurrent.atomic.AtomicLong clock)
        {
            final List<MemorySegment> sources = arena.slices(keys.size(), SIZE);
            for (int i = 0; i < keys.size(); i++)
            {
                PageBytes.fill(sources.get(i), i);
            }
            return new OrderedBatch(new RecordingTierBatch(label, keys, sources), clock);
        }

        /** @return the key's place in the completion order, from 1, or 0 when not completed */
        long order(final int index)
        {
            synchronized (order)
            {
                return order[index];
            }
        }

        long firstOrder()
        {
            synchronized (order)
            {
                return java.util.Arrays.stream(order).min().orElse(0);
            }
        }

        @Override
        public int size()
        {
            return recorded.size();
        }

        @Override
        public long keyHigh(final int index)
        {
            return recorded.keyHigh(index);
        }

        @Override
        public long keyLow(final int index)
        {
            return recorded.keyLow(index);
        }

        @Override
        public MemorySegment segment(final int index)
        {
            return recorded.segment(index);
        }

        @Override
        public void complete(final int index, final TierStatus status)
        {
            synchronized (order)
            {
                order[index] = clock.incrementAndGet();
            }
            recorded.complete(index, status);
        }
    }
}
