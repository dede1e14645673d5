package io.kvtier.engine.eviction;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LruPolicyTest
{
    private static List<Integer> walk(final EvictionPolicy policy)
    {
        final List<Integer> order = new ArrayList<>();
        for (int page = policy.first(); page != EvictionPolicy.NONE; page = policy.next(page))
        {
            order.add(page);
        }
        return order;
    }

    @Test
    void shouldWalkFromTheLeastRecentlyTouched()
    {
        final LruPolicy policy = new LruPolicy(8);
        policy.onInsert(4, EvictionPolicy.NONE, 1);
        policy.onInsert(1, 4, 2);
        policy.onInsert(6, 1, 3);
        policy.onAccess(4, EvictionPolicy.NONE);

        assertThat(walk(policy)).containsExactly(1, 6, 4);
        assertThat(policy.size()).isEqualTo(3);
    }

    @Test
    void shouldEvictARequestsPagesFirstToLastWhateverTheParents()
    {
        // The README's LRU: touched in order, so the chain's head is the oldest; parent and key are ignored.
        final Replayer replayer = new Replayer(new LruPolicy(3), 3, 16);
        replayer.chain(new int[3], 1, 3);
        replayer.request(new int[] {9}, 1);

        assertThat(replayer.resident(1)).as("head of the chain").isFalse();
        assertThat(replayer.resident(2)).isTrue();
        assertThat(replayer.resident(3)).isTrue();
    }

    @Test
    void shouldRefreshAPageOnAHit()
    {
        final Replayer replayer = new Replayer(new LruPolicy(3), 3, 16);
        final int[] scratch = new int[3];
        replayer.chain(scratch, 1, 3);
        replayer.request(new int[] {1}, 1);
        replayer.request(new int[] {9}, 1);

        assertThat(replayer.resident(1)).isTrue();
        assertThat(replayer.resident(2)).isFalse();
    }

    @Test
    void shouldForgetARemovedPage()
    {
        final LruPolicy policy = new LruPolicy(4);
        policy.onInsert(0, EvictionPolicy.NONE, 1);
        policy.onInsert(1, EvictionPolicy.NONE, 2);
        policy.onRemove(0);

        assertThat(walk(policy)).containsExactly(1);
        assertThat(policy.size()).isEqualTo(1);
    }

    @Test
    void shouldRejectNextForAPageTheWalkDidNotReturnLast()
    {
        final LruPolicy policy = new LruPolicy(4);
        policy.onInsert(0, EvictionPolicy.NONE, 1);
        policy.onInsert(1, EvictionPolicy.NONE, 2);
        policy.first();

        assertThatThrownBy(() -> policy.next(1)).isInstanceOf(IllegalStateException.class).hasMessageContaining("the walk last returned 0");
    }

    @Test
    void shouldRejectANegativeCapacity()
    {
        assertThatThrownBy(() -> new LruPolicy(-1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("capacity=-1");
    }
}
