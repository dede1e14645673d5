package io.kvtier.tier.threefs;

import io.kvtier.spi.PageKey;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Capacity and LRU eviction of what the tier stored. */
class PageIndexTest
{
    private static final long PAGE = 100;

    @Test
    void shouldEvictLeastRecentlyUsedPagesDownToTheLowWaterLevel()
    {
        final PageIndex index = new PageIndex(10 * PAGE, 9 * PAGE, 5 * PAGE);
        final List<PageKey> victims = new ArrayList<>();
        for (int i = 0; i < 9; i++)
        {
            assertThat(index.reserve(PAGE, victims)).isTrue();
            index.commit(new PageKey(0, i), PAGE);
        }
        index.touch(new PageKey(0, 0));

        assertThat(index.reserve(PAGE, victims)).isTrue();

        assertThat(victims).containsExactly(new PageKey(0, 1), new PageKey(0, 2), new PageKey(0, 3), new PageKey(0, 4));
        assertThat(index.usedBytes()).isEqualTo(5 * PAGE);
        assertThat(index.contains(new PageKey(0, 0))).as("touched, so kept").isTrue();
    }

    @Test
    void shouldRefuseAWriteThatCannotFitAndCountReservedBytes()
    {
        final PageIndex index = new PageIndex(2 * PAGE, 2 * PAGE, PAGE);
        final List<PageKey> victims = new ArrayList<>();
        assertThat(index.reserve(PAGE, victims)).isTrue();
        assertThat(index.reserve(PAGE, victims)).isTrue();

        assertThat(index.reserve(PAGE, victims)).as("two writes in flight fill it").isFalse();
        index.abort(PAGE);
        assertThat(index.reserve(PAGE, victims)).isTrue();
        assertThat(victims).isEmpty();
    }

    @Test
    void shouldCountAnOverwriteOnce()
    {
        final PageIndex index = new PageIndex(Long.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE);
        final List<PageKey> victims = new ArrayList<>();
        final PageKey key = new PageKey(1, 2);
        index.reserve(PAGE, victims);
        index.commit(key, PAGE);
        index.reserve(PAGE, victims);
        index.commit(key, PAGE);

        assertThat(index.usedBytes()).isEqualTo(PAGE);
        assertThat(index.objects()).isEqualTo(1);
        index.forget(key);
        assertThat(index.usedBytes()).isZero();
    }
}
