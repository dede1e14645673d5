package io.kvtier.tck;

import io.kvtier.spi.PageKey;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CollidingKeysTest
{
    @Test
    void shouldMakeDistinctKeysNearlyAllOfWhichShareOneHashCode()
    {
        final List<PageKey> keys = CollidingKeys.generate(2048, new SplittableRandom(7));
        assertThat(keys).hasSize(2048).doesNotHaveDuplicates();
        final long sharing = keys.stream().mapToInt(PageKey::hashCode).boxed()
            .collect(java.util.stream.Collectors.groupingBy(h -> h, java.util.stream.Collectors.counting()))
            .values().stream().mapToLong(Long::longValue).max().orElseThrow();
        assertThat(sharing).as("keys sharing the most common hash code").isGreaterThanOrEqualTo(2000);
    }

    @Test
    void shouldShareHalvesAndTheirTextBetweenKeys()
    {
        final List<PageKey> keys = CollidingKeys.generate(256, new SplittableRandom(11));
        final Set<Long> highs = new HashSet<>();
        final Set<Long> lows = new HashSet<>();
        final Set<Long> xors = new HashSet<>();
        final Set<String> unpaddedHex = new HashSet<>();
        final Set<String> decimal = new HashSet<>();
        for (final PageKey key : keys)
        {
            highs.add(key.high());
            lows.add(key.low());
            xors.add(key.high() ^ key.low());
            unpaddedHex.add(Long.toHexString(key.high()) + Long.toHexString(key.low()));
            decimal.add(Long.toString(key.high()) + key.low());
        }
        assertThat(highs).as("distinct highs").hasSizeLessThan(keys.size() / 4);
        assertThat(lows).as("distinct lows").hasSizeLessThan(keys.size() / 4);
        assertThat(xors).as("distinct high ^ low").hasSizeLessThan(keys.size());
        assertThat(unpaddedHex).as("distinct unpadded hex names").hasSizeLessThan(keys.size());
        assertThat(decimal).as("distinct decimal names").hasSizeLessThan(keys.size());
        assertThat(keys).contains(new PageKey(0, 0), new PageKey(-1, -1), new PageKey(Long.MIN_VALUE, Long.MAX_VALUE));
    }

    @Test
    void shouldRefuseTooFewKeysToHoldEveryKindOfCollision()
    {
        assertThatThrownBy(() -> CollidingKeys.generate(10, new SplittableRandom(1)))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("count=10");
    }
}
