package io.kvtier.nativeaccess.uring;

import io.kvtier.nativeaccess.libc.LibC;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

class UringTest
{
    private static final int EBADF = 9;
    private static final int EINVAL = 22;

    @TempDir
    Path tmp;

    private LibC libc;

    @BeforeEach
    void requireUring()
    {
        final UringAvailability availability = Uring.availability();
        Assumptions.assumeTrue(availability.available(), () -> "io_uring is unavailable here: " + availability.describe());
        libc = LibC.instance().orElseThrow();
    }

    /** ext4 (or whatever /tmp is) always; tmpfs when /dev/shm exists. */
    static Stream<String> filesystems()
    {
        final List<String> dirs = new ArrayList<>(List.of("tmp"));
        if (Files.isDirectory(Path.of("/dev/shm")) && Files.isWritable(Path.of("/dev/shm")))
        {
            dirs.add("/dev/shm");
        }
        return dirs.stream();
    }

    private final List<Path> madeInShm = new ArrayList<>();

    private Path directory(final String name) throws IOException
    {
        if (name.equals("tmp"))
        {
            return tmp;
        }
        final Path made = Files.createTempDirectory(Path.of(name), "kvtier-uring-test");
        madeInShm.add(made);
        return made;
    }

    /** /dev/shm is memory: what a test made there goes with it. */
    @AfterEach
    void removeWhatWasMadeInShm() throws IOException
    {
        for (final Path dir : madeInShm)
        {
            try (Stream<Path> files = Files.walk(dir))
            {
                for (final Path file : files.sorted(java.util.Comparator.reverseOrder()).toList())
                {
                    Files.deleteIfExists(file);
                }
            }
        }
    }

    @Test
    void shouldSetUpARingAndCompleteNopsWithTheirTags()
    {
        try (Uring ring = Uring.open(8))
        {
            assertThat(ring.sqEntries()).isEqualTo(8);
            assertThat(ring.cqEntries()).isEqualTo(16);
            assertThat(ring.singleMmap()).as("kernel 5.4+ maps both rings at once").isTrue();
            for (long tag = 100; tag < 103; tag++)
            {
                assertThat(ring.prepareNop(tag)).isTrue();
            }
            assertThat(ring.submit(3)).isEqualTo(3);
            final List<Long> tags = new ArrayList<>();
            assertThat(ring.reap((userData, res, flags) ->
            {
                assertThat(res).isZero();
                tags.add(userData);
            })).isEqualTo(3);
            assertThat(tags).containsExactly(100L, 101L, 102L);
            assertThat(ring.inFlight()).isZero();
        }
    }

    @ParameterizedTest
    @MethodSource("filesystems")
    void shouldWriteAndReadBackAFile(final String filesystem) throws IOException
    {
        final Path dir = directory(filesystem);
        try (Arena arena = Arena.ofConfined(); Uring ring = Uring.open(8))
        {
            final MemorySegment source = pattern(arena, 64 * 1024, 7);
            final MemorySegment copy = arena.allocate(source.byteSize(), 4096);
            final int fd = open(arena, dir.resolve("page"), LibC.O_RDWR | LibC.O_CREAT);
            try
            {
                final UringBatch batch = new UringBatch(4);
                final int write = batch.addWrite(fd, source, 0);
                ring.execute(batch);
                assertThat(batch.result(write)).isEqualTo(source.byteSize());
                batch.clear();
                final int sync = batch.addFsync(fd, true);
                ring.execute(batch);
                assertThat(batch.result(sync)).isZero();
                batch.clear();
                final int read = batch.addRead(fd, copy, 0);
                ring.execute(batch);
                assertThat(batch.result(read)).isEqualTo(source.byteSize());
                assertThat(copy.mismatch(source)).isEqualTo(-1);
                assertThat(ring.fixedBufferOperations()).isZero();
            }
            finally
            {
                libc.close(fd);
            }
            assertThat(Files.size(dir.resolve("page"))).isEqualTo(64 * 1024);
        }
    }

    @Test
    void shouldUseFixedBuffersForOperationsInsideARegisteredBuffer() throws IOException
    {
        try (Arena arena = Arena.ofConfined(); Uring ring = Uring.open(8))
        {
            final MemorySegment pool = arena.allocate(64 * 1024, 4096);
            final int registered = ring.registerBuffers(pool);
            Assumptions.assumeTrue(registered == 0, () -> "registering 64 KiB failed (" + registered + "): raise ulimit -l");
            final MemorySegment source = pool.asSlice(0, 16 * 1024);
            fill(source, 3);
            final MemorySegment copy = pool.asSlice(32 * 1024, 16 * 1024);
            final int fd = open(arena, tmp.resolve("fixed"), LibC.O_RDWR | LibC.O_CREAT);
            try
            {
                final UringBatch batch = new UringBatch(2);
                batch.addWrite(fd, source, 4096);
                ring.execute(batch);
                assertThat(batch.result(0)).isEqualTo(16 * 1024);
                batch.clear();
                batch.addRead(fd, copy, 4096);
                ring.execute(batch);
                assertThat(batch.result(0)).isEqualTo(16 * 1024);
                assertThat(copy.mismatch(source)).isEqualTo(-1);
                assertThat(ring.fixedBufferOperations()).isEqualTo(2);
                // A buffer outside every registered one goes as a plain READ.
                assertThat(ring.registeredBufferIndex(arena.allocate(4096).address(), 4096)).isEqualTo(-1);
                assertThat(ring.registeredBufferIndex(pool.address() + 60 * 1024, 8 * 1024)).as("runs past the end").isEqualTo(-1);
                assertThat(ring.unregisterBuffers()).isZero();
            }
            finally
            {
                libc.close(fd);
            }
        }
    }

    @Test
    void shouldReadUsingARegisteredFileIndex() throws IOException
    {
        try (Arena arena = Arena.ofConfined(); Uring ring = Uring.open(8))
        {
            final Path file = tmp.resolve("registered");
            Files.write(file, new byte[] {1, 2, 3, 4});
            final int fd = open(arena, file, LibC.O_RDONLY);
            try
            {
                assertThat(ring.registerFiles(fd)).isZero();
                final UringBatch batch = new UringBatch(1);
                final MemorySegment buffer = arena.allocate(4);
                batch.add(UringBatch.READ, 0, true, buffer.address(), 4, 0);
                ring.execute(batch);
                assertThat(batch.result(0)).isEqualTo(4);
                assertThat(buffer.toArray(ValueLayout.JAVA_BYTE)).containsExactly(1, 2, 3, 4);
                assertThat(ring.unregisterFiles()).isZero();
            }
            finally
            {
                libc.close(fd);
            }
        }
    }

    @Test
    void shouldEndAReadShortAtEndOfFileWithTheBytesThere() throws IOException
    {
        try (Arena arena = Arena.ofConfined(); Uring ring = Uring.open(4))
        {
            final Path file = tmp.resolve("short");
            final byte[] content = new byte[10_000];
            for (int i = 0; i < content.length; i++)
            {
                content[i] = (byte)(i * 31);
            }
            Files.write(file, content);
            final int fd = open(arena, file, LibC.O_RDONLY);
            try
            {
                final MemorySegment buffer = arena.allocate(16 * 1024);
                final UringBatch batch = new UringBatch(2);
                final int whole = batch.addRead(fd, buffer, 0);
                final int pastEnd = batch.addRead(fd, arena.allocate(4096), 20_000);
                ring.execute(batch);
                assertThat(batch.result(whole)).isEqualTo(10_000);
                assertThat(batch.result(pastEnd)).isZero();
                assertThat(buffer.asSlice(0, 10_000).toArray(ValueLayout.JAVA_BYTE)).isEqualTo(content);
            }
            finally
            {
                libc.close(fd);
            }
        }
    }

    @Test
    void shouldCarryOnTransfersThatCompleteInPartsUntilEveryByteIsMoved() throws IOException
    {
        // Each SQE asks for at most 4 KiB, so a 64 KiB transfer completes short 15 times, as on a busy
        // pipe or a signal-interrupted read: the rest must be resubmitted from where it stopped.
        try (Arena arena = Arena.ofConfined(); Uring ring = Uring.open(4, 4096))
        {
            final MemorySegment source = pattern(arena, 64 * 1024, 11);
            final MemorySegment copy = arena.allocate(source.byteSize());
            final int fd = open(arena, tmp.resolve("parts"), LibC.O_RDWR | LibC.O_CREAT);
            try
            {
                final UringBatch batch = new UringBatch(1);
                batch.addWrite(fd, source, 0);
                ring.execute(batch);
                assertThat(batch.result(0)).isEqualTo(64 * 1024);
                assertThat(batch.resubmissions()).isEqualTo(15);
                batch.clear();
                batch.addRead(fd, copy, 0);
                ring.execute(batch);
                assertThat(batch.result(0)).isEqualTo(64 * 1024);
                assertThat(copy.mismatch(source)).isEqualTo(-1);
            }
            finally
            {
                libc.close(fd);
            }
        }
    }

    @Test
    void shouldRunABatchOf64LargerThanTheRings() throws IOException
    {
        try (Arena arena = Arena.ofConfined(); Uring ring = Uring.open(8))
        {
            final int count = 64;
            final int page = 4096;
            final MemorySegment source = arena.allocate((long)count * page, page);
            for (int i = 0; i < count; i++)
            {
                fill(source.asSlice((long)i * page, page), i);
            }
            final MemorySegment copy = arena.allocate(source.byteSize(), page);
            final int fd = open(arena, tmp.resolve("batch"), LibC.O_RDWR | LibC.O_CREAT);
            try
            {
                final UringBatch batch = new UringBatch(count);
                for (int i = count - 1; i >= 0; i--)
                {
                    batch.addWrite(fd, source.asSlice((long)i * page, page), (long)i * page);
                }
                ring.execute(batch);
                for (int i = 0; i < count; i++)
                {
                    assertThat(batch.result(i)).as("write %d", i).isEqualTo(page);
                }
                batch.clear();
                for (int i = 0; i < count; i++)
                {
                    batch.addRead(fd, copy.asSlice((long)i * page, page), (long)i * page);
                }
                ring.execute(batch);
                for (int i = 0; i < count; i++)
                {
                    assertThat(batch.result(i)).as("read %d", i).isEqualTo(page);
                }
                assertThat(copy.mismatch(source)).isEqualTo(-1);
                assertThat(ring.inFlight()).isZero();
            }
            finally
            {
                libc.close(fd);
            }
        }
    }

    @Test
    void shouldReportAFailedOperationAsItsOwnNegativeErrnoWhileTheOthersSucceed() throws IOException
    {
        try (Arena arena = Arena.ofConfined(); Uring ring = Uring.open(8))
        {
            final int good = open(arena, tmp.resolve("good"), LibC.O_RDWR | LibC.O_CREAT);
            final int closed = open(arena, tmp.resolve("closed"), LibC.O_RDWR | LibC.O_CREAT);
            libc.close(closed);
            try
            {
                final MemorySegment buffer = pattern(arena, 4096, 5);
                final UringBatch batch = new UringBatch(3);
                final int ok = batch.addWrite(good, buffer, 0);
                final int badWrite = batch.addWrite(closed, buffer, 0);
                final int badRead = batch.addRead(closed, arena.allocate(4096), 0);
                ring.execute(batch);
                assertThat(batch.result(ok)).isEqualTo(4096);
                assertThat(batch.result(badWrite)).isEqualTo(-EBADF);
                assertThat(batch.result(badRead)).isEqualTo(-EBADF);
            }
            finally
            {
                libc.close(good);
            }
        }
    }

    @Test
    void shouldReportAFullDeviceAsEnospcForThatWriteOnly() throws IOException
    {
        Assumptions.assumeTrue(Files.isWritable(Path.of("/dev/full")), "no /dev/full to write to");
        try (Arena arena = Arena.ofConfined(); Uring ring = Uring.open(4))
        {
            final int full = libc.open(arena.allocateFrom("/dev/full"), LibC.O_WRONLY | LibC.O_CLOEXEC, 0);
            final int good = open(arena, tmp.resolve("beside-full"), LibC.O_RDWR | LibC.O_CREAT);
            try
            {
                final MemorySegment buffer = pattern(arena, 4096, 9);
                final UringBatch batch = new UringBatch(2);
                final int toFull = batch.addWrite(full, buffer, 0);
                final int fine = batch.addWrite(good, buffer, 0);
                ring.execute(batch);
                assertThat(batch.result(toFull)).isEqualTo(-LibC.ENOSPC);
                assertThat(batch.result(fine)).isEqualTo(4096);
            }
            finally
            {
                libc.close(full);
                libc.close(good);
            }
        }
    }

    @Test
    void shouldReportAMisalignedDirectReadAsEinval() throws IOException
    {
        try (Arena arena = Arena.ofConfined(); Uring ring = Uring.open(4))
        {
            final Path file = tmp.resolve("direct");
            Files.write(file, new byte[8192]);
            final int fd = libc.open(arena.allocateFrom(file.toString()), LibC.O_RDONLY | LibC.O_DIRECT, 0);
            Assumptions.assumeTrue(fd >= 0, () -> tmp + " does not take O_DIRECT: " + libc.strerror(fd));
            try
            {
                final DirectIoAlignment alignment = Uring.directIoAlignment(fd);
                assertThat(alignment.supported()).isTrue();
                assertThat(Long.bitCount(alignment.memory())).isOne();
                assertThat(Long.bitCount(alignment.offset())).isOne();
                final MemorySegment aligned = arena.allocate(8192 + 4096, 4096);
                final UringBatch batch = new UringBatch(2);
                final int misaligned = batch.addRead(fd, aligned.asSlice(1, 4096), 0);
                final int fine = batch.addRead(fd, aligned.asSlice(4096, 4096), 4096);
                ring.execute(batch);
                assertThat(batch.result(misaligned)).isEqualTo(-EINVAL);
                assertThat(batch.result(fine)).isEqualTo(4096);
            }
            finally
            {
                libc.close(fd);
            }
        }
    }

    @Test
    void shouldCollectCompletionsTheKernelKeptAsideWhenTheCqRingOverflowed()
    {
        try (Uring ring = Uring.open(4))
        {
            assertThat(ring.cqEntries()).isEqualTo(8);
            long tag = 0;
            for (int round = 0; round < 3; round++)
            {
                for (int i = 0; i < 4; i++)
                {
                    assertThat(ring.prepareNop(tag++)).isTrue();
                }
                assertThat(ring.submit(0)).isEqualTo(4);
            }
            assertThat(ring.cqOverflowed()).as("12 completions, 8 slots").isTrue();
            final List<Long> tags = new ArrayList<>();
            assertThat(ring.reap((userData, res, flags) -> tags.add(userData))).isEqualTo(12);
            assertThat(tags).containsExactlyInAnyOrder(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L);
            assertThat(ring.cqOverflowed()).isFalse();
            assertThat(ring.inFlight()).isZero();
        }
    }

    @Test
    void shouldExecuteBatchesWithoutAllocatingOnceWarm() throws IOException
    {
        final var threads = (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        try (Arena arena = Arena.ofConfined(); Uring ring = Uring.open(8))
        {
            final MemorySegment buffer = pattern(arena, 4096, 1);
            final int fd = open(arena, tmp.resolve("steady"), LibC.O_RDWR | LibC.O_CREAT);
            try
            {
                final UringBatch batch = new UringBatch(4);
                final long self = Thread.currentThread().threadId();
                boolean clean = false;
                // The errno-capturing downcalls allocate until C2 has compiled them (a few hundred thousand
                // calls here); a loaded machine's JIT may allocate in some windows too. One clean window
                // shows the path itself allocates nothing.
                for (int window = 0; window < 600 && !clean; window++)
                {
                    final long before = threads.getThreadAllocatedBytes(self);
                    for (int round = 0; round < 1000; round++)
                    {
                        batch.clear();
                        batch.addWrite(fd, buffer, 0);
                        batch.addRead(fd, buffer, 0);
                        ring.execute(batch);
                    }
                    clean = threads.getThreadAllocatedBytes(self) == before;
                }
                assertThat(clean).as("a window of 1,000 executed batches that allocated nothing").isTrue();
            }
            finally
            {
                libc.close(fd);
            }
        }
    }

    @Test
    void shouldTellWhyAndHowToEnableWhenTheKernelRefuses()
    {
        final UringAvailability nosys = UringProbe.classify(38, "io_uring_setup(2) failed: Function not implemented");
        assertThat(nosys.available()).isFalse();
        assertThat(nosys.reason()).contains("no io_uring");
        assertThat(nosys.remedy()).contains("CONFIG_IO_URING");
        final UringAvailability perm = UringProbe.classify(1, "io_uring_setup(2) failed: Operation not permitted");
        assertThat(perm.reason()).contains("EPERM").contains("kernel.io_uring_disabled=");
        assertThat(perm.remedy()).contains("sysctl -w kernel.io_uring_disabled=0");
        assertThat(perm.describe()).contains("to enable:");
        assertThat(UringAvailability.AVAILABLE.describe()).isEqualTo("available");
    }

    private int open(final Arena arena, final Path file, final int flags)
    {
        final int fd = libc.open(arena.allocateFrom(file.toString()), flags | LibC.O_CLOEXEC, 0644);
        assertThat(fd).as("open %s: %s", file, fd < 0 ? libc.strerror(fd) : "").isNotNegative();
        return fd;
    }

    private static MemorySegment pattern(final Arena arena, final long bytes, final int seed)
    {
        final MemorySegment segment = arena.allocate(bytes, 4096);
        fill(segment, seed);
        return segment;
    }

    private static void fill(final MemorySegment segment, final int seed)
    {
        for (long i = 0; i < segment.byteSize(); i++)
        {
            segment.set(ValueLayout.JAVA_BYTE, i, (byte)(i * 131 + seed));
        }
    }
}
