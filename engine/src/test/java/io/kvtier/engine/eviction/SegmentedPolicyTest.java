package io.kvtier.engine.eviction;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SegmentedPolicyTest
{
    private static List<Integer> walkKeys(final EvictionPolicy policy, final Replayer replayer)
    {
        final List<Integer> order = new ArrayList<>();
        for (int page = policy.first(); page != EvictionPolicy.NONE; page = policy.next(page))
        {
            order.add(replayer.keyOf(page));
        }
        return order;
    }

    @Test
    void shouldEvictAChainsTailBeforeItsHead()
    {
        final SegmentedPolicy policy = new SegmentedPolicy(8, SegmentedPolicy.CHAIN);
        final Replayer replayer = new Replayer(policy, 8, 64);
        replayer.chain(new int[4], 10, 4);
        replayer.chain(new int[2], 20, 2);

        // Each request's pages tail first; the older request first.
        assertThat(walkKeys(policy, replayer)).containsExactly(13, 12, 11, 10, 21, 20);
    }

    @Test
    void shouldKeepAHitChainInOrderTailFirst()
    {
        final SegmentedPolicy policy = new SegmentedPolicy(8, SegmentedPolicy.CHAIN);
        final Replayer replayer = new Replayer(policy, 8, 64);
        final int[] scratch = new int[4];
        replayer.chain(scratch, 10, 3);
        replayer.chain(scratch, 20, 1);
        // The conversation comes back with one more block: hits on 10..12, then 13 is new.
        replayer.chain(scratch, 10, 4);

        assertThat(walkKeys(policy, replayer)).containsExactly(20, 13, 12, 11, 10);
    }

    @Test
    void shouldGiveAHitChainThatIsInPlaceAlreadyNewStamps()
    {
        final SegmentedPolicy policy = new SegmentedPolicy(8, SegmentedPolicy.CHAIN);
        final Replayer replayer = new Replayer(policy, 8, 64);
        final int[] scratch = new int[4];
        // Nine sights take the chain to the top level's list, where more sights leave it.
        for (int sight = 0; sight < 9; sight++)
        {
            replayer.chain(scratch, 10, 3);
        }
        replayer.chain(scratch, 20, 1);
        // Hits on the chain touched last in its list: each page is where the hit would put it, so none moves.
        replayer.chain(scratch, 10, 3);

        // Touched after 20, the chain now goes after it: its pages took new stamps although none moved.
        assertThat(walkKeys(policy, replayer)).containsExactly(20, 12, 11, 10);
    }

    @Test
    void shouldEvictPagesSeenForTheFirstTimeBeforeAnyOtherUnderAdmission()
    {
        final SegmentedPolicy policy = new SegmentedPolicy(6, SegmentedPolicy.ADMISSION);
        final Replayer replayer = new Replayer(policy, 6, 256);
        final int[] scratch = new int[16];
        replayer.chain(scratch, 1, 3);
        replayer.chain(scratch, 1, 3);
        // A long document read once: under LRU it would flush the conversation.
        replayer.chain(scratch, 100, 16);
        assertThat(replayer.chain(scratch, 1, 3)).as("the conversation's hits after the document").isEqualTo(3);
        assertThat(policy.probationSize()).as("what is left of the document").isLessThanOrEqualTo(3);
    }

    @Test
    void shouldLetTheSameDocumentFlushAChainUnderChain()
    {
        final SegmentedPolicy policy = new SegmentedPolicy(6, SegmentedPolicy.CHAIN);
        final Replayer replayer = new Replayer(policy, 6, 256);
        final int[] scratch = new int[16];
        replayer.chain(scratch, 1, 3);
        replayer.chain(scratch, 1, 3);
        replayer.chain(scratch, 100, 16);

        assertThat(replayer.chain(scratch, 1, 3)).isZero();
    }

    @Test
    void shouldAdmitAPageComingBackForItsSecondSight()
    {
        final SegmentedPolicy policy = new SegmentedPolicy(4, SegmentedPolicy.ADMISSION);
        final Replayer replayer = new Replayer(policy, 4, 256);
        final int[] scratch = new int[8];
        replayer.chain(scratch, 1, 2);
        replayer.chain(scratch, 50, 8);
        assertThat(replayer.resident(1)).as("a first sight does not outlast a flood of first sights").isFalse();

        replayer.chain(scratch, 1, 2);
        replayer.chain(scratch, 70, 8);
        assertThat(replayer.chain(scratch, 1, 2)).as("seen twice, the chain stays").isEqualTo(2);
    }

    @Test
    void shouldLetFirstSightsHoldTheirShareUnderProbation()
    {
        final SegmentedPolicy policy = new SegmentedPolicy(8, SegmentedPolicy.PROBATION);
        final Replayer replayer = new Replayer(policy, 8, 256);
        final int[] scratch = new int[8];
        replayer.chain(scratch, 1, 2);
        replayer.chain(scratch, 1, 2);
        replayer.chain(scratch, 5, 2);
        replayer.chain(scratch, 5, 2);
        // Four main pages; new pages may take the other four, then evict each other, not the main ones.
        replayer.chain(scratch, 100, 8);

        assertThat(policy.probationSize()).isEqualTo(4);
        assertThat(replayer.chain(scratch, 1, 2) + replayer.chain(scratch, 5, 2)).isEqualTo(4);
        assertThat(replayer.resident(107)).isTrue();
        assertThat(replayer.resident(104)).isTrue();
        assertThat(replayer.resident(103)).isFalse();
    }

    @Test
    void shouldKeepChainsSeenMoreOftenLongerUnderFrequency()
    {
        final SegmentedPolicy frequency = new SegmentedPolicy(6, SegmentedPolicy.FREQUENCY);
        final SegmentedPolicy chain = new SegmentedPolicy(6, SegmentedPolicy.CHAIN);
        assertThat(survivesAsOldest(frequency)).as("frequency keeps the old, often seen conversation").isTrue();
        assertThat(survivesAsOldest(chain)).as("recency does not").isFalse();
    }

    /** @return whether a conversation seen five times, then left alone, outlives a newer one seen twice */
    private static boolean survivesAsOldest(final SegmentedPolicy policy)
    {
        final Replayer replayer = new Replayer(policy, 6, 256);
        final int[] scratch = new int[4];
        for (int turn = 0; turn < 5; turn++)
        {
            replayer.chain(scratch, 1, 2);
        }
        replayer.chain(scratch, 10, 2);
        replayer.chain(scratch, 10, 2);
        // Two keys coming back for their second sight go to the main lists and evict from them.
        replayer.chain(scratch, 30, 2);
        replayer.chain(scratch, 40, 2);
        replayer.chain(scratch, 30, 2);
        replayer.chain(scratch, 40, 2);
        return replayer.resident(1) && replayer.resident(2);
    }

    @Test
    void shouldStartANewChainLevelBelowAHub()
    {
        // Key 0 is every conversation's first block, so it is seen far more than any conversation; its
        // children must not inherit that, or every new conversation would look like a popular one.
        final SegmentedPolicy policy = new SegmentedPolicy(64, SegmentedPolicy.FREQUENCY);
        final Replayer replayer = new Replayer(policy, 64, 256);
        for (int conversation = 0; conversation < 10; conversation++)
        {
            replayer.request(new int[] {0, 10 * conversation + 1, 10 * conversation + 2}, 3);
        }
        replayer.request(new int[] {0, 51, 52, 53}, 4);

        assertThat(policy.isHub(replayer.pageOf(0))).isTrue();
        assertThat(policy.chainLevel(replayer.pageOf(0))).isEqualTo(11);
        assertThat(policy.chainLevel(replayer.pageOf(51))).as("second sight below the hub").isEqualTo(2);
        assertThat(policy.chainLevel(replayer.pageOf(52))).as("inherited from 51").isEqualTo(2);
        assertThat(policy.chainLevel(replayer.pageOf(53))).as("a first sight in that conversation, inherited too").isEqualTo(2);
        // First sights go first, the conversations' new pages before the hub.
        assertThat(policy.probationSize()).isEqualTo(19);
        assertThat(policy.first()).isNotEqualTo(replayer.pageOf(0));
    }

    @Test
    void shouldFollowANewSettingFromTheNextEviction()
    {
        final SegmentedPolicy policy = new SegmentedPolicy(6, SegmentedPolicy.CHAIN);
        final Replayer replayer = new Replayer(policy, 6, 256);
        final int[] scratch = new int[16];
        replayer.chain(scratch, 1, 3);
        replayer.chain(scratch, 1, 3);
        policy.configure(SegmentedPolicy.ADMISSION);
        replayer.chain(scratch, 100, 16);

        assertThat(policy.setting()).isEqualTo(SegmentedPolicy.ADMISSION);
        assertThat(policy.name()).isEqualTo("admission");
        assertThat(replayer.chain(scratch, 1, 3)).isEqualTo(3);
    }

    @Test
    void shouldRejectAnOutOfRangeSetting()
    {
        assertThatThrownBy(() -> new SegmentedPolicy.Setting("x", 1.5, 0)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("probationShare=1.5");
        assertThatThrownBy(() -> new SegmentedPolicy.Setting("x", 0.5, -1)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("frequencyWeight=-1");
        assertThatThrownBy(() -> new SegmentedPolicy(-1, SegmentedPolicy.CHAIN)).isInstanceOf(IllegalArgumentException.class);
    }
}
