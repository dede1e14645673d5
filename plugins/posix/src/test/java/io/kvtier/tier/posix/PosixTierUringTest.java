package io.kvtier.tier.posix;

import io.kvtier.nativeaccess.libc.LibC;
import io.kvtier.nativeaccess.uring.Uring;
import io.kvtier.nativeaccess.uring.UringAvailability;
import io.kvtier.nativeaccess.uring.bindings.io_uring_h;
import io.kvtier.spi.PageKey;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierContext;
import io.kvtier.spi.TierStatus;
import io.kvtier.tck.PageArena;
import io.kvtier.tck.PageBytes;
import io.kvtier.tck.RecordingTierBatch;
import io.kvtier.tier.support.IoErrorLog;
import io.kvtier.tier.support.PathLayout;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.MessageFormat;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.ResourceBundle;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The io_uring path of the tier, and how it degrades: without io_uring, when the filesystem refuses
 * O_DIRECT, and when a page's transfer fails. Each failure is that operation's own status; nothing
 * committed before is lost.
 */
class PosixTierUringTest
{
    private static final long SIZE = 16 * 1024;
    private static final Duration DEADLINE = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    private final RecordingLogger logger = new RecordingLogger();
    private final List<PosixTier> tiers = new ArrayList<>();
    private final List<AutoCloseable> resources = new ArrayList<>();
    private LibC libc;

    @BeforeEach
    void requireLibc()
    {
        assumeTrue(LibC.instance().isPresent(), "LibC is unavailable in this JVM (start it with --enable-native-access=ALL-UNNAMED)");
        libc = LibC.instance().get();
    }

    @AfterEach
    void closeAll() throws Exception
    {
        tiers.forEach(PosixTier::close);
        for (final AutoCloseable resource : resources.reversed())
        {
            resource.close();
        }
    }

    private PosixTier open(final Supplier<UringAvailability> availability, final String... settings)
    {
        return open(availability, null, settings);
    }

    private PosixTier open(final Supplier<UringAvailability> availability, final MemorySegment transferMemory, final String... settings)
    {
        final Map<String, String> config = new HashMap<>();
        config.put("dir", tmp.resolve("tier").toString());
        // The files layout's rings, unless a test names another; io_uring even where the temporary directory is on tmpfs, whose
        // default is libc. A setting given as null is left unset (shouldRunIoUringByDefaultAndSaySo's io).
        config.put("layout", "files");
        config.put("io", "uring");
        for (int i = 0; i < settings.length; i += 2)
        {
            if (settings[i + 1] == null)
            {
                config.remove(settings[i]);
            }
            else
            {
                config.put(settings[i], settings[i + 1]);
            }
        }
        final TierContext context = new TierContext()
        {
            @Override
            public String tierName()
            {
                return "t";
            }

            @Override
            public long objectSize()
            {
                return SIZE;
            }

            @Override
            public System.Logger logger()
            {
                return logger;
            }

            @Override
            public java.util.Optional<MemorySegment> transferMemory()
            {
                return java.util.Optional.ofNullable(transferMemory);
            }
        };
        final PosixTier tier = (PosixTier)new PosixTierProvider(true, availability).create(new TierConfig("t", config), context);
        tiers.add(tier);
        return tier;
    }

    private PageArena arena(final int slices)
    {
        final PageArena arena = new PageArena(PageArena.bytesFor(slices, SIZE));
        resources.add(arena);
        return arena;
    }

    @Test
    void shouldRunIoUringByDefaultAndSaySo()
    {
        assumeTrue(Uring.availability().available(), () -> "io_uring is unavailable here: " + Uring.availability().describe());
        assumeFalse(PosixSettings.onTmpfs(tmp), "the temporary directory is on tmpfs here, where the default is io=libc"
            + " (PosixSettingsTest covers that default)");
        final PosixTier tier = open(Uring::availability, "io", null);
        assertThat(tier.ioPath()).isEqualTo(IoPath.URING);
        assertThat(tier.describeIo()).startsWith("uring (one ring").doesNotContain("fell back");
        assertThat(tier.toString()).contains("io=uring");
        assertThat(tier.describe()).startsWith("io=uring unregistered buffers, direct-io off, layout=files, dir=");
        assertThat(logger.messages(System.Logger.Level.INFO)).anySatisfy(line -> assertThat(line).contains("ready").contains("io path: uring"));
        roundTrip(tier, 3);
    }

    @Test
    void shouldRegisterTheTransferMemoryAsFixedBuffersAndMovePagesInsideItWithFixedOperations()
    {
        assumeTrue(Uring.availability().available(), () -> "io_uring is unavailable here: " + Uring.availability().describe());
        final PageArena pool = arena(8);
        final PosixTier tier = open(Uring::availability, pool.region());
        assumeTrue(tier.describe().contains("uring fixed buffers"), () -> "registration refused here: " + tier.describeIo());
        final List<PageKey> keys = List.of(new PageKey(77, 1), new PageKey(77, 2), new PageKey(77, 3));
        final List<MemorySegment> sources = pool.slices(3, SIZE);
        for (int i = 0; i < 3; i++)
        {
            PageBytes.fill(sources.get(i), 77 + i);
        }
        assertThat(await(tier, "write", keys, sources, true).statuses()).containsOnly(TierStatus.OK);
        final RecordingTierBatch readBack = await(tier, "read", keys, pool.slices(3, SIZE), false);
        assertThat(readBack.statuses()).containsOnly(TierStatus.OK);
        for (int i = 0; i < 3; i++)
        {
            PageBytes.assertContent(readBack.slice(i), 77 + i, "key " + i);
        }
        assertThat(tier.fixedBufferOperations()).as("3 writes and 3 reads inside the registered memory").isGreaterThanOrEqualTo(6);

        final long before = tier.fixedBufferOperations();
        roundTrip(tier, 5); // slices of another arena: plain READ/WRITE, the same bytes
        assertThat(tier.fixedBufferOperations()).as("slices outside the registered memory").isEqualTo(before);
    }

    @Test
    void shouldLeaveAPoolLargerThanFixedBuffersMaxUnregisteredSayingWhyAndStillMoveItsPages()
    {
        assumeTrue(Uring.availability().available(), () -> "io_uring is unavailable here: " + Uring.availability().describe());
        final PageArena pool = arena(8);
        // One byte short of the pool: pinning a pool of hundreds of GiB would hold the engine's start for minutes.
        final PosixTier tier = open(Uring::availability, pool.region(), "fixed-buffers-max", Long.toString(pool.region().byteSize() - 1));
        assertThat(tier.describeIo()).contains("not fixed buffers").contains("tier.t.fixed-buffers-max");
        final List<PageKey> keys = List.of(new PageKey(78, 1), new PageKey(78, 2));
        final List<MemorySegment> sources = pool.slices(2, SIZE);
        for (int i = 0; i < 2; i++)
        {
            PageBytes.fill(sources.get(i), 78 + i);
        }
        assertThat(await(tier, "write", keys, sources, true).statuses()).containsOnly(TierStatus.OK);
        final RecordingTierBatch readBack = await(tier, "read", keys, pool.slices(2, SIZE), false);
        assertThat(readBack.statuses()).containsOnly(TierStatus.OK);
        for (int i = 0; i < 2; i++)
        {
            PageBytes.assertContent(readBack.slice(i), 78 + i, "key " + i);
        }
        assertThat(tier.fixedBufferOperations()).as("nothing registered, nothing sent as READ_FIXED/WRITE_FIXED").isZero();
    }

    @Test
    void shouldFallBackToLibcNamingWhyAndHowToEnableWhenTheKernelHasNoIoUring()
    {
        final PosixTier tier = open(() -> UringAvailability.unavailable("simulated: io_uring_setup failed: Function not implemented (ENOSYS)",
            "run Linux 5.6 or newer built with CONFIG_IO_URING=y"));
        assertThat(tier.ioPath()).isEqualTo(IoPath.LIBC);
        assertThat(tier.describeIo()).startsWith("libc").contains("fell back from uring").contains("ENOSYS").contains("CONFIG_IO_URING=y");
        assertThat(tier.describe()).as("what kvtier stat shows").startsWith("io=libc (fell back from uring: io_uring unavailable: simulated");
        assertThat(logger.messages(System.Logger.Level.WARNING)).anySatisfy(line -> assertThat(line)
            .contains("tier.t.io=uring cannot be used").contains("ENOSYS").contains("falling back to io=libc"));
        roundTrip(tier, 5);
    }

    @Test
    void shouldUseLibcOrChannelWhenConfiguredWithoutMentioningAFallback()
    {
        final PosixTier tier = open(Uring::availability, "io", "libc");
        assertThat(tier.ioPath()).isEqualTo(IoPath.LIBC);
        assertThat(tier.describeIo()).doesNotContain("fell back");
        assertThat(logger.messages(System.Logger.Level.WARNING)).noneSatisfy(line -> assertThat(line).contains("falling back"));
        assertThat(open(Uring::availability, "io", "channel", "dir", tmp.resolve("other").toString()).ioPath()).isEqualTo(IoPath.CHANNEL);
    }

    @Test
    void shouldFailOnlyTheWriteWhoseTransferFailedAndKeepWhatWasCommittedBefore() throws Exception
    {
        assumeTrue(Uring.availability().available(), () -> "io_uring is unavailable here: " + Uring.availability().describe());
        final Uring ring = Uring.open(UringFileStore.RING_ENTRIES);
        final Arena arena = Arena.ofConfined();
        resources.add(ring);
        resources.add(arena);
        final UringFileStore store = new UringFileStore(libc, ring, new PathLayout(tmp, 0), arena, false,
            new DirectIo(false, logger), new IoErrorLog(logger, 1, TimeUnit.SECONDS));
        final MemorySegment committed = arena.allocate(SIZE, 4096);
        PageBytes.fill(committed, 100);
        assertThat(store.writeTemp(0, 9, 9, committed)).isEqualTo(TierStatus.OK);
        assertThat(store.publishTemp(0)).isEqualTo(TierStatus.OK);

        // The same key again, from memory the kernel cannot read (PROT_NONE): the write's completion
        // carries EFAULT, as a failing disk's would carry EIO. It fails that write alone.
        assertThat(store.writeTemp(0, 9, 9, unreadable(SIZE))).isEqualTo(TierStatus.IO_ERROR);
        store.discardTemp(0);
        assertThat(logger.messages(System.Logger.Level.WARNING)).anySatisfy(line -> assertThat(line)
            .contains("write").contains("failed: Bad address (errno 14) -> IO_ERROR"));
        try (var files = Files.list(tmp))
        {
            assertThat(files.filter(p -> p.toString().endsWith(PathLayout.TEMP_SUFFIX) && !p.getFileName().toString().startsWith(SpareTempFiles.PREFIX))).as("the failed write's temp file").isEmpty();
        }

        final MemorySegment readBack = arena.allocate(SIZE, 4096);
        assertThat(store.read(9, 9, readBack)).isEqualTo(TierStatus.OK);
        PageBytes.assertContent(readBack, 100, "the object committed before the failed write");
    }

    @Test
    void shouldReadAClaimOfPagesWithOneSubmissionAndGiveEachItsOwnStatus() throws Exception
    {
        assumeTrue(Uring.availability().available(), () -> "io_uring is unavailable here: " + Uring.availability().describe());
        final Uring ring = Uring.open(UringFileStore.RING_ENTRIES);
        final Arena arena = Arena.ofConfined();
        resources.add(ring);
        resources.add(arena);
        final PathLayout layout = new PathLayout(tmp, 0);
        final UringFileStore store = new UringFileStore(libc, ring, layout, arena, false, new DirectIo(false, logger),
            new IoErrorLog(logger, 1, TimeUnit.SECONDS));
        final int count = UringFileStore.RING_ENTRIES;
        final long[] high = new long[count];
        final long[] low = new long[count];
        final MemorySegment[] destinations = new MemorySegment[count];
        for (int k = 0; k < count; k++)
        {
            high[k] = 40 + k;
            low[k] = k;
            final MemorySegment source = arena.allocate(SIZE, 4096);
            PageBytes.fill(source, 1000 + k);
            assertThat(store.writeTemp(0, high[k], low[k], source)).isEqualTo(TierStatus.OK);
            assertThat(store.publishTemp(0)).isEqualTo(TierStatus.OK);
            destinations[k] = arena.allocate(SIZE, 4096);
        }
        Files.delete(layout.pagePath(high[2], low[2]));
        try (var file = java.nio.channels.FileChannel.open(layout.pagePath(high[5], low[5]), java.nio.file.StandardOpenOption.WRITE))
        {
            file.truncate(SIZE / 2);
        }

        final TierStatus[] statuses = new TierStatus[count];
        final long entersBefore = ring.enterCalls();
        store.readPages(high, low, destinations, count, statuses);
        assertThat(statuses).containsExactly(TierStatus.OK, TierStatus.OK, TierStatus.NOT_FOUND, TierStatus.OK, TierStatus.OK,
            TierStatus.CORRUPT, TierStatus.OK, TierStatus.OK);
        for (int k = 0; k < count; k++)
        {
            if (statuses[k] == TierStatus.OK)
            {
                PageBytes.assertContent(destinations[k], 1000 + k, "page " + k);
            }
        }
        assertThat(ring.largestSubmission()).as("the six readable pages in one io_uring_enter").isEqualTo(6);
        assertThat(ring.enterCalls() - entersBefore).isPositive();
        assertThat(logger.messages(System.Logger.Level.WARNING)).anySatisfy(line -> assertThat(line)
            .contains("has " + SIZE / 2 + " bytes, expected " + SIZE + " -> CORRUPT"));
    }

    @Test
    void shouldWriteAClaimOfPagesWithOneSubmissionAndGiveEachItsOwnStatus() throws Exception
    {
        assumeTrue(Uring.availability().available(), () -> "io_uring is unavailable here: " + Uring.availability().describe());
        final Uring ring = Uring.open(UringFileStore.RING_ENTRIES);
        final Arena arena = Arena.ofConfined();
        resources.add(ring);
        resources.add(arena);
        final PathLayout layout = new PathLayout(tmp, 1);
        final UringFileStore store = new UringFileStore(libc, ring, layout, arena, false, new DirectIo(false, logger),
            new IoErrorLog(logger, 1, TimeUnit.SECONDS));
        final int count = UringFileStore.RING_ENTRIES;
        assertThat(store.writeBatchSize()).isEqualTo(count);
        final long[] high = new long[count];
        final long[] low = new long[count];
        final MemorySegment[] sources = new MemorySegment[count];
        for (int k = 0; k < count; k++)
        {
            // The first byte of the high half names the fan-out directory: one per page.
            high[k] = (0x10L + k) << 56;
            low[k] = k;
            sources[k] = arena.allocate(SIZE, 4096);
            PageBytes.fill(sources[k], 2000 + k);
            if (k != 5)
            {
                Files.createDirectories(layout.pagePath(high[k], low[k]).getParent());
            }
        }
        // Page 3 overwrites a committed object from memory the kernel cannot read: EFAULT, as a failing disk's EIO.
        final MemorySegment committed = arena.allocate(SIZE, 4096);
        PageBytes.fill(committed, 300);
        assertThat(store.writeTemp(0, high[3], low[3], committed)).isEqualTo(TierStatus.OK);
        assertThat(store.publishTemp(0)).isEqualTo(TierStatus.OK);
        sources[3] = unreadable(SIZE);
        // Page 5's directory is missing: its open fails with ENOENT, and the write alone makes it.

        final TierStatus[] statuses = new TierStatus[count];
        store.writeTemps(high, low, sources, count, statuses);
        assertThat(statuses).containsExactly(TierStatus.OK, TierStatus.OK, TierStatus.OK, TierStatus.IO_ERROR, TierStatus.OK,
            TierStatus.OK, TierStatus.OK, TierStatus.OK);
        assertThat(ring.largestSubmission()).as("every page whose temp file opened, in one io_uring_enter").isEqualTo(count - 1);
        assertThat(store.directoriesMade()).as("page 5's, made by its write alone").isEqualTo(1);
        assertThat(logger.messages(System.Logger.Level.WARNING)).anySatisfy(line -> assertThat(line)
            .contains("write").contains("failed: Bad address (errno 14) -> IO_ERROR"));
        for (int k = 0; k < count; k++)
        {
            assertThat(layout.pagePath(high[k], low[k]).toFile().exists()).as("page %d before its rename", k).isEqualTo(k == 3);
        }
        for (int k = 0; k < count; k++)
        {
            if (statuses[k] == TierStatus.OK)
            {
                assertThat(store.publishTemp(k)).isEqualTo(TierStatus.OK);
            }
            else
            {
                store.discardTemp(k);
            }
        }
        try (var files = Files.walk(tmp))
        {
            assertThat(files.filter(p -> p.toString().endsWith(PathLayout.TEMP_SUFFIX) && !p.getFileName().toString().startsWith(SpareTempFiles.PREFIX))).as("temp files left").isEmpty();
        }
        final MemorySegment readBack = arena.allocate(SIZE, 4096);
        for (int k = 0; k < count; k++)
        {
            assertThat(store.read(high[k], low[k], readBack)).isEqualTo(TierStatus.OK);
            PageBytes.assertContent(readBack, k == 3 ? 300 : 2000 + k, k == 3 ? "the object committed before the failed write" : "page " + k);
        }
    }

    @Test
    void shouldCompleteEachKeyOfABatchedWriteJobWithItsOwnStatus() throws Exception
    {
        assumeTrue(Uring.availability().available(), () -> "io_uring is unavailable here: " + Uring.availability().describe());
        final PosixTier tier = open(Uring::availability, "io-threads", "1", "fsync", "true", "fanout-levels", "0");
        final PageArena arena = arena(40);
        final List<PageKey> keys = new ArrayList<>();
        final List<MemorySegment> sources = arena.slices(20, SIZE);
        for (int i = 0; i < 20; i++)
        {
            keys.add(new PageKey(600, i));
            PageBytes.fill(sources.get(i), 600 + i);
        }
        // A directory where key 11's page goes: its temp file is written with the others, its rename fails (EISDIR).
        Files.createDirectory(tier.layout().pagePath(600, 11));
        final RecordingTierBatch written = await(tier, "write", keys, sources, true);
        for (int i = 0; i < 20; i++)
        {
            assertThat(written.statuses().get(i)).as("key %d", i).isEqualTo(i == 11 ? TierStatus.IO_ERROR : TierStatus.OK);
        }
        assertThat(logger.messages(System.Logger.Level.WARNING)).anySatisfy(line -> assertThat(line)
            .contains("rename to ").contains("Is a directory").contains("-> IO_ERROR"));
        final List<PageKey> readable = new ArrayList<>(keys);
        readable.remove(11);
        final RecordingTierBatch readBack = await(tier, "read", readable, arena.slices(19, SIZE), false);
        assertThat(readBack.statuses()).containsOnly(TierStatus.OK);
        for (int i = 0; i < 19; i++)
        {
            PageBytes.assertContent(readBack.slice(i), 600 + (i < 11 ? i : i + 1), "key " + (i < 11 ? i : i + 1));
        }
        assertThat(tier.usage().objects()).isEqualTo(19);
        try (var files = Files.list(tier.layout().dir()))
        {
            assertThat(files.filter(p -> p.toString().endsWith(PathLayout.TEMP_SUFFIX) && !p.getFileName().toString().startsWith(SpareTempFiles.PREFIX))).as("key 11's temp file").isEmpty();
        }
    }

    @Test
    void shouldReportAFullDiskAsNoSpaceForThatWrite() throws Exception
    {
        assumeTrue(Uring.availability().available(), () -> "io_uring is unavailable here: " + Uring.availability().describe());
        assumeTrue(Files.isWritable(Path.of("/dev/full")), "no /dev/full to write to");
        final Uring ring = Uring.open(UringFileStore.RING_ENTRIES);
        final Arena arena = Arena.ofConfined();
        resources.add(ring);
        resources.add(arena);
        final UringFileStore store = new UringFileStore(libc, ring, new PathLayout(tmp, 0), arena, false,
            new DirectIo(false, logger), new IoErrorLog(logger, 1, TimeUnit.SECONDS));
        final int full = libc.open(arena.allocateFrom("/dev/full"), LibC.O_WRONLY | LibC.O_CLOEXEC, 0);
        assertThat(full).isNotNegative();
        try
        {
            final long written = store.writeFully(full, arena.allocate(SIZE, 4096));
            assertThat(written).isEqualTo(-LibC.ENOSPC);
            assertThat(LibcFileStore.statusOf((int)-written)).isEqualTo(TierStatus.NO_SPACE);
        }
        finally
        {
            libc.close(full);
        }
    }

    @Test
    void shouldGoBufferedAndLogItWhenTheFilesystemRefusesDirectIo() throws Exception
    {
        assumeTrue(Uring.availability().available(), () -> "io_uring is unavailable here: " + Uring.availability().describe());
        final Uring ring = Uring.open(UringFileStore.RING_ENTRIES);
        final Arena arena = Arena.ofConfined();
        resources.add(ring);
        resources.add(arena);
        // A DirectIo that believes any alignment will do: the kernel refuses the misaligned O_DIRECT
        // transfer with EINVAL, as a filesystem without O_DIRECT support refuses it at open.
        final DirectIo direct = new DirectIo(true, 1, 1, logger);
        final UringFileStore store = new UringFileStore(libc, ring, new PathLayout(tmp, 0), arena, false, direct,
            new IoErrorLog(logger, 1, TimeUnit.SECONDS));
        final MemorySegment source = arena.allocate(8192, 4096).asSlice(1, 1000);
        for (int i = 0; i < 1000; i++)
        {
            source.set(ValueLayout.JAVA_BYTE, i, (byte)(i * 7));
        }
        final int fd = libc.open(arena.allocateFrom(tmp.resolve("probe").toString()), LibC.O_WRONLY | LibC.O_CREAT | LibC.O_DIRECT, 0644);
        assumeTrue(fd >= 0, () -> tmp + " refuses O_DIRECT at open, so the refusal of a transfer cannot be shown here");
        assumeFalse(PosixSettings.onTmpfs(tmp), () -> tmp + " is on tmpfs, which takes misaligned O_DIRECT transfers (it copies them),"
            + " so the refusal of a transfer cannot be shown here");
        libc.close(fd);

        assertThat(store.writeTemp(0, 7, 7, source)).isEqualTo(TierStatus.OK);
        assertThat(store.publishTemp(0)).isEqualTo(TierStatus.OK);
        assertThat(direct.active()).as("O_DIRECT off for good after EINVAL").isFalse();
        assertThat(logger.messages(System.Logger.Level.WARNING)).anySatisfy(line -> assertThat(line)
            .contains("direct-io turned off").contains("EINVAL").contains("buffered"));

        final MemorySegment copy = arena.allocate(8192, 4096).asSlice(3, 1000);
        assertThat(store.read(7, 7, copy)).isEqualTo(TierStatus.OK);
        assertThat(copy.mismatch(source)).isEqualTo(-1);
    }

    @Test
    void shouldWriteEveryPageOfAClaimBufferedWhenTheFilesystemRefusesItsDirectIo() throws Exception
    {
        assumeTrue(Uring.availability().available(), () -> "io_uring is unavailable here: " + Uring.availability().describe());
        final Uring ring = Uring.open(UringFileStore.RING_ENTRIES);
        final Arena arena = Arena.ofConfined();
        resources.add(ring);
        resources.add(arena);
        final int fd = libc.open(arena.allocateFrom(tmp.resolve("probe").toString()), LibC.O_WRONLY | LibC.O_CREAT | LibC.O_DIRECT, 0644);
        assumeTrue(fd >= 0, () -> tmp + " refuses O_DIRECT at open, so the refusal of a transfer cannot be shown here");
        assumeFalse(PosixSettings.onTmpfs(tmp), () -> tmp + " is on tmpfs, which takes misaligned O_DIRECT transfers (it copies them),"
            + " so the refusal of a transfer cannot be shown here");
        libc.close(fd);
        // Misaligned slices the DirectIo believes will do: each batched O_DIRECT write fails with EINVAL.
        final DirectIo direct = new DirectIo(true, 1, 1, logger);
        final UringFileStore store = new UringFileStore(libc, ring, new PathLayout(tmp, 0), arena, false, direct,
            new IoErrorLog(logger, 1, TimeUnit.SECONDS));
        final int count = 4;
        final long[] high = {81, 82, 83, 84};
        final long[] low = {1, 2, 3, 4};
        final MemorySegment[] sources = new MemorySegment[count];
        for (int k = 0; k < count; k++)
        {
            sources[k] = arena.allocate(8192, 4096).asSlice(1 + k, 1000);
            for (int i = 0; i < 1000; i++)
            {
                sources[k].set(ValueLayout.JAVA_BYTE, i, (byte)(i * 7 + k));
            }
        }

        final TierStatus[] statuses = new TierStatus[count];
        store.writeTemps(high, low, sources, count, statuses);
        assertThat(statuses).containsOnly(TierStatus.OK);
        assertThat(direct.active()).as("O_DIRECT off for good after EINVAL").isFalse();
        for (int k = 0; k < count; k++)
        {
            assertThat(store.publishTemp(k)).isEqualTo(TierStatus.OK);
            final MemorySegment copy = arena.allocate(8192, 4096).asSlice(3, 1000);
            assertThat(store.read(high[k], low[k], copy)).isEqualTo(TierStatus.OK);
            assertThat(copy.mismatch(sources[k])).as("page %d", k).isEqualTo(-1);
        }
        try (var files = Files.list(tmp))
        {
            assertThat(files.filter(p -> p.toString().endsWith(PathLayout.TEMP_SUFFIX) && !p.getFileName().toString().startsWith(SpareTempFiles.PREFIX))).as("the refused writes' temp files").isEmpty();
        }
    }

    @Test
    void shouldWriteIntoSpareTempFilesMadeAheadMakingLeafDirectoriesAtTheRenameAndLeaveNoneBehind() throws Exception
    {
        // fanout-levels=3: leaves are made on first use, so a spare (in the root) often meets a missing directory at its rename.
        for (final String io : new String[] {"uring", "libc"})
        {
            final Path dir = tmp.resolve("spares-" + io);
            final PosixTier tier = open(Uring::availability, "io", io, "dir", dir.toString(), "fanout-levels", "3", "spare-temp-files", "4");
            assertThat(logger.messages(System.Logger.Level.INFO)).anySatisfy(line -> assertThat(line).contains("spare temp files: 4 kept ready"));
            final PageArena arena = arena(24);
            final List<PageKey> keys = new ArrayList<>();
            for (int i = 0; i < 12; i++)
            {
                keys.add(new PageKey(0x5A00 + i, i * 7919L));
            }
            final List<MemorySegment> sources = arena.slices(12, SIZE);
            for (int i = 0; i < 12; i++)
            {
                PageBytes.fill(sources.get(i), 500 + i);
            }
            for (int i = 0; i < 12; i++)
            {
                // One key a job, the spares' refill keeping up or not: both ways must give the same pages.
                assertThat(await(tier, "write", keys.subList(i, i + 1), sources.subList(i, i + 1), true).statuses()).containsOnly(TierStatus.OK);
            }
            final RecordingTierBatch readBack = await(tier, "read", keys, arena.slices(12, SIZE), false);
            assertThat(readBack.statuses()).containsOnly(TierStatus.OK);
            for (int i = 0; i < 12; i++)
            {
                PageBytes.assertContent(readBack.slice(i), 500 + i, io + " key " + i);
            }
            tier.close();
            try (var files = Files.walk(dir))
            {
                assertThat(files.map(f -> f.getFileName().toString()).filter(n -> n.endsWith(PathLayout.TEMP_SUFFIX)))
                    .as("no spare or temp file left after close").isEmpty();
            }
        }
    }

    @Test
    void shouldHandOutSparesThatExistAndAreEmptyAndRefuseOnesOldEnoughForAScanToDelete() throws Exception
    {
        final Arena arena = Arena.ofShared();
        resources.add(arena);
        final Path dir = Files.createDirectories(tmp.resolve("spares"));
        final MemorySegment path = arena.allocate(256);
        try (SpareTempFiles young = new SpareTempFiles(libc, dir, 3, Duration.ofMinutes(10), arena, "t", logger))
        {
            awaitReady(young, 3);
            assertThat(young.take(path)).isTrue();
            final Path taken = Path.of(path.getString(0));
            assertThat(taken.getParent()).isEqualTo(dir);
            assertThat(taken.getFileName().toString()).startsWith(".kvtier-spare.").endsWith(PathLayout.TEMP_SUFFIX);
            assertThat(Files.size(taken)).isZero();
            Files.delete(taken); // the taker's file now: it is renamed or unlinked by its write
            awaitReady(young, 3);
        }
        try (var left = Files.list(dir))
        {
            assertThat(left).as("close unlinks the spares not taken").isEmpty();
        }
        try (SpareTempFiles old = new SpareTempFiles(libc, dir, 2, Duration.ofMillis(2), arena, "t", logger))
        {
            awaitReady(old, 2);
            Thread.sleep(20);
            assertThat(old.take(path)).as("older than half of tmp-max-age").isFalse();
            assertThat(Files.exists(Path.of(path.getString(0)))).as("an old spare is unlinked, not left for a scan").isFalse();
        }
        try (var left = Files.list(dir))
        {
            assertThat(left).isEmpty();
        }
    }

    @Test
    void shouldNeverWriteThroughASpareSomeoneReplacedWithASymbolicLink() throws Exception
    {
        final Arena arena = Arena.ofShared();
        resources.add(arena);
        final Path dir = Files.createDirectories(tmp.resolve("linked"));
        final Path victim = Files.createFile(tmp.resolve("victim"));
        final LibcFileStore store = new LibcFileStore(libc, new PathLayout(dir, 0), arena, false, new DirectIo(false, logger),
            new IoErrorLog(logger, 1, TimeUnit.SECONDS));
        try (SpareTempFiles spares = new SpareTempFiles(libc, dir, 3, Duration.ofMinutes(10), arena, "t", logger))
        {
            assertThat(store.useSpares(spares)).isTrue();
            awaitReady(spares, 3);
            try (var ready = Files.list(dir))
            {
                for (final Path spare : ready.toList())
                {
                    Files.delete(spare);
                    Files.createSymbolicLink(spare, victim);
                }
            }
            final MemorySegment page = arena.allocate(SIZE, 4096);
            for (int i = 0; i < 3; i++)
            {
                PageBytes.fill(page, 900 + i);
                assertThat(store.writeTemp(0, 0x77, i, page)).isEqualTo(TierStatus.OK);
                assertThat(store.publishTemp(0)).isEqualTo(TierStatus.OK);
            }
            assertThat(Files.size(victim)).as("the link's target").isZero();
            for (int i = 0; i < 3; i++)
            {
                final Path written = new PathLayout(dir, 0).pagePath(0x77, i);
                assertThat(Files.isSymbolicLink(written)).isFalse();
                PageBytes.assertContent(MemorySegment.ofArray(Files.readAllBytes(written)), 900 + i, "page " + i);
            }
        }
    }

    private static void awaitReady(final SpareTempFiles spares, final int count) throws InterruptedException
    {
        final long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (spares.ready() < count && System.nanoTime() < deadline)
        {
            Thread.sleep(1);
        }
        assertThat(spares.ready()).as("spares made").isEqualTo(count);
    }

    private void roundTrip(final PosixTier tier, final long seed)
    {
        final PageArena arena = arena(8);
        final List<PageKey> keys = List.of(new PageKey(seed, 1), new PageKey(seed, 2), new PageKey(seed, 3));
        final List<MemorySegment> sources = arena.slices(3, SIZE);
        for (int i = 0; i < 3; i++)
        {
            PageBytes.fill(sources.get(i), seed + i);
        }
        assertThat(await(tier, "write", keys, sources, true).statuses()).containsOnly(TierStatus.OK);
        final RecordingTierBatch readBack = await(tier, "read", keys, arena.slices(3, SIZE), false);
        assertThat(readBack.statuses()).containsOnly(TierStatus.OK);
        for (int i = 0; i < 3; i++)
        {
            PageBytes.assertContent(readBack.slice(i), seed + i, "key " + i);
        }
    }

    private static RecordingTierBatch await(final PosixTier tier, final String label, final List<PageKey> keys,
                                            final List<MemorySegment> segments, final boolean write)
    {
        final RecordingTierBatch batch = new RecordingTierBatch(label, keys, segments);
        if (write)
        {
            tier.write(batch);
        }
        else
        {
            tier.read(batch);
        }
        return batch.awaitCompletion(DEADLINE);
    }

    /** Anonymous memory mapped PROT_NONE: a buffer any system call fails on with EFAULT. */
    @SuppressWarnings("restricted")
    private MemorySegment unreadable(final long bytes)
    {
        final Arena arena = Arena.ofConfined();
        final MemorySegment state = arena.allocate(io_uring_h.errno$layout());
        final int protNone = 0;
        final int mapPrivateAnonymous = 0x02 | 0x20;
        final MemorySegment mapping = io_uring_h.mmap(state, MemorySegment.NULL, bytes, protNone, mapPrivateAnonymous, -1, 0);
        assertThat(mapping.address()).as("mmap(PROT_NONE)").isNotEqualTo(-1L);
        resources.add(arena);
        resources.add(() -> io_uring_h.munmap(state, mapping, bytes));
        return mapping.reinterpret(bytes);
    }

    /** Keeps what the tier logs, formatted, so tests can check the reasons it gives. */
    static final class RecordingLogger implements System.Logger
    {
        private final List<Map.Entry<Level, String>> lines = new ArrayList<>();

        synchronized List<String> messages(final Level level)
        {
            return lines.stream().filter(line -> line.getKey() == level).map(Map.Entry::getValue).toList();
        }

        @Override
        public String getName()
        {
            return "recording";
        }

        @Override
        public boolean isLoggable(final Level level)
        {
            return true;
        }

        @Override
        public synchronized void log(final Level level, final ResourceBundle bundle, final String msg, final Throwable thrown)
        {
            lines.add(Map.entry(level, msg + (thrown == null ? "" : " " + thrown)));
        }

        @Override
        public synchronized void log(final Level level, final ResourceBundle bundle, final String format, final Object... params)
        {
            lines.add(Map.entry(level, params == null || params.length == 0 ? format : MessageFormat.format(format, params)));
        }
    }
}
