package io.kvtier.bench.jmh;

import io.kvtier.spi.TrailerBlock;
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
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * What a tier paid to keep an engine frame compactly before SPI 1.3 let the engine declare its trailer block's
 * padding ({@code TierBatch.trailerBlockIsPadding}; {@code docs/PERFORMANCE.md}, the demo, round thirteen):
 * {@link TrailerBlock#holdsOnlyATrailer}, which reads the 4,024 bytes past the trailer to see they are zeros, against,
 * in the same run, reading the 72-byte trailer alone, which a compact tier copies either way. The frames are 16 KiB
 * pages with their 4 KiB trailer blocks in a region of {@code regionMiB}, visited in a random order: at 16 MiB they
 * stay near the caches, at 512 MiB each frame's block is cold, as in a pool the clients' byte work goes through.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx1g"})
public class TrailerBlockCheckBenchmark
{
    private static final long PAYLOAD = 16 * 1024;
    private static final long FRAME = PAYLOAD + TrailerBlock.BYTES;

    @Param({"16", "512"})
    public long regionMiB;

    private Arena arena;
    private MemorySegment[] frames;
    private int[] order;
    private int next;

    @Setup
    public void setUp()
    {
        arena = Arena.ofShared();
        final int count = (int)((regionMiB << 20) / FRAME);
        final MemorySegment region = arena.allocate(count * FRAME, 4096);
        frames = new MemorySegment[count];
        order = new int[count];
        final SplittableRandom random = new SplittableRandom(21);
        for (int i = 0; i < count; i++)
        {
            frames[i] = region.asSlice(i * FRAME, FRAME);
            frames[i].asSlice(0, PAYLOAD).fill((byte)(i | 1));
            // A trailer of non-zero bytes, then the block's zeros (the arena's).
            frames[i].asSlice(PAYLOAD, TrailerBlock.TRAILER_BYTES).fill((byte)0x5A);
            order[i] = i;
        }
        for (int i = count - 1; i > 0; i--)
        {
            final int j = random.nextInt(i + 1);
            final int swap = order[i];
            order[i] = order[j];
            order[j] = swap;
        }
    }

    @TearDown
    public void tearDown()
    {
        arena.close();
    }

    private MemorySegment nextFrame()
    {
        final MemorySegment frame = frames[order[next]];
        next = next + 1 == order.length ? 0 : next + 1;
        return frame;
    }

    /** @return true: the check a compact tier made of every frame before SPI 1.3 */
    @Benchmark
    public boolean zerosPastTheTrailer()
    {
        if (!TrailerBlock.holdsOnlyATrailer(nextFrame(), PAYLOAD))
        {
            throw new IllegalStateException("an engine frame's trailer block was not its trailer and zeros");
        }
        return true;
    }

    /** @return the trailer's bytes folded: the baseline, what a compact tier reads of the block when the padding is declared */
    @Benchmark
    public long trailerAlone()
    {
        final MemorySegment frame = nextFrame();
        long folded = 0;
        for (long at = PAYLOAD; at < PAYLOAD + TrailerBlock.TRAILER_BYTES; at += Long.BYTES)
        {
            folded ^= frame.get(ValueLayout.JAVA_LONG_UNALIGNED, at);
        }
        if (folded != 0x5A5A5A5A5A5A5A5AL)
        {
            throw new IllegalStateException("the trailer read back as " + Long.toHexString(folded));
        }
        return folded;
    }
}
