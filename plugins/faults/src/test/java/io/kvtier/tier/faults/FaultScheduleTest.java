package io.kvtier.tier.faults;

import io.kvtier.spi.PageKey;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierStatus;
import io.kvtier.tck.ContractTierContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The same seed gives the same decisions in the same order: in the schedule itself, whatever the
 * batching, and through the tier over posix, where every key's answer and every fault-log line
 * (its time aside) repeat; another seed gives other decisions.
 */
class FaultScheduleTest
{
    private static final long OBJECT_SIZE = 8192;
    private static final String MIX = "eio-read:0.1, short-read:0.1, eio-write:0.1, enospc-write:0.1, torn-write:0.1, bit-flip:0.1, replace:0.1";

    private static FaultRates mix()
    {
        return FaultRates.parse(MIX);
    }

    private static List<String> draws(final long seed, final FaultKind.Applies applies, final int... batches)
    {
        final FaultSchedule schedule = new FaultSchedule(seed);
        final List<String> decisions = new ArrayList<>();
        for (final int size : batches)
        {
            final FaultKind[] kinds = new FaultKind[size];
            final long[] params = new long[size];
            schedule.draw(applies, mix(), kinds, params);
            for (int i = 0; i < size; i++)
            {
                decisions.add(kinds[i] + "/" + params[i]);
            }
        }
        return decisions;
    }

    @Test
    void shouldDrawTheSameDecisionsFromTheSameSeedHoweverTheKeysAreBatched()
    {
        final List<String> whole = draws(42, FaultKind.Applies.WRITE, 200);
        assertThat(draws(42, FaultKind.Applies.WRITE, 200)).isEqualTo(whole);
        assertThat(draws(42, FaultKind.Applies.WRITE, 1, 7, 64, 128)).as("the same keys in other batches").isEqualTo(whole);
        assertThat(draws(43, FaultKind.Applies.WRITE, 200)).as("another seed").isNotEqualTo(whole);
        assertThat(whole.stream().filter(decision -> !decision.startsWith("null")).count()).as("faults drawn at the mix's rates").isBetween(80L, 200L);
    }

    @Test
    void shouldKeepReadDecisionsApartFromWrites()
    {
        final FaultSchedule onlyReads = new FaultSchedule(7);
        final FaultSchedule mixed = new FaultSchedule(7);
        final FaultKind[] kinds = new FaultKind[50];
        final long[] params = new long[50];
        final FaultKind[] other = new FaultKind[50];
        final long[] otherParams = new long[50];
        onlyReads.draw(FaultKind.Applies.READ, mix(), kinds, params);
        mixed.draw(FaultKind.Applies.WRITE, mix(), other, otherParams);
        mixed.blockCall(mix());
        mixed.draw(FaultKind.Applies.READ, mix(), other, otherParams);
        assertThat(otherParams).as("reads draw from a stream of their own").isEqualTo(params);
        assertThat(other).isEqualTo(kinds);
    }

    @Test
    void shouldRepeatEveryAnswerAndEveryLoggedFaultForTheSameSeed(@TempDir final Path dir) throws Exception
    {
        final Run first = run(dir.resolve("a"), 42);
        final Run again = run(dir.resolve("b"), 42);
        final Run other = run(dir.resolve("c"), 43);
        assertThat(first.log).as("faults were injected").hasSizeGreaterThan(20);
        assertThat(first.log.stream().map(line -> line.split(",")[0]).distinct().count()).as("of every kind in the mix").isEqualTo(7);
        // A short read is logged when the wrapped tier answers its key, and posix answers a batch's keys in the order its I/O ends.
        assertThat(decidedAtCall(again.log)).as("the same seed: the same faults decided at the call, keys and operations, in order")
            .isEqualTo(decidedAtCall(first.log));
        assertThat(again.log).as("the same seed: every fault, the short reads included").containsExactlyInAnyOrderElementsOf(first.log);
        assertThat(again.answers).as("the same seed: the same answer to every key").isEqualTo(first.answers);
        assertThat(other.log).as("another seed").isNotEqualTo(first.log);
    }

    private static List<String> decidedAtCall(final List<String> log)
    {
        return log.stream().filter(line -> !line.contains("\"kind\":\"short-read\"")).toList();
    }

    /** What one run of the driver saw. */
    private record Run(List<String> log, List<String> answers)
    {
    }

    /** Writes 120 pages in batches of 1 to 16, then reads them back the same way, each batch waited for; the same keys and bytes every run. */
    private static Run run(final Path dir, final long seed) throws Exception
    {
        Files.createDirectories(dir);
        final Path log = dir.resolve("faults.jsonl");
        final Map<String, String> config = Map.of("wrap", "posix", "wrap.dir", dir.resolve("posix").toString(), "wrap.fanout-levels", "0", "seed", Long.toString(seed),
            "faults", MIX, "fault-log", log.toString());
        final List<String> answers = new ArrayList<>();
        try (Arena arena = Arena.ofShared();
             StorageTier tier = new FaultsTierProvider().create(new TierConfig("d", config), new ContractTierContext("d", OBJECT_SIZE)))
        {
            final SplittableRandom random = new SplittableRandom(1234);
            final List<PageKey> keys = new ArrayList<>();
            for (int i = 0; i < 120; i++)
            {
                keys.add(new PageKey(random.nextLong(), random.nextLong()));
            }
            final MemorySegment frames = arena.allocate(16 * OBJECT_SIZE, 4096);
            for (final boolean writing : new boolean[] {true, false})
            {
                final SplittableRandom sizes = new SplittableRandom(99);
                int from = 0;
                while (from < keys.size())
                {
                    final int size = Math.min(keys.size() - from, 1 + sizes.nextInt(16));
                    final Batch batch = new Batch(keys.subList(from, from + size), frames);
                    if (writing)
                    {
                        for (int i = 0; i < size; i++)
                        {
                            fill(batch.segment(i), keys.get(from + i));
                        }
                        tier.write(batch);
                    }
                    else
                    {
                        tier.read(batch);
                    }
                    assertThat(batch.done.await(30, TimeUnit.SECONDS)).as("every key of a batch completed").isTrue();
                    for (int i = 0; i < size; i++)
                    {
                        answers.add((writing ? "write " : "read ") + keys.get(from + i) + " " + batch.statuses[i]
                            + (!writing && batch.statuses[i] == TierStatus.OK ? " " + Arrays.hashCode(batch.segment(i).toArray(ValueLayout.JAVA_BYTE)) : ""));
                    }
                    from += size;
                }
            }
        }
        // The time of each line aside, which no seed decides.
        final List<String> lines = Files.readAllLines(log).stream().map(line -> line.replaceFirst("^\\{\"t_ms\":\\d+,", "{")).toList();
        return new Run(lines, answers);
    }

    private static void fill(final MemorySegment segment, final PageKey key)
    {
        final SplittableRandom bytes = new SplittableRandom(key.high() ^ key.low());
        for (long at = 0; at < segment.byteSize(); at += 8)
        {
            segment.set(ValueLayout.JAVA_LONG_UNALIGNED, at, bytes.nextLong());
        }
    }

    /** A batch over consecutive frames of one region, recording each key's status. */
    private static final class Batch implements TierBatch
    {
        private final List<PageKey> keys;
        private final MemorySegment frames;
        private final TierStatus[] statuses;
        private final CountDownLatch done;

        Batch(final List<PageKey> keys, final MemorySegment frames)
        {
            this.keys = keys;
            this.frames = frames;
            this.statuses = new TierStatus[keys.size()];
            this.done = new CountDownLatch(keys.size());
        }

        @Override
        public int size()
        {
            return keys.size();
        }

        @Override
        public long keyHigh(final int index)
        {
            return keys.get(index).high();
        }

        @Override
        public long keyLow(final int index)
        {
            return keys.get(index).low();
        }

        @Override
        public MemorySegment segment(final int index)
        {
            return frames.asSlice(index * OBJECT_SIZE, OBJECT_SIZE);
        }

        @Override
        public void complete(final int index, final TierStatus status)
        {
            if (statuses[index] != null)
            {
                throw new IllegalStateException("key " + index + " completed twice");
            }
            statuses[index] = status;
            done.countDown();
        }
    }
}
