package io.kvtier.bench.jmh;

import io.kvtier.nativeaccess.libc.LibC;
import io.kvtier.spi.PageKey;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.StorageTierProvider;
import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierContext;
import io.kvtier.spi.TierStatus;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * L3 backup throughput: batches of {@value #BATCH} new page frames written through the POSIX tier
 * (temp file, {@code pwrite}, {@code close}, atomic {@code rename}), against raw baselines that make
 * the same files with the same libc calls and no tier at all. Scores are pages per second (one
 * operation is one page); MB/s is the score times {@code frameSize}.
 *
 * <p>The files stay bounded: after each batch, outside the measured time, the oldest batch is removed
 * once more than 1 GiB (at most 65,536 files) is on disk, as a tier at its capacity evicts. Keys are
 * hashes, so the files spread over the fan-out directories as real pages do. {@code root} picks the
 * filesystem: check it with {@code df} ({@code /var/tmp} is a disk on most machines, {@code /dev/shm}
 * is tmpfs). The tier's directory and the baselines' are siblings under it, both with
 * {@code fanoutLevels} fan-out levels (1 or 2, default 2); the baselines' fan-out directories all exist
 * before the first write.
 *
 * <p>The baselines:
 * <ul>
 *   <li>{@code baselineCreateWriteRename}: the tier's own sequence, {@code open(O_CREAT|O_EXCL)} of a
 *       temp name beside the page, {@code pwrite}, {@code close}, {@code rename} over the page's name;
 *       the floor of any atomic one-file-per-page store on this filesystem.</li>
 *   <li>{@code baselineCreateWriteRenameFixedTemp}: the same with one temp name per directory reused
 *       for every write (what "reusing temp names" would save).</li>
 *   <li>{@code baselineCreateWrite}: {@code open(O_CREAT|O_EXCL)} of the page's own name, {@code pwrite},
 *       {@code close}: no rename, so not atomic (a reader could see a partial file); what the rename costs.</li>
 *   <li>{@code baselineRecycleWriteRename}: the tier's sequence, but the files trimmed away are renamed to
 *       spare names instead of unlinked, and a write reuses a spare ({@code open} without
 *       {@code O_CREAT}, {@code pwrite} over the old bytes, {@code close}, {@code rename}): no inode is
 *       allocated or freed in steady state. What recycling evicted files would save a bounded tier.</li>
 * </ul>
 *
 * <p>Setup makes both trees (the tier's fan-out directories by its own start-up thread, awaited), then
 * runs {@code sync}, so the directories' writeback is not measured.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@OperationsPerInvocation(PosixTierWriteBenchmark.BATCH)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx1g"})
public class PosixTierWriteBenchmark
{
    static final int BATCH = 64;
    private static final long WINDOW_BYTES = 1L << 30;
    private static final int MAX_WINDOW_FILES = 1 << 16;
    private static final int FILE_MODE = 0644;
    private static final byte[] PAGE_SUFFIX = ".kvp".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SPARE_SUFFIX = ".spare.tmp".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

    @Param({"16384", "262144"})
    int frameSize;

    @Param({"/var/tmp", "/dev/shm"})
    String root;

    @Param({"1"})
    int ioThreads;

    /** Fan-out levels of the tier and of the baselines' tree (1 or 2). */
    @Param({"2"})
    int fanoutLevels;

    private Path base;
    private StorageTier tier;
    private Arena arena;
    private MemorySegment[] frames;
    private BenchBatch writeBatch;
    private BenchBatch removeBatch;
    private LibC libc;
    private byte[] rawDirBytes;
    private byte[] path;
    private MemorySegment pagePath;
    private MemorySegment tempPath;
    private long token;
    private int window;
    private long written;
    private long removed;
    private boolean usedTier;
    private boolean recycling;
    private long[] spares;
    private int spareCount;
    private MemorySegment sparePath;

    @Setup(Level.Trial)
    public void setUp() throws IOException
    {
        base = Files.createTempDirectory(Path.of(root), "kvtier-jmh-write-");
        try
        {
            prepare();
        }
        catch (final IOException | RuntimeException ex)
        {
            // JMH skips the teardown of a failed setup: leave nothing behind.
            if (tier != null)
            {
                tier.close();
            }
            BenchEngines.deleteTree(base);
            throw ex;
        }
    }

    private void prepare() throws IOException
    {
        final Path tierDir = base.resolve("tier");
        final Path rawDir = base.resolve("raw");
        Files.createDirectory(rawDir);
        for (int i = 0; i < 256; i++)
        {
            final Path level1 = Files.createDirectory(rawDir.resolve(hex2(i)));
            for (int j = 0; fanoutLevels > 1 && j < 256; j++)
            {
                Files.createDirectory(level1.resolve(hex2(j)));
            }
        }
        final StorageTierProvider provider = ServiceLoader.load(StorageTierProvider.class).stream()
            .map(ServiceLoader.Provider::get).filter(p -> p.type().equals("posix")).findFirst()
            .orElseThrow(() -> new IllegalStateException("no posix tier on the class path"));
        final long objectSize = frameSize;
        tier = provider.create(new TierConfig("bench", Map.of(
            "dir", tierDir.toString(),
            "io-threads", Integer.toString(ioThreads),
            "fanout-levels", Integer.toString(fanoutLevels))), new TierContext()
            {
                @Override
                public String tierName()
                {
                    return "bench";
                }

                @Override
                public long objectSize()
                {
                    return objectSize;
                }
            });
        window = (int)Math.min(MAX_WINDOW_FILES, WINDOW_BYTES / frameSize);
        window -= window % BATCH;
        arena = Arena.ofShared();
        frames = new MemorySegment[BATCH];
        for (int i = 0; i < BATCH; i++)
        {
            frames[i] = arena.allocate(frameSize, 4096);
            for (long at = 0; at < frameSize; at += 8)
            {
                frames[i].set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, at, ThreadLocalRandom.current().nextLong());
            }
        }
        writeBatch = new BenchBatch(frames);
        removeBatch = new BenchBatch(new MemorySegment[BATCH]);
        libc = LibC.instance().orElseThrow(() -> new IllegalStateException("the baselines need native access to libc"));
        rawDirBytes = rawDir.toString().getBytes(StandardCharsets.UTF_8);
        path = new byte[rawDirBytes.length + 3 * fanoutLevels + 1 + PageKey.HEX_LENGTH + PAGE_SUFFIX.length + 32];
        // The longest suffix: a temp name's 30 bytes, a spare's 10.
        pagePath = arena.allocate(path.length + 1);
        tempPath = arena.allocate(path.length + 1);
        sparePath = arena.allocate(path.length + 1);
        spares = new long[window + BATCH];
        token = ThreadLocalRandom.current().nextLong();
        awaitFanout(tierDir, fanoutLevels);
        sync();
        // -Dkvtier.bench.settle-seconds=40 (with -jvmArgsAppend): on ext4 without a journal, inode
        // allocation skips inodes freed in the last seconds, and the previous trial just freed many.
        LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(Long.getLong("kvtier.bench.settle-seconds", 0)));
    }

    /** Waits for the tier's start-up thread: its marker, or no directory within a second (a tier that makes them on demand). */
    private static void awaitFanout(final Path tierDir, final int levels) throws IOException
    {
        final long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        final long quiet = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        while (!Files.exists(tierDir.resolve(".kvtier-fanout-" + levels)) && System.nanoTime() < deadline)
        {
            if (System.nanoTime() > quiet && !Files.exists(tierDir.resolve("00")))
            {
                return;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
    }

    private static void sync()
    {
        try
        {
            new ProcessBuilder("sync").inheritIO().start().waitFor();
        }
        catch (final IOException ex)
        {
            // Not on the path: the directories' writeback then overlaps the first iterations.
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException
    {
        tier.close();
        arena.close();
        BenchEngines.deleteTree(base);
    }

    /** Outside the measured time: keeps at most the window's worth of files, as a tier at capacity evicts. */
    @TearDown(Level.Invocation)
    public void trim()
    {
        while (written - removed > window)
        {
            if (usedTier)
            {
                removeBatch.prepare(removed);
                tier.remove(removeBatch);
                removeBatch.await();
            }
            else if (recycling)
            {
                for (int i = 0; i < BATCH; i++)
                {
                    final int length = preparePagePath(removed + i);
                    prepareSparePath(length);
                    check(libc.rename(pagePath, sparePath), "rename to a spare");
                    spares[spareCount++] = removed + i;
                }
            }
            else
            {
                for (int i = 0; i < BATCH; i++)
                {
                    preparePagePath(removed + i);
                    libc.unlink(pagePath);
                }
            }
            removed += BATCH;
        }
    }

    /** @return the batch's last status, OK */
    @Benchmark
    public TierStatus tierWrite()
    {
        usedTier = true;
        writeBatch.prepare(written);
        tier.write(writeBatch);
        writeBatch.await();
        written += BATCH;
        for (int i = 0; i < BATCH; i++)
        {
            if (writeBatch.status(i) != TierStatus.OK)
            {
                throw new IllegalStateException("write of key " + i + " completed " + writeBatch.status(i));
            }
        }
        return writeBatch.status(BATCH - 1);
    }

    /** @return bytes written with the tier's own system calls */
    @Benchmark
    public long baselineCreateWriteRename()
    {
        long bytes = 0;
        for (int i = 0; i < BATCH; i++)
        {
            final int length = preparePagePath(written + i);
            prepareTempPath(length, written + i);
            bytes += createAndWrite(tempPath, frames[i]);
            check(libc.rename(tempPath, pagePath), "rename");
        }
        written += BATCH;
        return bytes;
    }

    /** @return bytes written with one reused temp name per directory */
    @Benchmark
    public long baselineCreateWriteRenameFixedTemp()
    {
        long bytes = 0;
        for (int i = 0; i < BATCH; i++)
        {
            final int length = preparePagePath(written + i);
            prepareFixedTempPath(length);
            bytes += createAndWrite(tempPath, frames[i]);
            check(libc.rename(tempPath, pagePath), "rename");
        }
        written += BATCH;
        return bytes;
    }

    /** @return bytes written into recycled files where there are spares, else into new ones */
    @Benchmark
    public long baselineRecycleWriteRename()
    {
        recycling = true;
        long bytes = 0;
        for (int i = 0; i < BATCH; i++)
        {
            if (spareCount > 0)
            {
                final int spareLength = preparePagePath(spares[--spareCount]);
                prepareSparePath(spareLength);
                preparePagePath(written + i);
                final int fd = check(libc.open(sparePath, LibC.O_WRONLY | LibC.O_CLOEXEC, 0), "open a spare");
                bytes += libc.pwriteFully(fd, frames[i], 0);
                check(libc.close(fd), "close");
                check(libc.rename(sparePath, pagePath), "rename");
            }
            else
            {
                final int length = preparePagePath(written + i);
                prepareTempPath(length, written + i);
                bytes += createAndWrite(tempPath, frames[i]);
                check(libc.rename(tempPath, pagePath), "rename");
            }
        }
        written += BATCH;
        return bytes;
    }

    /** @return bytes written straight to the page's name, with no rename (not atomic) */
    @Benchmark
    public long baselineCreateWrite()
    {
        long bytes = 0;
        for (int i = 0; i < BATCH; i++)
        {
            preparePagePath(written + i);
            bytes += createAndWrite(pagePath, frames[i]);
        }
        written += BATCH;
        return bytes;
    }

    private long createAndWrite(final MemorySegment name, final MemorySegment frame)
    {
        final int fd = check(libc.open(name, LibC.O_WRONLY | LibC.O_CREAT | LibC.O_EXCL | LibC.O_CLOEXEC, FILE_MODE), "open");
        final long bytes = libc.pwriteFully(fd, frame, 0);
        check(libc.close(fd), "close");
        return bytes;
    }

    private static int check(final int rc, final String call)
    {
        if (rc < 0)
        {
            throw new IllegalStateException(call + " failed: errno " + -rc);
        }
        return rc;
    }

    /** Page i's key: SplitMix64 of its number, so keys spread over the fan-out like hashes. */
    static long keyHigh(final long i)
    {
        return mix(i * 2 + 1);
    }

    static long keyLow(final long i)
    {
        return mix(i * 2 + 2);
    }

    private static long mix(final long seed)
    {
        long z = seed * 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** The tier's layout under the baselines' directory: {@code raw/<hh>/<hh>/<32 hex>.kvp}. */
    private int preparePagePath(final long i)
    {
        System.arraycopy(rawDirBytes, 0, path, 0, rawDirBytes.length);
        final int nameOffset = rawDirBytes.length + 3 * fanoutLevels + 1;
        PageKey.writeHex(keyHigh(i), keyLow(i), path, nameOffset);
        for (int level = 0; level < fanoutLevels; level++)
        {
            final int at = rawDirBytes.length + 3 * level;
            path[at] = '/';
            path[at + 1] = path[nameOffset + 2 * level];
            path[at + 2] = path[nameOffset + 2 * level + 1];
        }
        path[nameOffset - 1] = '/';
        System.arraycopy(PAGE_SUFFIX, 0, path, nameOffset + PageKey.HEX_LENGTH, PAGE_SUFFIX.length);
        final int length = nameOffset + PageKey.HEX_LENGTH + PAGE_SUFFIX.length;
        LibC.putCString(pagePath, 0, path, length);
        return length;
    }

    /** {@code <page>.spare.tmp}: where a trimmed page's file waits to be reused. */
    private void prepareSparePath(final int pageLength)
    {
        System.arraycopy(SPARE_SUFFIX, 0, path, pageLength, SPARE_SUFFIX.length);
        LibC.putCString(sparePath, 0, path, pageLength + SPARE_SUFFIX.length);
    }

    /** {@code <page>.<16 hex token><8 hex counter>.tmp}, like the tier's temp names. */
    private void prepareTempPath(final int pageLength, final long counter)
    {
        int at = pageLength;
        path[at++] = '.';
        at = writeHex(token, 16, at);
        at = writeHex(counter, 8, at);
        path[at++] = '.';
        path[at++] = 't';
        path[at++] = 'm';
        path[at++] = 'p';
        LibC.putCString(tempPath, 0, path, at);
    }

    /**
     * {@code <page's directory>/.w<16 hex token>.tmp}: the same name for every write into that directory.
     * Overwrites the page's name in the byte buffer, which {@link #preparePagePath} already copied out.
     */
    private void prepareFixedTempPath(final int pageLength)
    {
        int at = pageLength - PageKey.HEX_LENGTH - PAGE_SUFFIX.length;
        path[at++] = '.';
        path[at++] = 'w';
        at = writeHex(token, 16, at);
        path[at++] = '.';
        path[at++] = 't';
        path[at++] = 'm';
        path[at++] = 'p';
        LibC.putCString(tempPath, 0, path, at);
    }

    private int writeHex(final long value, final int digits, final int offset)
    {
        for (int d = 0; d < digits; d++)
        {
            path[offset + d] = HEX[(int)(value >>> (4 * (digits - 1 - d))) & 0xF];
        }
        return offset + digits;
    }

    private static String hex2(final int value)
    {
        return new String(new byte[] {HEX[value >>> 4], HEX[value & 0xF]}, StandardCharsets.US_ASCII);
    }

    /** A reusable batch of consecutive keys; the benchmark thread parks until the tier completes it. */
    private static final class BenchBatch implements TierBatch
    {
        private static final VarHandle REMAINING;

        static
        {
            try
            {
                REMAINING = MethodHandles.lookup().findVarHandle(BenchBatch.class, "remaining", int.class);
            }
            catch (final ReflectiveOperationException ex)
            {
                throw new ExceptionInInitializerError(ex);
            }
        }

        private final MemorySegment[] segments;
        private final TierStatus[] statuses;
        private long first;
        private volatile int remaining;
        private volatile Thread waiter;

        BenchBatch(final MemorySegment[] segments)
        {
            this.segments = segments;
            this.statuses = new TierStatus[segments.length];
        }

        void prepare(final long firstKey)
        {
            first = firstKey;
            waiter = Thread.currentThread();
            remaining = segments.length;
        }

        void await()
        {
            for (int spins = 0; remaining != 0; spins++)
            {
                if (spins < 256)
                {
                    Thread.onSpinWait();
                }
                else
                {
                    LockSupport.park(this);
                }
            }
        }

        TierStatus status(final int index)
        {
            return statuses[index];
        }

        @Override
        public int size()
        {
            return segments.length;
        }

        @Override
        public long keyHigh(final int index)
        {
            return PosixTierWriteBenchmark.keyHigh(first + index);
        }

        @Override
        public long keyLow(final int index)
        {
            return PosixTierWriteBenchmark.keyLow(first + index);
        }

        @Override
        public MemorySegment segment(final int index)
        {
            final MemorySegment segment = segments[index];
            return segment == null ? MemorySegment.NULL : segment;
        }

        @Override
        public void complete(final int index, final TierStatus status)
        {
            statuses[index] = status;
            if ((int)REMAINING.getAndAdd(this, -1) == 1)
            {
                LockSupport.unpark(waiter);
            }
        }
    }
}
