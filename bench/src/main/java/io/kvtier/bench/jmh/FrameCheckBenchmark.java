package io.kvtier.bench.jmh;

import io.kvtier.engine.pool.PageFrames;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.nativeaccess.libc.PageCopy;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The per-byte work a load costs on the tier's completing thread, one page frame at a time, for each
 * guard against tiers that write late: {@code verifyInPlace} is a trusted tier's load (the frame was
 * read into the pool page; verify it: trailer, key, two CRC32Cs), {@code copyThenVerify} an untrusted
 * tier's (the frame was read into a staging frame; copy it into the pool page, then verify the copy),
 * and {@code recheck} the re-verification of a pinned page on {@code kvtier-reverify} (the payload's
 * CRC32C against the one its load recorded). Each checks that the frame verified.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx1g"})
public class FrameCheckBenchmark
{
    private static final long KEY_HIGH = 0x6672616D65000000L;
    private static final long KEY_LOW = 0x9E3779B97F4A7C15L;

    @Param({"16384", "262144", "2097152"})
    int pageSize;

    private Path poolPath;
    private PagePool pool;
    private PageFrames frames;
    private Arena arena;
    private MemorySegment staging;

    @Setup
    public void setUp() throws Exception
    {
        poolPath = Path.of("/dev/shm/kvtier-jmh-frames-" + ProcessHandle.current().pid());
        pool = PagePool.create(poolPath, pageSize, 2, 64, 1, Duration.ofSeconds(30));
        frames = pool.frames();
        final MemorySegment payload = frames.payload(0);
        for (long i = 0; i < pageSize; i += Long.BYTES)
        {
            payload.set(ValueLayout.JAVA_LONG_UNALIGNED, i, KEY_LOW * i + KEY_HIGH);
        }
        pool.metadata().keyPlain(0, KEY_HIGH, KEY_LOW);
        frames.seal(0, KEY_HIGH, KEY_LOW, pageSize);
        arena = Arena.ofShared();
        staging = arena.allocate(pool.frameLength(), 4096);
        MemorySegment.copy(frames.frame(0), 0, staging, 0, pool.frameLength());
        if (copyThenVerify() != PageFrames.FrameCheck.VALID)
        {
            throw new IllegalStateException("the sealed frame does not verify");
        }
    }

    @TearDown
    public void tearDown() throws Exception
    {
        pool.close();
        arena.close();
        Files.deleteIfExists(poolPath);
    }

    /** @return the frame's check: a trusted tier's load, read straight into the pool page */
    @Benchmark
    public PageFrames.FrameCheck verifyInPlace()
    {
        return check(frames.verify(0, KEY_HIGH, KEY_LOW));
    }

    /** @return the copy's check: an untrusted tier's load, read into staging, copied into the pool page */
    @Benchmark
    public PageFrames.FrameCheck copyThenVerify()
    {
        PageCopy.copy(staging, 0, frames.frame(0), 0, pool.frameLength());
        return check(frames.verify(0, KEY_HIGH, KEY_LOW));
    }

    /** @return whether the payload still matches its load's CRC32C: a sampled re-verification */
    @Benchmark
    public boolean recheck()
    {
        if (!frames.payloadIntact(0))
        {
            throw new IllegalStateException("the page changed");
        }
        return true;
    }

    private static PageFrames.FrameCheck check(final PageFrames.FrameCheck result)
    {
        if (result != PageFrames.FrameCheck.VALID)
        {
            throw new IllegalStateException("the frame did not verify: " + result);
        }
        return result;
    }
}
