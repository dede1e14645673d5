package io.kvtier.engine.eviction;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AdaptivePolicyTest
{
    private static final int CAPACITY = 256;

    /**
     * Forty conversations of four blocks come back every round, and between them documents of 64 blocks are read
     * once: 800 distinct blocks between two visits of a conversation, so recency keeps none of them.
     */
    private static Replayer scans(final EvictionPolicy policy, final int rounds)
    {
        final Replayer replayer = new Replayer(policy, CAPACITY, 1_000 + rounds * 640);
        scanRounds(replayer, rounds, 1_000);
        return replayer;
    }

    /** The rounds of {@link #scans}, documents numbered from {@code firstDocumentKey}; returns the hits. */
    private static long scanRounds(final Replayer replayer, final int rounds, final int firstDocumentKey)
    {
        final long before = replayer.hits();
        final int[] scratch = new int[64];
        int document = firstDocumentKey;
        for (int round = 0; round < rounds; round++)
        {
            for (int conversation = 0; conversation < 40; conversation++)
            {
                replayer.chain(scratch, 1 + 4 * conversation, 4);
                if (conversation % 4 == 3)
                {
                    replayer.chain(scratch, document, 64);
                    document += 64;
                }
            }
        }
        return replayer.hits() - before;
    }

    /**
     * Thirty conversations take turns at random; each turn re-reads the conversation and adds two blocks, and a
     * conversation ends after ten turns: a block's next use is soon or never, so recency is what works.
     */
    private static Replayer chats(final EvictionPolicy policy, final int turns)
    {
        final Replayer replayer = new Replayer(policy, CAPACITY, 30 * 1_000);
        chatTurns(replayer, turns, 0);
        return replayer;
    }

    /** The turns of {@link #chats}, conversations keyed from {@code firstKey}; returns the hits. */
    private static long chatTurns(final Replayer replayer, final int turns, final int firstKey)
    {
        final long before = replayer.hits();
        final int conversations = 30;
        final SplittableRandom random = new SplittableRandom(5);
        final int[] length = new int[conversations];
        final int[] epoch = new int[conversations];
        final int[] scratch = new int[32];
        for (int turn = 0; turn < turns; turn++)
        {
            final int c = random.nextInt(conversations);
            if (length[c] >= 20)
            {
                length[c] = 0;
                epoch[c]++;
            }
            length[c] += 2;
            final int base = firstKey + c * 1_000 + (epoch[c] % 40) * 24;
            replayer.chain(scratch, base, length[c]);
        }
        return replayer.hits() - before;
    }

    /** A policy that is given idle time before every call, as the engine thread gives it between requests. */
    private static EvictionPolicy idling(final AdaptivePolicy policy, final long seed)
    {
        final SplittableRandom random = new SplittableRandom(seed);
        return new EvictionPolicy()
        {
            @Override
            public void onInsert(final int page, final int parent, final long keyHash)
            {
                policy.maintain(1 + random.nextInt(8));
                policy.onInsert(page, parent, keyHash);
            }

            @Override
            public void onAccess(final int page, final int parent)
            {
                policy.maintain(1 + random.nextInt(8));
                policy.onAccess(page, parent);
            }

            @Override
            public void onRemove(final int page)
            {
                policy.onRemove(page);
            }

            @Override
            public int first()
            {
                return policy.first();
            }

            @Override
            public int next(final int page)
            {
                return policy.next(page);
            }

            @Override
            public String name()
            {
                return policy.name();
            }
        };
    }

    @Test
    void shouldStartWithRecency()
    {
        final AdaptivePolicy policy = new AdaptivePolicy(CAPACITY);
        assertThat(policy.setting()).isEqualTo(SegmentedPolicy.CHAIN);
        assertThat(policy.name()).isEqualTo("adaptive");
        assertThat(policy.sampleRate()).as("a small pool is simulated whole").isEqualTo(1);
    }

    @Test
    void shouldTurnToAdmissionWhenDocumentsReadOnceFloodThePool()
    {
        final AdaptivePolicy policy = new AdaptivePolicy(CAPACITY);
        final Replayer adaptive = scans(policy, 30);
        final Replayer lru = scans(new LruPolicy(CAPACITY), 30);

        assertThat(policy.setting()).isIn(SegmentedPolicy.ADMISSION, SegmentedPolicy.FREQUENCY);
        assertThat(lru.hits()).as("LRU keeps no conversation").isZero();
        assertThat(adaptive.hitRate()).as("the conversations are 20% of the blocks").isGreaterThan(0.15);
    }

    @Test
    void shouldKeepRecencyWhenRecencyIsBest()
    {
        final AdaptivePolicy policy = new AdaptivePolicy(CAPACITY);
        final Replayer adaptive = chats(policy, 20_000);
        final Replayer lru = chats(new LruPolicy(CAPACITY), 20_000);
        final Replayer admission = chats(new SegmentedPolicy(CAPACITY, SegmentedPolicy.ADMISSION), 20_000);

        assertThat(admission.hitRate()).as("admission loses here").isLessThan(lru.hitRate());
        assertThat(adaptive.hits()).as("adaptive %.4f, LRU %.4f", adaptive.hitRate(), lru.hitRate()).isGreaterThanOrEqualTo(lru.hits());
    }

    @Test
    void shouldPutSampledEventsOffUntilIdleTimeOrAChoice()
    {
        final AdaptivePolicy policy = new AdaptivePolicy(CAPACITY);
        final Replayer replayer = new Replayer(policy, CAPACITY, 10_000);
        final int[] scratch = new int[16];
        replayer.chain(scratch, 1, 10);
        replayer.chain(scratch, 1, 10);

        assertThat(policy.deferredEvents()).as("the requests paid a record a page; the pool's policy heard nothing yet").isEqualTo(20);
        assertThat(policy.pendingEvents()).isZero();
        assertThat(policy.maintain(4)).isEqualTo(4);
        assertThat(policy.deferredEvents()).isEqualTo(16);
        assertThat(policy.pendingEvents()).as("a pool this small samples every chain; none replayed in the miniatures yet").isEqualTo(4);
        assertThat(policy.maintain(100)).as("16 events applied, then 20 replayed").isEqualTo(36);
        assertThat(policy.maintain(100)).isZero();
        for (final MiniatureCache miniature : policy.miniatures())
        {
            assertThat(miniature.hits()).as("the second request hit all ten in %s", miniature.setting().name()).isEqualTo(10);
        }
    }

    @Test
    void shouldApplyWrittenDownEventsBeforeAWalkOrARemoval()
    {
        final AdaptivePolicy policy = new AdaptivePolicy(CAPACITY);
        policy.onInsert(0, EvictionPolicy.NONE, Replayer.hash(0));
        policy.onInsert(1, EvictionPolicy.NONE, Replayer.hash(1));
        policy.onAccess(0, EvictionPolicy.NONE);
        assertThat(policy.deferredEvents()).isEqualTo(3);

        assertThat(policy.first()).as("the hit on page 0 came last, so page 1 goes first").isEqualTo(1);
        assertThat(policy.deferredEvents()).isZero();

        policy.onAccess(1, EvictionPolicy.NONE);
        policy.onRemove(0);
        assertThat(policy.deferredEvents()).as("a removal comes after the events before it").isZero();
        assertThat(policy.first()).isEqualTo(1);
        assertThat(policy.next(1)).isEqualTo(EvictionPolicy.NONE);

        policy.first();
        policy.onAccess(1, EvictionPolicy.NONE);
        assertThatThrownBy(() -> policy.next(1)).as("a hit written down ends the walk all the same").isInstanceOf(IllegalStateException.class);
    }

    @Test
    void shouldReplayPutOffEventsByItselfWhenNeverIdle()
    {
        // Its window (2,048 events) is longer than its ring: never given idle time, it has to catch up by itself.
        final int capacity = 2_048;
        final AdaptivePolicy policy = new AdaptivePolicy(capacity);
        final Replayer replayer = new Replayer(policy, capacity, 10_000);
        final int[] scratch = new int[16];
        int events = 0;
        for (int i = 0; policy.pendingEvents() < AdaptivePolicy.PENDING; i++)
        {
            replayer.chain(scratch, 100 + 16 * (i % 100), 16);
            events += 16;
        }
        assertThat(policy.deferredEvents()).as("a full record applied its events by itself").isLessThan(AdaptivePolicy.DEFERRED);
        final int deferred = policy.deferredEvents();
        policy.first();
        assertThat(policy.pendingEvents()).as("a full ring replays its oldest part").isEqualTo(AdaptivePolicy.PENDING - AdaptivePolicy.CATCH_UP + deferred);
        for (; events < capacity; events++)
        {
            replayer.chain(scratch, 1, 1);
        }
        policy.first();
        assertThat(policy.pendingEvents()).as("the choice after 2,048 events replayed every event left").isZero();
        assertThat(policy.maintain(1)).isZero();
    }

    @Test
    void shouldChooseAndOrderAlikeWhetherPutOffEventsAreReplayedEarlyOrLate()
    {
        final AdaptivePolicy early = new AdaptivePolicy(CAPACITY);
        final AdaptivePolicy late = new AdaptivePolicy(CAPACITY);
        final Replayer earlyReplayer = new Replayer(idling(early, 9), CAPACITY, 100_000);
        final Replayer lateReplayer = new Replayer(late, CAPACITY, 100_000);
        // Documents read once, then chats, then documents again: the choice moves off recency and back.
        final SegmentedPolicy.Setting[] settings = new SegmentedPolicy.Setting[3];
        final long[][] hits = new long[2][3];
        hits[0][0] = scanRounds(earlyReplayer, 30, 1_000);
        hits[1][0] = scanRounds(lateReplayer, 30, 1_000);
        settings[0] = late.setting();
        hits[0][1] = chatTurns(earlyReplayer, 20_000, 30_000);
        hits[1][1] = chatTurns(lateReplayer, 20_000, 30_000);
        settings[1] = late.setting();
        hits[0][2] = scanRounds(earlyReplayer, 30, 61_000);
        hits[1][2] = scanRounds(lateReplayer, 30, 61_000);
        settings[2] = late.setting();

        assertThat(settings[0]).as("documents made it leave recency").isNotEqualTo(SegmentedPolicy.CHAIN);
        assertThat(settings[1]).as("chats brought it back").isEqualTo(SegmentedPolicy.CHAIN);
        assertThat(early.setting()).isEqualTo(settings[2]);
        assertThat(hits[0]).containsExactly(hits[1]);
        for (int page = early.first(), other = late.first(); page != EvictionPolicy.NONE || other != EvictionPolicy.NONE;
             page = early.next(page), other = late.next(other))
        {
            assertThat(page).isEqualTo(other);
        }
    }

    @Test
    void shouldSampleWholeChainsOfALargePool()
    {
        final AdaptivePolicy policy = new AdaptivePolicy(10_000);
        assertThat(policy.sampleRate()).isEqualTo(4);
        for (final MiniatureCache miniature : policy.miniatures())
        {
            assertThat(miniature.capacity()).isEqualTo(2_500);
        }
        // Chains hang off a hub; each is in the sample or out of it as a whole.
        final Replayer replayer = new Replayer(policy, 10_000, 100_000);
        final int[] keys = new int[9];
        for (int chain = 0; chain < 400; chain++)
        {
            keys[0] = 0;
            for (int i = 1; i < keys.length; i++)
            {
                keys[i] = 1 + chain * 10 + i;
            }
            replayer.request(keys, keys.length);
        }
        double hits = 0;
        for (final MiniatureCache miniature : policy.miniatures())
        {
            hits += miniature.hits();
        }
        assertThat(hits).as("every key was new").isZero();
    }
}
