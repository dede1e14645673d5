package io.kvtier.engine.eviction;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

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
        final int[] scratch = new int[64];
        int document = 1_000;
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
        return replayer;
    }

    /**
     * Thirty conversations take turns at random; each turn re-reads the conversation and adds two blocks, and a
     * conversation ends after ten turns: a block's next use is soon or never, so recency is what works.
     */
    private static Replayer chats(final EvictionPolicy policy, final int turns)
    {
        final int conversations = 30;
        final Replayer replayer = new Replayer(policy, CAPACITY, conversations * 1_000);
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
            final int base = c * 1_000 + (epoch[c] % 40) * 24;
            replayer.chain(scratch, base, length[c]);
        }
        return replayer;
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
