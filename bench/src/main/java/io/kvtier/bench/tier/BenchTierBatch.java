package io.kvtier.bench.tier;

import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierStatus;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.Consumer;
import java.util.zip.CRC32C;

/**
 * A reusable {@link TierBatch} as the engine's ({@code TierIoBatch}): keys in parallel arrays, each
 * with a fixed segment of its own, one status per key set once, and a countdown whose last decrement
 * hands the batch back to the benchmark's thread.
 */
final class BenchTierBatch implements TierBatch
{
    private static final VarHandle REMAINING;

    static
    {
        try
        {
            REMAINING = MethodHandles.lookup().findVarHandle(BenchTierBatch.class, "remaining", int.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final long[] keyHigh;
    private final long[] keyLow;
    private final MemorySegment[] segments;
    private final TierStatus[] statuses;
    private final int[] knownCrcs;
    private final Consumer<BenchTierBatch> done;
    private long knownBytes;
    private boolean padding;
    private int size;
    private volatile int remaining;

    /**
     * @param segments one segment per slot, the batch's capacity
     * @param done     called once the last key of a submission completes
     */
    BenchTierBatch(final MemorySegment[] segments, final Consumer<BenchTierBatch> done)
    {
        this.segments = segments.clone();
        this.keyHigh = new long[segments.length];
        this.keyLow = new long[segments.length];
        this.statuses = new TierStatus[segments.length];
        this.knownCrcs = new int[segments.length];
        this.done = done;
    }

    int capacity()
    {
        return segments.length;
    }

    /**
     * Makes the next writes tell the tier what the engine's tell it ({@link TierBatch#knownCrc32cBytes}):
     * the CRC32C of each segment's first bytes as they are now, computed here, off the clock, as the engine
     * has its pages' CRC32C from their commit. The engine's frames end in a 4 KiB trailer block that its
     * payload CRC32C does not cover, so the last 4 KiB of a segment are left for the tier to read; past its trailer
     * that block is padding, as the engine's writes say ({@link TierBatch#trailerBlockIsPadding}).
     *
     * @param write whether the next submissions are writes; otherwise nothing is known
     */
    void describeAsTheEnginesWrites(final boolean write)
    {
        knownBytes = write ? Math.max(0, segments[0].byteSize() - 4096) : 0;
        padding = write;
        final CRC32C crc = new CRC32C();
        for (int i = 0; i < segments.length && knownBytes > 0; i++)
        {
            crc.reset();
            crc.update(segments[i].asSlice(0, knownBytes).asByteBuffer());
            knownCrcs[i] = (int)crc.getValue();
        }
    }

    /** Fills the batch with {@code count} keys and arms the countdown. */
    void load(final long[] highs, final long[] lows, final int from, final int count)
    {
        System.arraycopy(highs, from, keyHigh, 0, count);
        System.arraycopy(lows, from, keyLow, 0, count);
        for (int i = 0; i < count; i++)
        {
            statuses[i] = null;
        }
        size = count;
        REMAINING.setVolatile(this, count);
    }

    /** @return the first key that did not complete OK, as "index: status", or null when all did */
    String firstFailure()
    {
        for (int i = 0; i < size; i++)
        {
            if (statuses[i] != TierStatus.OK)
            {
                return "key " + Long.toHexString(keyHigh[i]) + Long.toHexString(keyLow[i]) + ": " + statuses[i];
            }
        }
        return null;
    }

    MemorySegment slot(final int index)
    {
        return segments[index];
    }

    @Override
    public int size()
    {
        return size;
    }

    @Override
    public long keyHigh(final int index)
    {
        return keyHigh[index];
    }

    @Override
    public long keyLow(final int index)
    {
        return keyLow[index];
    }

    @Override
    public MemorySegment segment(final int index)
    {
        return segments[index];
    }

    @Override
    public long knownCrc32cBytes(final int index)
    {
        return knownBytes;
    }

    @Override
    public int knownCrc32c(final int index)
    {
        return knownCrcs[index];
    }

    @Override
    public boolean trailerBlockIsPadding(final int index)
    {
        return padding;
    }

    @Override
    public void complete(final int index, final TierStatus status)
    {
        if (statuses[index] != null)
        {
            throw new IllegalStateException("key " + index + " completed twice: " + statuses[index] + ", then " + status);
        }
        statuses[index] = status;
        if ((int)REMAINING.getAndAdd(this, -1) == 1)
        {
            done.accept(this);
        }
    }
}
