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

    private static List<Integer> walk(final EvictionPolicy policy)
    {
        final List<Integer> order = new ArrayList<>();
        for (int page = policy.first(); page != EvictionPolicy.NONE; page = policy.next(page))
        {
            order.add(page);
        }
        return order;
    }

    /** Inserts pages {@code first .. first + length - 1} as one chain, each under the one before. */
    private static void insertChain(final EvictionPolicy policy, final int first, final int length)
    {
        for (int page = first; page < first + length; page++)
        {
            policy.onInsert(page, page == first ? EvictionPolicy.NONE : page - 1, 0x1000L + page);
        }
    }

    /** Inserts a page whose key was seen before, so that it goes to the main list of level 2, as the hit chain does. */
    private static void insertSeen(final EvictionPolicy policy, final int page)
    {
        policy.onInsert(page, EvictionPolicy.NONE, 0x1000L + page);
        policy.onRemove(page);
        policy.onInsert(page, EvictionPolicy.NONE, 0x1000L + page);
    }

    /** Hits pages {@code first .. first + length - 1} as one request re-reading a chain. */
    private static void hitChain(final EvictionPolicy policy, final int first, final int length)
    {
        for (int page = first; page < first + length; page++)
        {
            policy.onAccess(page, page == first ? EvictionPolicy.NONE : page - 1);
        }
    }

    @Test
    void shouldRepairHitChainsWhereMovingThemAtOnceWouldPutThemDuringAWalkThatEvicts()
    {
        final SegmentedPolicy policy = new SegmentedPolicy(16, SegmentedPolicy.CHAIN);
        insertChain(policy, 0, 3); // x
        insertChain(policy, 3, 3); // y
        insertChain(policy, 6, 3); // z
        hitChain(policy, 0, 3);
        hitChain(policy, 3, 3);

        // Each page evicted as the walk returns it, the walk going on: the hit pages are moved as the walk meets them
        // (their old places come first) and still visited once each, in the order moving each hit at once gives.
        final List<Integer> evicted = new ArrayList<>();
        for (int page = policy.first(); page != EvictionPolicy.NONE; )
        {
            final int next = policy.next(page);
            policy.onRemove(page);
            evicted.add(page);
            page = next;
        }
        assertThat(evicted).containsExactly(8, 7, 6, 2, 1, 0, 5, 4, 3);
        assertThat(policy.size()).isZero();
    }

    @Test
    void shouldPutAPageWhoseParentWasHitAgainAtTheEndOfItsListNearerItsHitsStamp()
    {
        final SegmentedPolicy policy = new SegmentedPolicy(64, SegmentedPolicy.CHAIN);
        insertChain(policy, 0, 3); // a chain: 0, 1, 2
        for (int page = 3; page < 23; page++)
        {
            insertSeen(policy, page); // 20 pages placed before the chain's hit
        }
        hitChain(policy, 0, 3);
        for (int page = 23; page < 43; page++)
        {
            insertSeen(policy, page); // 20 after it
        }
        hitChain(policy, 0, 2); // the chain's prefix again: page 2's hit has no parent in place to go before now

        // Moved at once, page 2 would sit between the two groups of 20. The walk that meets it cannot find that place in
        // O(1): its hit is nearer the walk's start than the tail in stamps (20 pages placed before it, 21 after), so it
        // goes first; the prefix, hit last, goes last, tail first.
        final List<Integer> expected = new ArrayList<>();
        expected.add(2);
        for (int page = 3; page < 43; page++)
        {
            expected.add(page);
        }
        expected.add(1);
        expected.add(0);
        assertThat(walk(policy)).containsExactlyElementsOf(expected);
    }

    @Test
    void shouldPutAPageWhoseParentWasHitAgainAtTheTailWhenItsHitIsNearerIt()
    {
        final SegmentedPolicy policy = new SegmentedPolicy(64, SegmentedPolicy.CHAIN);
        insertChain(policy, 0, 3);
        for (int page = 3; page < 43; page++)
        {
            insertSeen(policy, page); // 40 pages placed before the chain's hit
        }
        hitChain(policy, 0, 3);
        for (int page = 43; page < 63; page++)
        {
            insertSeen(policy, page); // 20 after it
        }
        hitChain(policy, 0, 2);

        // Page 2's hit is nearer the tail in stamps: it goes MAX_SHIFT (16) pages back from its list's tail, before pages
        // 47 to 62, four pages later than its place (between 42 and 43). Pages 0 and 1, seen a third time, are a level up.
        final List<Integer> order = walk(policy);
        assertThat(order).hasSize(63);
        final int at = order.indexOf(2);
        assertThat(order.subList(at - 1, at + 17)).containsExactly(46, 2, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62);
        assertThat(order.subList(order.size() - 2, order.size())).containsExactly(1, 0);
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
