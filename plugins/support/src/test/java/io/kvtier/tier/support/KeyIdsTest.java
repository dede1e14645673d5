package io.kvtier.tier.support;

import java.lang.foreign.Arena;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class KeyIdsTest
{
    @Test
    void shouldFindWhatWasPutAndNothingElse()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final KeyIds ids = new KeyIds(arena, 4);
            assertThat(ids.find(1, 2)).isEqualTo(KeyIds.NONE);
            assertThat(ids.putIfAbsent(1, 2, 7)).isEqualTo(7);
            assertThat(ids.putIfAbsent(1, 2, 9)).as("held: its own id").isEqualTo(7);
            assertThat(ids.find(1, 2)).isEqualTo(7);
            assertThat(ids.find(2, 1)).isEqualTo(KeyIds.NONE);
            assertThat(ids.size()).isEqualTo(1);
        }
    }

    @Test
    void shouldRefuseAKeyBeyondMaxEntriesButTakeItOnceOneIsRemoved()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final KeyIds ids = new KeyIds(arena, 3);
            for (int i = 0; i < 3; i++)
            {
                assertThat(ids.putIfAbsent(i, i, i)).isEqualTo(i);
            }
            assertThat(ids.putIfAbsent(9, 9, 3)).isEqualTo(KeyIds.NONE);
            assertThat(ids.putIfAbsent(1, 1, 3)).as("a held key is still found when full").isEqualTo(1);
            assertThat(ids.remove(1, 1)).isTrue();
            assertThat(ids.remove(1, 1)).isFalse();
            assertThat(ids.putIfAbsent(9, 9, 1)).isEqualTo(1);
        }
    }

    /** Keys sharing a home slot form runs; removing from the middle of a run must keep the rest reachable. */
    @Test
    void shouldAgreeWithAHashMapUnderRandomPutsAndRemoves()
    {
        final int maxEntries = 64;
        final SplittableRandom random = new SplittableRandom(17);
        try (Arena arena = Arena.ofConfined())
        {
            final KeyIds ids = new KeyIds(arena, maxEntries);
            final Map<Long, Integer> model = new HashMap<>();
            int nextId = 0;
            for (int step = 0; step < 200_000; step++)
            {
                // Few distinct keys, so the table runs full and collides often.
                final long key = random.nextInt(96);
                final long high = key * 0x1000_0001L;
                final long low = ~key;
                if (random.nextBoolean())
                {
                    final int expected = model.containsKey(key) ? model.get(key) : model.size() == maxEntries ? KeyIds.NONE : nextId;
                    assertThat(ids.putIfAbsent(high, low, nextId)).isEqualTo(expected);
                    if (expected == nextId)
                    {
                        model.put(key, nextId++);
                    }
                }
                else
                {
                    assertThat(ids.remove(high, low)).isEqualTo(model.remove(key) != null);
                }
                assertThat(ids.size()).isEqualTo(model.size());
            }
            for (long key = 0; key < 96; key++)
            {
                assertThat(ids.find(key * 0x1000_0001L, ~key)).isEqualTo(model.getOrDefault(key, KeyIds.NONE));
            }
        }
    }
}
