package io.kvtier.collections;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class IntLruListTest
{
    private static List<Integer> order(final IntLruList list)
    {
        final List<Integer> ids = new ArrayList<>();
        for (int id = list.first(); id != IntLruList.NONE; id = list.next(id))
        {
            ids.add(id);
        }
        return ids;
    }

    @Test
    void shouldKeepLeastRecentlyUsedFirst()
    {
        final IntLruList list = new IntLruList(8);
        list.touch(3);
        list.touch(5);
        list.touch(1);
        list.touch(3);
        assertThat(order(list)).containsExactly(5, 1, 3);
        assertThat(list.first()).isEqualTo(5);
        assertThat(list.last()).isEqualTo(3);
        assertThat(list.remove(1)).isTrue();
        assertThat(list.remove(1)).isFalse();
        assertThat(order(list)).containsExactly(5, 3);
        assertThat(list.size()).isEqualTo(2);
    }

    @Provide
    Arbitrary<List<Tuple.Tuple2<Boolean, Integer>>> operations()
    {
        return Arbitraries.integers().between(0, 15).flatMap(id -> Arbitraries.of(true, true, false).map(touch -> Tuple.of(touch, id))).list().ofMaxSize(200);
    }

    @Property(tries = 300)
    void shouldMatchAnAccessOrderedSet(@ForAll("operations") final List<Tuple.Tuple2<Boolean, Integer>> ops)
    {
        final IntLruList list = new IntLruList(16);
        final LinkedHashSet<Integer> model = new LinkedHashSet<>();
        for (final Tuple.Tuple2<Boolean, Integer> op : ops)
        {
            if (op.get1())
            {
                list.touch(op.get2());
                model.remove(op.get2());
                model.add(op.get2());
            }
            else
            {
                assertThat(list.remove(op.get2())).isEqualTo(model.remove(op.get2()));
            }
            assertThat(list.size()).isEqualTo(model.size());
        }
        assertThat(order(list)).containsExactlyElementsOf(model);
        for (int id = 0; id < 16; id++)
        {
            assertThat(list.contains(id)).isEqualTo(model.contains(id));
        }
    }

    @Test
    void shouldForgetEverythingOnClearAndKeepItsCapacity()
    {
        final IntLruList list = new IntLruList(4);
        list.touch(0);
        list.touch(3);
        list.clear();
        assertThat(list.size()).isZero();
        assertThat(list.capacity()).isEqualTo(4);
        assertThat(list.first()).isEqualTo(IntLruList.NONE);
        assertThat(list.last()).isEqualTo(IntLruList.NONE);
        assertThat(list.contains(0)).isFalse();
        assertThat(list.remove(3)).isFalse();
        list.touch(2);
        assertThat(list.first()).isEqualTo(2);
        assertThat(list.next(2)).isEqualTo(IntLruList.NONE);
    }
}
