package io.kvtier.engine.eviction;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MiniatureKeysTest
{
    private static final int MINIATURES = 4;
    private static final int CAPACITY = 50;

    @Test
    void shouldAgreeWithAMapPerMiniatureThroughRandomHoldsAndReleases()
    {
        final MiniatureKeys keys = new MiniatureKeys(MINIATURES, CAPACITY);
        @SuppressWarnings("unchecked")
        final Map<Long, Integer>[] model = new Map[MINIATURES];
        for (int m = 0; m < MINIATURES; m++)
        {
            model[m] = new HashMap<>();
        }
        final SplittableRandom random = new SplittableRandom(7);
        for (int step = 0; step < 200_000; step++)
        {
            // Few distinct keys, some of them 0 and negative, so that the miniatures share most of them and table runs collide.
            final long key = random.nextInt(120) - 20L;
            final int m = random.nextInt(MINIATURES);
            final int entry = keys.find(key, keys.home(key));
            if (model[m].containsKey(key))
            {
                assertThat(keys.page(entry, m)).isEqualTo(model[m].get(key));
                if (random.nextBoolean())
                {
                    keys.release(entry, key, m);
                    model[m].remove(key);
                }
            }
            else if (model[m].size() < CAPACITY)
            {
                assertThat(keys.page(entry, m)).isEqualTo(MiniatureKeys.ABSENT);
                final int page = random.nextInt(CAPACITY);
                final int held = keys.hold(entry, key, keys.home(key), m, page);
                if (entry != MiniatureKeys.ABSENT)
                {
                    assertThat(held).as("a key another miniature holds keeps its entry").isEqualTo(entry);
                }
                model[m].put(key, page);
            }
            final long probe = random.nextInt(120) - 20L;
            final int probeEntry = keys.find(probe);
            boolean anyHolds = false;
            for (int other = 0; other < MINIATURES; other++)
            {
                assertThat(keys.page(probeEntry, other)).isEqualTo(model[other].getOrDefault(probe, MiniatureKeys.ABSENT));
                anyHolds |= model[other].containsKey(probe);
            }
            assertThat(probeEntry != MiniatureKeys.ABSENT).as("an entry lives while some miniature holds its key").isEqualTo(anyHolds);
        }
    }

    @Test
    void shouldHoldEveryMiniatureFullOfDifferentKeys()
    {
        final MiniatureKeys keys = new MiniatureKeys(MINIATURES, CAPACITY);
        for (int m = 0; m < MINIATURES; m++)
        {
            for (int page = 0; page < CAPACITY; page++)
            {
                final long key = m * 1_000L + page;
                keys.hold(MiniatureKeys.ABSENT, key, keys.home(key), m, page);
            }
        }
        assertThat(keys.size()).isEqualTo(MINIATURES * CAPACITY);
        assertThat(keys.page(keys.find(3_049L), 3)).isEqualTo(49);
        assertThat(keys.page(keys.find(3_049L), 2)).isEqualTo(MiniatureKeys.ABSENT);
    }

    @Test
    void shouldRefuseASizeItCannotNumber()
    {
        assertThatThrownBy(() -> new MiniatureKeys(0, 10)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("miniatures=0");
        assertThatThrownBy(() -> new MiniatureKeys(4, 0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("capacity=0");
    }
}
