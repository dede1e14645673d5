package io.kvtier.tier.support;

import io.kvtier.spi.TierStatus;
import io.kvtier.spi.TierUsage;

import java.lang.foreign.Arena;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class FileIndexTest
{
    private static final long SIZE = 4096;

    private final Arena arena = Arena.ofConfined();
    private final FileIndex.Victims victims = new FileIndex.Victims(64);

    @AfterEach
    void closeArena()
    {
        arena.close();
    }

    private FileIndex bounded(final int objects, final double high, final double low)
    {
        final long capacity = objects * SIZE;
        return new FileIndex(arena, 1024, capacity, (long)(high * capacity), (long)(low * capacity));
    }

    private void write(final FileIndex index, final long key)
    {
        final int ticket = index.reserveWrite(key, ~key, SIZE, victims);
        assertThat(ticket).as("ticket for key %d", key).isGreaterThanOrEqualTo(0);
        index.commitWrite(ticket, SIZE, true, victims);
    }

    private void write(final FileIndex index, final long key, final boolean mayBeUntracked)
    {
        final int ticket = index.reserveWrite(key, ~key, SIZE, victims);
        assertThat(ticket == FileIndex.UNTRACKED && mayBeUntracked || ticket >= 0).as("ticket for key %d", key).isTrue();
        index.commitWrite(ticket, SIZE, true, victims);
    }

    private long[] drainVictims(final FileIndex index)
    {
        final long[] keys = new long[victims.count()];
        for (int i = 0; i < victims.count(); i++)
        {
            keys[i] = victims.keyHigh(i);
            assertThat(index.beginEviction(victims.id(i))).isTrue();
            index.endEviction(victims.id(i));
        }
        victims.clear();
        return keys;
    }

    @Test
    void shouldCountEachObjectOnceAndOverwritesInPlace()
    {
        final FileIndex index = bounded(100, 0.9, 0.8);
        write(index, 1);
        write(index, 2);
        write(index, 1);
        assertThat(index.usedBytes()).isEqualTo(2 * SIZE);
        assertThat(index.objects()).isEqualTo(2);
        index.removed(1, ~1L, true, SIZE);
        assertThat(index.usedBytes()).isEqualTo(SIZE);
        assertThat(index.objects()).isEqualTo(1);
        index.removed(1, ~1L, false, SIZE);
        assertThat(index.usedBytes()).isEqualTo(SIZE);
        assertThat(index.entries()).isEqualTo(1);
    }

    @Test
    void shouldEvictFromAboveTheHighWaterLevelDownToTheLowOneInLruOrder()
    {
        final FileIndex index = bounded(10, 0.9, 0.5);
        for (long key = 0; key < 9; key++)
        {
            write(index, key);
        }
        assertThat(victims.count()).as("no eviction at the high water level").isZero();
        index.touch(0, ~0L);
        write(index, 9);
        assertThat(drainVictims(index)).containsExactly(1, 2, 3, 4, 5);
        assertThat(index.usedBytes()).isEqualTo(5 * SIZE);
        assertThat(index.objects()).isEqualTo(5);
        assertThat(index.entries()).isEqualTo(5);
    }

    @Test
    void shouldNeverChooseAFileThatIsBeingWritten()
    {
        final FileIndex index = bounded(20, 0.45, 0.25);
        for (long key = 0; key < 9; key++)
        {
            write(index, key);
        }
        final int rewrite = index.reserveWrite(1, ~1L, SIZE, victims);
        assertThat(rewrite).isNotNegative();
        write(index, 9);
        assertThat(drainVictims(index)).doesNotContain(1L).containsExactly(0, 2, 3, 4, 5);
        index.commitWrite(rewrite, SIZE, true, victims);
        assertThat(index.objects()).isEqualTo(5);
        assertThat(index.usedBytes()).isEqualTo(5 * SIZE);
    }

    @Test
    void shouldRefuseAWriteThatCannotFitEvenAfterEvictingEverything()
    {
        final FileIndex index = bounded(2, 1.0, 0.5);
        final int first = index.reserveWrite(1, 1, SIZE, victims);
        final int second = index.reserveWrite(2, 2, SIZE, victims);
        assertThat(first).isNotNegative();
        assertThat(second).isNotNegative();
        assertThat(index.reserveWrite(3, 3, SIZE, victims)).isEqualTo(FileIndex.NO_SPACE);
        index.commitWrite(first, SIZE, true, victims);
        index.commitWrite(second, SIZE, false, victims);
        assertThat(index.reserveWrite(3, 3, SIZE, victims)).isNotNegative();
        assertThat(index.reservedBytes()).isEqualTo(SIZE);
    }

    @Test
    void shouldEvictToAdmitAWriteWhenFull()
    {
        final FileIndex index = bounded(2, 1.0, 0.5);
        write(index, 1);
        write(index, 2);
        final int ticket = index.reserveWrite(3, ~3L, SIZE, victims);
        assertThat(ticket).isNotNegative();
        assertThat(drainVictims(index)).containsExactly(1);
        index.commitWrite(ticket, SIZE, true, victims);
        assertThat(index.usedBytes()).isEqualTo(2 * SIZE);
    }

    @Test
    void shouldCancelAnEvictionWhenTheKeyIsWrittenAgainMeanwhile()
    {
        final FileIndex index = bounded(3, 1.0, 0.5);
        write(index, 1);
        write(index, 2);
        write(index, 3);
        final int ticket = index.reserveWrite(4, ~4L, SIZE, victims);
        assertThat(victims.count()).isEqualTo(1);
        assertThat(victims.keyHigh(0)).isEqualTo(1);
        final int victim = victims.id(0);
        victims.clear();
        index.commitWrite(ticket, SIZE, false, victims);
        // Key 1 is rewritten and committed before its eviction runs: the new file must stay.
        final int rewrite = index.reserveWrite(1, ~1L, SIZE, victims);
        assertThat(rewrite).isNotNegative();
        index.commitWrite(rewrite, SIZE, true, victims);
        assertThat(victims.count()).isZero();
        assertThat(index.beginEviction(victim)).isFalse();
        assertThat(index.objects()).isEqualTo(3);
        assertThat(index.usedBytes()).isEqualTo(3 * SIZE);
    }

    @Test
    void shouldMakeRoomInAFullBoundedIndex()
    {
        final FileIndex index = new FileIndex(arena, 16, 1000 * SIZE, 900 * SIZE, 800 * SIZE);
        for (long key = 0; key < 16; key++)
        {
            write(index, key);
        }
        assertThat(index.reserveWrite(99, 99, SIZE, victims)).isEqualTo(FileIndex.RETRY);
        assertThat(drainVictims(index)).containsExactly(0);
        assertThat(index.reserveWrite(99, 99, SIZE, victims)).isNotNegative();
    }

    @Test
    void shouldCountUntrackedFilesWhenAnUnboundedIndexIsFull()
    {
        final FileIndex index = new FileIndex(arena, 16, TierUsage.UNBOUNDED, Long.MAX_VALUE, Long.MAX_VALUE);
        for (long key = 0; key < 20; key++)
        {
            final int ticket = index.reserveWrite(key, key, SIZE, victims);
            index.commitWrite(ticket, SIZE, true, victims);
        }
        assertThat(victims.count()).isZero();
        assertThat(index.usedBytes()).isEqualTo(20 * SIZE);
        assertThat(index.objects()).as("unknown once untracked").isEqualTo(-1);
        index.removed(19, 19, true, SIZE);
        index.removed(0, 0, true, SIZE);
        assertThat(index.usedBytes()).isEqualTo(18 * SIZE);
    }

    @Test
    void shouldAdoptFilesOldestFirstAndEvictThemFirst()
    {
        final FileIndex index = bounded(4, 0.9, 0.5);
        for (long key = 10; key < 15; key++)
        {
            assertThat(index.adopt(key, key, SIZE)).isTrue();
        }
        index.startEvictionIfAboveHighWater();
        index.continueEviction(victims);
        assertThat(drainVictims(index)).containsExactly(10, 11, 12);
        assertThat(index.objects()).isEqualTo(2);
    }

    @Test
    void shouldAnswerProbesForFilesItKnowsAndNotForWritesInFlightOrEvictions()
    {
        final FileIndex index = bounded(10, 0.15, 0.1);
        assertThat(index.exists(1, ~1L, SIZE)).isEqualTo(TierStatus.NOT_FOUND);
        final int ticket = index.reserveWrite(1, ~1L, SIZE, victims);
        assertThat(index.exists(1, ~1L, SIZE)).as("a write in flight is not a file yet").isEqualTo(TierStatus.NOT_FOUND);
        index.commitWrite(ticket, SIZE, true, victims);
        assertThat(index.exists(1, ~1L, SIZE)).isEqualTo(TierStatus.OK);
        assertThat(index.exists(1, ~1L, 2 * SIZE)).as("a file of another size").isEqualTo(TierStatus.CORRUPT);
        write(index, 2);
        assertThat(victims.count()).as("above the high water level, the oldest is chosen").isEqualTo(1);
        assertThat(index.exists(1, ~1L, SIZE)).as("chosen for eviction").isEqualTo(TierStatus.NOT_FOUND);
        drainVictims(index);
        index.removed(2, ~2L, true, SIZE);
        assertThat(index.exists(2, ~2L, SIZE)).isEqualTo(TierStatus.NOT_FOUND);
    }

    @Test
    void shouldSayItCannotTellOnlyForKeysItLacksOnceOverflowed()
    {
        final FileIndex index = new FileIndex(arena, 16, TierUsage.UNBOUNDED, Long.MAX_VALUE, Long.MAX_VALUE);
        for (long key = 0; key < 20; key++)
        {
            write(index, key, true);
        }
        assertThat(index.overflowed()).isTrue();
        assertThat(index.exists(0, ~0L, SIZE)).isEqualTo(TierStatus.OK);
        assertThat(index.exists(1000, ~1000L, SIZE)).as("maybe one of the untracked files").isNull();
    }

    @Test
    void shouldForgetAMissingFileUnlessItWasWrittenAgainSince()
    {
        final FileIndex index = bounded(100, 0.9, 0.8);
        assertThat(index.commitOf(1, ~1L)).isZero();
        write(index, 1);
        final int seen = index.commitOf(1, ~1L);
        assertThat(seen).isNotZero();
        write(index, 1);
        assertThat(index.forget(1, ~1L, seen)).as("rewritten since the read began").isFalse();
        assertThat(index.exists(1, ~1L, SIZE)).isEqualTo(TierStatus.OK);
        assertThat(index.forget(1, ~1L, index.commitOf(1, ~1L))).isTrue();
        assertThat(index.exists(1, ~1L, SIZE)).isEqualTo(TierStatus.NOT_FOUND);
        assertThat(index.objects()).isZero();
        assertThat(index.usedBytes()).isZero();
        assertThat(index.entries()).isZero();
        assertThat(index.forget(1, ~1L, seen)).isFalse();
    }
}
