package io.kvtier.bench.tier;

import io.kvtier.client.pool.PageFrameDescriptor;
import io.kvtier.spi.ConfigValues;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.TierContext;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Drives one tier through its SPI the way the engine's {@code TierIo} does, for {@link TierBenchmark}:
 * the buffers of the keys in flight (offered to the tier as transfer memory, as the engine offers its
 * pool), new random keys, reusable batches refilled as soon as their last key completes, writes that
 * tell the tier the CRC32C of each page's payload as the engine's do ({@link BenchTierBatch#describeAsTheEnginesWrites},
 * computed before the clock starts, as the engine has it from the page's commit), and the check that
 * what was read back is what was written. Kept apart from {@link TierBenchmark}, which decides what
 * to measure, in which order against the baseline, and what the figures are.
 */
final class TierDriver
{
    /** Bytes of a version 2 trailer: what an engine frame's last block holds before its zeros. */
    static final int TRAILER_BYTES = PageFrameDescriptor.TRAILER_CRC_OFFSET + 8;

    private static final long COMPLETION_TIMEOUT_SECONDS = 120;
    /** Polls before the first yield, as the engine thread's {@code backoff} idle strategy spins. */
    static final int WAIT_SPINS = 100;
    /** Yields before the wait parks, as {@code backoff} yields before it sleeps. */
    static final int WAIT_YIELDS = 100;
    /** What the JSON's {@code caller_wait} and the text say the caller does between batches. */
    static final String WAIT_DESCRIPTION = "the caller waits for each batch as the engine thread's backoff does: " + WAIT_SPINS
        + " polls, " + WAIT_YIELDS + " yields, then it parks until the tier hands the batch back";

    private TierDriver()
    {
    }

    /**
     * @param objectSize     the tier's object size: a page's frame
     * @param transferMemory the slots' memory
     * @return what the engine offers a tier, including its page memory as transfer memory (the slots stand for the pool)
     */
    static TierContext context(final long objectSize, final MemorySegment transferMemory)
    {
        return new TierContext()
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

            @Override
            public java.util.Optional<MemorySegment> transferMemory()
            {
                return java.util.Optional.of(transferMemory);
            }
        };
    }

    /** The keys-in-flight buffers, allocated before the tier so that it can be offered them as transfer memory. */
    static final class SlotRegion implements AutoCloseable
    {
        final MemorySegment memory;
        final MemorySegment[] slots;

        /**
         * @param arena    what allocates the region and frees it
         * @param pageSize one slot's bytes
         * @param count    slots, one per key in flight
         * @param random   the source of the bytes every slot starts with
         */
        SlotRegion(final Arena arena, final long pageSize, final int count, final SplittableRandom random)
        {
            final long frame = PageFrameDescriptor.frameLength(pageSize);
            this.memory = arena.allocate(frame * count, 4096);
            this.slots = slots(memory, pageSize, count, random);
        }

        /** Nothing to free: the arena frees the region; closable so a try-with-resources orders it before the tier it is offered to. */
        @Override
        public void close()
        {
            // the arena frees it
        }
    }

    /**
     * One 4 KiB-aligned buffer per key in flight, each holding the same engine-shaped page frame: a page of random
     * bytes, then its 4 KiB trailer block, a trailer's worth of random bytes and zeros, as every object the engine
     * hands a tier is ({@code PageFrameDescriptor}).
     */
    private static MemorySegment[] slots(final MemorySegment region, final long pageSize, final int count, final SplittableRandom random)
    {
        final long frame = PageFrameDescriptor.frameLength(pageSize);
        final MemorySegment[] slots = new MemorySegment[count];
        for (int i = 0; i < count; i++)
        {
            slots[i] = region.asSlice(i * frame, frame);
        }
        for (long at = 0; at < pageSize + TRAILER_BYTES; at += Long.BYTES)
        {
            slots[0].set(ValueLayout.JAVA_LONG_UNALIGNED, at, random.nextLong());
        }
        for (int i = 1; i < count; i++)
        {
            slots[i].copyFrom(slots[0]);
        }
        return slots;
    }

    /** @return {@code count} new random keys, as {@code {high halves, low halves}}, so each write makes a new object */
    static long[][] keys(final SplittableRandom random, final int count)
    {
        final long[][] keys = new long[2][count];
        for (int i = 0; i < count; i++)
        {
            keys[0][i] = random.nextLong();
            keys[1][i] = random.nextLong();
        }
        return keys;
    }

    /**
     * Writes, reads or removes every key through the tier with {@code depth} keys in flight, in batches of at
     * most {@code maxBatch}; each batch goes back out as soon as its last key completes.
     *
     * @param tier     the tier
     * @param op       write, read or remove
     * @param keys     the keys, as {@link #keys} makes them
     * @param depth    keys in flight
     * @param maxBatch most keys per batch
     * @param slots    one buffer per key in flight
     * @return nanoseconds from the first submission to the last completion
     */
    static long drive(final StorageTier tier, final String op, final long[][] keys, final int depth, final int maxBatch, final MemorySegment[] slots)
        throws InterruptedException
    {
        final int count = keys[0].length;
        final int batchSize = Math.min(depth, maxBatch);
        final LinkedBlockingQueue<BenchTierBatch> done = new LinkedBlockingQueue<>();
        final List<BenchTierBatch> batches = new ArrayList<>();
        for (int from = 0; from < depth; from += batchSize)
        {
            final BenchTierBatch batch = new BenchTierBatch(Arrays.copyOfRange(slots, from, Math.min(depth, from + batchSize)), done::add);
            batch.describeAsTheEnginesWrites(op.equals("write"));
            batches.add(batch);
        }
        int next = 0;
        int inflight = 0;
        final long start = System.nanoTime();
        for (final BenchTierBatch batch : batches)
        {
            if (next == count)
            {
                break;
            }
            next = submit(tier, op, batch, keys, next);
            inflight++;
        }
        while (inflight > 0)
        {
            final BenchTierBatch batch = awaitBatch(done, COMPLETION_TIMEOUT_SECONDS);
            if (batch == null)
            {
                throw new IllegalStateException("the tier completed no batch of " + op + " in " + COMPLETION_TIMEOUT_SECONDS + " s");
            }
            inflight--;
            final String failure = batch.firstFailure();
            if (failure != null)
            {
                throw new IllegalStateException(op + " failed: " + failure);
            }
            if (next < count)
            {
                next = submit(tier, op, batch, keys, next);
                inflight++;
            }
        }
        return System.nanoTime() - start;
    }

    /**
     * Waits for the next completed batch as the engine thread waits for its tiers' completions under its
     * {@code backoff} idle strategy: polls, then yields, and only then parks. A caller that parked at once
     * would add a thread wake-up to every batch at depth 1, where the engine pays one only once it has
     * been idle past its yields, and fio, which reaps its own completions on its one thread, pays none.
     *
     * @param done     where the tier's completions put the batches
     * @param timeoutS how long to park at most, in seconds, once the polls and yields found nothing
     * @return the batch, or null when none completed within the timeout
     */
    static <T> T awaitBatch(final LinkedBlockingQueue<T> done, final long timeoutS) throws InterruptedException
    {
        for (int i = 0; i < WAIT_SPINS + WAIT_YIELDS; i++)
        {
            final T batch = done.poll();
            if (batch != null)
            {
                return batch;
            }
            if (i < WAIT_SPINS)
            {
                Thread.onSpinWait();
            }
            else
            {
                Thread.yield();
            }
        }
        return done.poll(timeoutS, TimeUnit.SECONDS);
    }

    /** Loads the batch with the next keys and hands it to the tier; @return the index of the first key not yet submitted */
    private static int submit(final StorageTier tier, final String op, final BenchTierBatch batch, final long[][] keys, final int next)
    {
        final int n = Math.min(batch.capacity(), keys[0].length - next);
        batch.load(keys[0], keys[1], next, n);
        switch (op)
        {
            case "write" -> tier.write(batch);
            case "read" -> tier.read(batch);
            case "remove" -> tier.remove(batch);
            default -> throw new IllegalArgumentException("op " + op);
        }
        return next + n;
    }

    /** Fails the run when any of the {@code used} slots read into does not hold the pattern written: a fast wrong answer is no figure. */
    static void checkReadBack(final MemorySegment[] slots, final MemorySegment pattern, final int used, final long pageSize)
    {
        for (int i = 0; i < used; i++)
        {
            final long mismatch = slots[i].mismatch(pattern);
            if (mismatch != -1)
            {
                throw new IllegalStateException("a page read back differs from what was written at byte " + mismatch + " ("
                    + ConfigValues.formatSize(pageSize) + " pages)");
            }
        }
    }

}
