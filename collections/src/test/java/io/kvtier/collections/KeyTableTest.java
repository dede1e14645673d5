package io.kvtier.collections;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class KeyTableTest
{
    private static KeyTable newTable(final Arena arena, final long maxEntries)
    {
        final MemorySegment region = arena.allocate(KeyTableDescriptor.regionLength(maxEntries), 64);
        return KeyTable.format(region, maxEntries);
    }

    @Test
    void shouldFindInsertedKeysWithTheirValues()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final KeyTable table = newTable(arena, 100);
            for (int i = 0; i < 100; i++)
            {
                final int slot = table.insert(i * 31L, ~i);
                table.value(slot, i);
                table.flags(slot, i & 7);
                table.aux(slot, i * 1000L);
            }
            assertThat(table.size()).isEqualTo(100);
            for (int i = 0; i < 100; i++)
            {
                final int slot = table.find(i * 31L, ~i);
                assertThat(slot).isNotEqualTo(KeyTable.NONE);
                assertThat(table.value(slot)).isEqualTo(i);
                assertThat(table.flags(slot)).isEqualTo(i & 7);
                assertThat(table.aux(slot)).isEqualTo(i * 1000L);
            }
            assertThat(table.find(12345, 6789)).isEqualTo(KeyTable.NONE);
        }
    }

    @Test
    void shouldRefuseNewKeysWhenFullButStillFindOldOnes()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final KeyTable table = newTable(arena, 4);
            for (int i = 0; i < 4; i++)
            {
                assertThat(table.insert(i, i)).isNotEqualTo(KeyTable.NONE);
            }
            assertThat(table.insert(99, 99)).isEqualTo(KeyTable.NONE);
            assertThat(table.insert(2, 2)).isNotEqualTo(KeyTable.NONE);
            assertThat(table.size()).isEqualTo(4);
        }
    }

    @Test
    void shouldReattachToAFormattedRegion()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment region = arena.allocate(KeyTableDescriptor.regionLength(16), 64);
            final KeyTable writer = KeyTable.format(region, 16);
            writer.value(writer.insert(7, 8), 42);
            final KeyTable reader = KeyTable.attach(region);
            assertThat(reader.value(reader.find(7, 8))).isEqualTo(42);
            assertThat(reader.size()).isEqualTo(1);
        }
    }

    @Test
    void shouldRejectARegionThatHoldsNoTable()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment region = arena.allocate(1024, 64);
            assertThatThrownBy(() -> KeyTable.attach(region)).isInstanceOf(IllegalStateException.class).hasMessageContaining("magic");
        }
    }

    @Provide
    Arbitrary<List<Tuple.Tuple3<Integer, Integer, Integer>>> operations()
    {
        // op 0..2 insert, 3 remove; keys from a small space so collisions, wrap-around and re-insertion happen.
        return Arbitraries.integers().between(0, 3)
            .flatMap(op -> Arbitraries.integers().between(0, 40).flatMap(k -> Arbitraries.integers().between(0, 1_000).map(v -> Tuple.of(op, k, v))))
            .list().ofMaxSize(400);
    }

    @Property(tries = 300)
    void shouldBehaveLikeAMap(@ForAll("operations") final List<Tuple.Tuple3<Integer, Integer, Integer>> ops)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final KeyTable table = newTable(arena, 24);
            final Map<Integer, Integer> model = new HashMap<>();
            for (final Tuple.Tuple3<Integer, Integer, Integer> op : ops)
            {
                // Few distinct high halves make keys collide in the probe sequence often.
                final long high = op.get2() % 3;
                final long low = op.get2();
                if (op.get1() < 3)
                {
                    final int slot = table.insert(high, low);
                    if (slot == KeyTable.NONE)
                    {
                        assertThat(model).hasSize(24).doesNotContainKey(op.get2());
                    }
                    else
                    {
                        table.value(slot, op.get3());
                        table.flags(slot, op.get3() & 0x3FF);
                        table.aux(slot, -op.get3() * 31L);
                        model.put(op.get2(), op.get3());
                    }
                }
                else
                {
                    assertThat(table.remove(high, low)).isEqualTo(model.remove(op.get2()) != null);
                }
                assertThat(table.size()).isEqualTo(model.size());
            }
            for (int k = 0; k <= 40; k++)
            {
                final int slot = table.find(k % 3, k);
                if (model.containsKey(k))
                {
                    assertThat(slot).isNotEqualTo(KeyTable.NONE);
                    // Value, flags and aux travel together when a deletion shifts the entry back.
                    assertThat(table.value(slot)).isEqualTo(model.get(k));
                    assertThat(table.flags(slot)).isEqualTo(model.get(k) & 0x3FF);
                    assertThat(table.aux(slot)).isEqualTo(-model.get(k) * 31L);
                    assertThat(table.keyHigh(slot)).isEqualTo(k % 3);
                    assertThat(table.keyLow(slot)).isEqualTo(k);
                }
                else
                {
                    assertThat(slot).isEqualTo(KeyTable.NONE);
                }
            }
            long occupied = 0;
            for (long s = 0; s < table.slotCount(); s++)
            {
                occupied += table.isOccupied(s) ? 1 : 0;
            }
            assertThat(occupied).isEqualTo(model.size());
        }
    }

    /** The documented probe start, written out again here as a client in another language would. */
    private static long documentedHome(final MemorySegment region, final long keyHigh, final long keyLow)
    {
        final long seed = region.get(java.lang.foreign.ValueLayout.JAVA_LONG, KeyTableDescriptor.SEED_OFFSET);
        final long slots = region.get(java.lang.foreign.ValueLayout.JAVA_LONG, KeyTableDescriptor.SLOT_COUNT_OFFSET);
        long z = keyHigh ^ keyLow ^ seed;
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        z = z ^ (z >>> 31);
        return z & (slots - 1);
    }

    @Test
    void shouldPlaceEachKeyWhereTheDescriptorSaysAReaderProbesFor()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment region = arena.allocate(KeyTableDescriptor.regionLength(4096), 64);
            final KeyTable table = KeyTable.format(region, 4096);
            for (long k = 0; k < 200; k++)
            {
                final long high = k * 0x9E3779B97F4A7C15L;
                final long low = ~k;
                final long home = documentedHome(region, high, low);
                final int slot = table.insert(high, low);
                // Linear probing: the key sits at its home or the first free slot after it (wrapping).
                final long distance = (slot - home) & (table.slotCount() - 1);
                assertThat(distance).as("probe distance of key %d", k).isLessThan(table.slotCount());
                for (long d = 0; d < distance; d++)
                {
                    assertThat(table.isOccupied((home + d) & (table.slotCount() - 1))).as("slots before key %d are taken", k).isTrue();
                }
                // And the slot holds the key, in the documented place of the region.
                final long at = KeyTableDescriptor.HEADER_LENGTH + (long)slot * KeyTableDescriptor.SLOT_LENGTH;
                assertThat(region.get(java.lang.foreign.ValueLayout.JAVA_LONG, at + KeyTableDescriptor.KEY_HIGH_OFFSET)).isEqualTo(high);
                assertThat(region.get(java.lang.foreign.ValueLayout.JAVA_LONG, at + KeyTableDescriptor.KEY_LOW_OFFSET)).isEqualTo(low);
            }
            // A table of 4096 entries at this load mostly places keys at their very home.
            long atHome = 0;
            for (long k = 0; k < 200; k++)
            {
                final long high = k * 0x9E3779B97F4A7C15L;
                atHome += table.find(high, ~k) == documentedHome(region, high, ~k) ? 1 : 0;
            }
            assertThat(atHome).isGreaterThan(150);
        }
    }

    @Test
    void shouldClaimANewSlotWithValueMinusOneNoFlagsAndNoAuxEvenOverOldEntries()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final KeyTable table = newTable(arena, 16);
            for (int round = 0; round < 3; round++)
            {
                for (int i = 0; i < 16; i++)
                {
                    final int slot = table.insert(round, i);
                    assertThat(table.value(slot)).as("value of a new entry").isEqualTo(-1);
                    assertThat(table.flags(slot)).as("flags of a new entry").isZero();
                    assertThat(table.aux(slot)).as("aux of a new entry").isZero();
                    assertThat(table.keyHigh(slot)).isEqualTo(round);
                    assertThat(table.keyLow(slot)).isEqualTo(i);
                    table.value(slot, 7);
                    table.flags(slot, 5);
                    table.aux(slot, 99);
                }
                // Emptied again: the next round's entries land in slots that held this round's.
                for (int i = 0; i < 16; i++)
                {
                    assertThat(table.remove(round, i)).isTrue();
                }
                assertThat(table.size()).isZero();
            }
        }
    }

    @Test
    void shouldFormatARegionThatHeldSomethingElseAsAnEmptyTableOthersCanAttach()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment region = arena.allocate(KeyTableDescriptor.regionLength(64), 64);
            region.fill((byte)0xFF);
            final KeyTable table = KeyTable.format(region, 64);
            assertThat(table.size()).isZero();
            assertThat(table.find(1, 2)).isEqualTo(KeyTable.NONE);
            for (long slot = 0; slot < table.slotCount(); slot++)
            {
                assertThat(table.isOccupied(slot)).isFalse();
            }
            table.value(table.insert(1, 2), 3);
            table.value(table.insert(4, 5), 6);
            assertThat(table.remove(1, 2)).isTrue();
            final KeyTable reader = KeyTable.attach(region);
            assertThat(reader.size()).as("the entry count another process reads").isEqualTo(1);
            assertThat(reader.value(reader.find(4, 5))).isEqualTo(6);
            assertThat(reader.maxEntries()).isEqualTo(64);
        }
    }

    @Test
    void shouldSizeTablesAtThreeQuartersLoadInPowersOfTwo()
    {
        assertThat(KeyTableDescriptor.slotCountFor(1)).isEqualTo(8);
        assertThat(KeyTableDescriptor.slotCountFor(6)).isEqualTo(8);
        assertThat(KeyTableDescriptor.slotCountFor(7)).isEqualTo(16);
        assertThat(KeyTableDescriptor.slotCountFor(12)).isEqualTo(16);
        assertThat(KeyTableDescriptor.slotCountFor(13)).isEqualTo(32);
        assertThat(KeyTableDescriptor.slotCountFor(3L << 20)).isEqualTo(4L << 20);
        assertThat(KeyTableDescriptor.slotCountFor((3L << 20) + 1)).isEqualTo(8L << 20);
        assertThat(KeyTableDescriptor.slotCountFor(3L << 38)).isEqualTo(1L << 40);
        assertThatThrownBy(() -> KeyTableDescriptor.slotCountFor(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> KeyTableDescriptor.slotCountFor((3L << 38) + 1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("too large");
    }
}
