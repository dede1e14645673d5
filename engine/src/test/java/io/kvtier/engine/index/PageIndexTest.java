package io.kvtier.engine.index;

import io.kvtier.collections.KeyTable;
import io.kvtier.collections.KeyTableDescriptor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The index on its own: pool pages bound to keys, L3 tiers recorded per key, and the budget of
 * entries known only from L3, which a clock sweep keeps while never refusing a pool page.
 */
class PageIndexTest
{
    private static final long HIGH = 0x5EEDL;

    private final Arena arena = Arena.ofConfined();

    @AfterEach
    void close()
    {
        arena.close();
    }

    private PageIndex index(final long maxEntries, final int pageCount)
    {
        final KeyTable table = KeyTable.format(arena.allocate(KeyTableDescriptor.regionLength(maxEntries), 8), maxEntries);
        return new PageIndex(table, pageCount);
    }

    private static int pageOf(final PageIndex index, final long low)
    {
        final int slot = index.find(HIGH, low);
        return slot == KeyTable.NONE ? Integer.MIN_VALUE : index.page(slot);
    }

    private static int tiersOf(final PageIndex index, final long low)
    {
        final int slot = index.find(HIGH, low);
        return slot == KeyTable.NONE ? -1 : index.tiers(slot);
    }

    @Test
    void shouldRefuseATableThatCannotHoldEveryPoolPage()
    {
        final KeyTable table = KeyTable.format(arena.allocate(KeyTableDescriptor.regionLength(4), 8), 4);
        assertThatThrownBy(() -> new PageIndex(table, 5)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("5 pages");
    }

    @Test
    void shouldBindRebindAndUnbindOnlyThePageThatIsBound()
    {
        final PageIndex index = index(16, 8);
        index.bindPage(HIGH, 1, 3);
        assertThat(pageOf(index, 1)).isEqualTo(3);
        index.bindPage(HIGH, 1, 5);
        assertThat(pageOf(index, 1)).as("rebound").isEqualTo(5);
        assertThat(index.size()).isEqualTo(1);

        index.unbindPage(HIGH, 1, 3);
        assertThat(pageOf(index, 1)).as("page 3 is no longer bound, so unbinding it changes nothing").isEqualTo(5);
        index.unbindPage(HIGH, 1, 5);
        assertThat(index.find(HIGH, 1)).as("no page and no tier: the entry goes").isEqualTo(KeyTable.NONE);
        assertThat(index.size()).isZero();
        index.unbindPage(HIGH, 2, 5);
        assertThat(index.size()).as("unbinding an absent key").isZero();
    }

    @Test
    void shouldKeepAnUnboundEntryWhileATierHoldsItAndDropItWhenNothingDoes()
    {
        final PageIndex index = index(16, 8);
        index.bindPage(HIGH, 1, 2);
        assertThat(index.addTier(HIGH, 1, 0)).isTrue();
        assertThat(index.addTier(HIGH, 1, 29)).isTrue();
        assertThat(tiersOf(index, 1)).isEqualTo(1 | 1 << 29);

        index.unbindPage(HIGH, 1, 2);
        assertThat(pageOf(index, 1)).as("L3 still holds it").isEqualTo(PageIndex.NO_PAGE);
        index.removeTier(HIGH, 1, 0);
        assertThat(tiersOf(index, 1)).isEqualTo(1 << 29);
        index.removeTier(HIGH, 1, 29);
        assertThat(index.find(HIGH, 1)).isEqualTo(KeyTable.NONE);

        index.bindPage(HIGH, 2, 4);
        index.addTier(HIGH, 2, 3);
        index.removeTier(HIGH, 2, 3);
        assertThat(pageOf(index, 2)).as("a bound page keeps its entry when its last tier goes").isEqualTo(4);
        assertThat(tiersOf(index, 2)).isZero();
        index.removeTier(HIGH, 9, 3);
        assertThat(index.size()).as("removing a tier of an absent key").isEqualTo(1);
    }

    @Test
    void shouldForgetTheOldestUnreferencedL3OnlyEntryOnceItsBudgetIsSpent()
    {
        final PageIndex index = index(8, 4);
        for (long low = 1; low <= 4; low++)
        {
            assertThat(index.addTier(HIGH, low, 0)).isTrue();
        }
        assertThat(index.forgotten()).isZero();
        index.touch(index.find(HIGH, 1));
        index.touch(index.find(HIGH, 1));

        assertThat(index.addTier(HIGH, 5, 0)).isTrue();
        assertThat(index.forgotten()).isEqualTo(1);
        assertThat(index.size()).isEqualTo(4);
        assertThat(index.find(HIGH, 5)).isNotEqualTo(KeyTable.NONE);
        assertThat(index.find(HIGH, 1)).as("touched, so spared once").isNotEqualTo(KeyTable.NONE);
        final long survivors = java.util.stream.LongStream.rangeClosed(2, 4).filter(low -> index.find(HIGH, low) != KeyTable.NONE).count();
        assertThat(survivors).as("one untouched entry forgotten").isEqualTo(2);
    }

    @Test
    void shouldNeverForgetAnEntryWithABoundPage()
    {
        final PageIndex index = index(4, 4);
        for (long low = 1; low <= 4; low++)
        {
            index.bindPage(HIGH, low, (int)low);
        }
        assertThat(index.addTier(HIGH, 9, 0)).as("no budget for L3-only entries and nothing to forget").isFalse();
        assertThat(index.forgotten()).isZero();
        assertThat(index.addTier(HIGH, 2, 1)).as("a key already present takes the tier").isTrue();
        for (long low = 1; low <= 4; low++)
        {
            assertThat(pageOf(index, low)).isEqualTo((int)low);
        }
    }

    @Test
    void shouldMakeRoomForAPoolPageByForgettingAnL3OnlyEntry()
    {
        final PageIndex index = index(4, 2);
        index.addTier(HIGH, 1, 0);
        index.addTier(HIGH, 2, 0);
        index.bindPage(HIGH, 3, 0);
        index.bindPage(HIGH, 4, 1);
        assertThat(index.size()).isEqualTo(4);

        index.unbindPage(HIGH, 4, 1);
        index.addTier(HIGH, 5, 0);
        index.bindPage(HIGH, 6, 1);
        assertThat(pageOf(index, 6)).as("binding never fails while pool pages have room").isEqualTo(1);
        assertThat(index.forgotten()).isEqualTo(1);
        assertThat(pageOf(index, 3)).isZero();
    }

    @Test
    void shouldForgetTheOneUntouchedEntryWhereverItsSlotIs()
    {
        for (long untouched = 1; untouched <= 4; untouched++)
        {
            final PageIndex index = index(8, 4);
            for (long low = 1; low <= 4; low++)
            {
                index.addTier(HIGH, low, 0);
            }
            for (long low = 1; low <= 4; low++)
            {
                if (low != untouched)
                {
                    index.touch(index.find(HIGH, low));
                }
            }
            index.addTier(HIGH, 5, 0);
            for (long low = 1; low <= 4; low++)
            {
                assertThat(index.find(HIGH, low) != KeyTable.NONE).as("key " + low + " with key " + untouched + " untouched").isEqualTo(low != untouched);
            }
        }
    }

    @Test
    void shouldCountTheL3OnlyBudgetApartFromBoundPages()
    {
        final PageIndex index = index(8, 4);
        for (long low = 1; low <= 3; low++)
        {
            index.bindPage(HIGH, low, (int)low);
        }
        index.bindPage(HIGH, 1, 7);
        for (long low = 10; low <= 13; low++)
        {
            index.addTier(HIGH, low, 0);
        }
        assertThat(index.forgotten()).as("four L3-only entries fit the budget of 8 - 4, whatever is bound").isZero();
        index.addTier(HIGH, 14, 0);
        assertThat(index.forgotten()).as("the fifth makes room by forgetting one").isEqualTo(1);

        index.addTier(HIGH, 3, 0);
        index.unbindPage(HIGH, 3, 3);
        index.addTier(HIGH, 15, 0);
        assertThat(index.forgotten()).as("key 3 is now L3-only too, so the budget is spent again").isEqualTo(2);
        assertThat(pageOf(index, 1)).isEqualTo(7);
        assertThat(pageOf(index, 2)).isEqualTo(2);
    }

    @Test
    void shouldStillForgetOneWhenEveryEntryWasTouched()
    {
        final PageIndex index = index(8, 4);
        for (long low = 1; low <= 4; low++)
        {
            index.addTier(HIGH, low, 0);
            index.touch(index.find(HIGH, low));
        }
        assertThat(index.addTier(HIGH, 5, 0)).as("the sweep clears each reference on its way and takes one on its second pass").isTrue();
        assertThat(index.forgotten()).isEqualTo(1);
        assertThat(index.size()).isEqualTo(4);
    }
}
