package io.kvtier.engine.eviction;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class KeyHashTableTest
{
    @Test
    void shouldAgreeWithAHashMapThroughRandomPutsAndRemoves()
    {
        final KeyHashTable table = new KeyHashTable(200);
        final Map<Long, Integer> model = new HashMap<>();
        final SplittableRandom random = new SplittableRandom(42);
        for (int step = 0; step < 200_000; step++)
        {
            // Few distinct keys, some of them 0 and negative, so runs collide and deletions shift.
            final long key = random.nextInt(300) - 50L;
            if (random.nextBoolean() && (model.size() < 200 || model.containsKey(key)))
            {
                final int value = random.nextInt(1_000);
                table.put(key, value);
                model.put(key, value);
            }
            else
            {
                assertThat(table.remove(key)).isEqualTo(model.remove(key) != null);
            }
            final long probe = random.nextInt(300) - 50L;
            assertThat(table.get(probe)).isEqualTo(model.getOrDefault(probe, KeyHashTable.ABSENT));
            assertThat(table.size()).isEqualTo(model.size());
        }
    }

    @Test
    void shouldRefuseMoreEntriesThanItWasSizedFor()
    {
        final KeyHashTable table = new KeyHashTable(2);
        table.put(1, 1);
        table.put(2, 2);
        assertThatThrownBy(() ->
        {
            for (long key = 3; key < 10; key++)
            {
                table.put(key, 0);
            }
        }).isInstanceOf(IllegalStateException.class).hasMessageContaining("entries");
    }
}
