package io.kvtier.engine.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The memory of keys L3 said it lacks: bounded, expiring, forgetting a key once L3 has it. */
class NegativeProbeCacheTest
{
    private static final long TTL = 1_000;
    private static final long NOW = 5_000_000;

    @Test
    void shouldRememberAMissingKeyForItsTimeToLiveOnly()
    {
        final NegativeProbeCache cache = new NegativeProbeCache(64, TTL);
        assertThat(cache.isMissing(1, 2, NOW)).isFalse();

        cache.missing(1, 2, NOW);

        assertThat(cache.isMissing(1, 2, NOW)).isTrue();
        assertThat(cache.isMissing(1, 2, NOW + TTL - 1)).isTrue();
        assertThat(cache.isMissing(1, 2, NOW + TTL)).isFalse();
        assertThat(cache.isMissing(1, 3, NOW)).as("another key").isFalse();
        assertThat(cache.isMissing(2, 2, NOW)).as("another key").isFalse();
    }

    @Test
    void shouldForgetAKeyL3HasNowButNotAnotherKey()
    {
        final NegativeProbeCache cache = new NegativeProbeCache(64, TTL);
        cache.missing(1, 2, NOW);
        cache.present(1, 3);
        assertThat(cache.isMissing(1, 2, NOW)).isTrue();

        cache.present(1, 2);

        assertThat(cache.isMissing(1, 2, NOW)).isFalse();
        cache.missing(1, 2, NOW + 10);
        assertThat(cache.isMissing(1, 2, NOW + 10)).as("remembered again when L3 lacks it again").isTrue();
    }

    @Test
    void shouldRememberNoMoreKeysThanItHasSlots()
    {
        final NegativeProbeCache cache = new NegativeProbeCache(8, TTL);
        for (long k = 1; k <= 100; k++)
        {
            cache.missing(9, k, NOW);
        }
        int remembered = 0;
        for (long k = 1; k <= 100; k++)
        {
            remembered += cache.isMissing(9, k, NOW) ? 1 : 0;
        }
        assertThat(remembered).isBetween(1, 8);
        assertThat(cache.isMissing(9, 100, NOW)).as("a newer key replaces an older one in its slot").isTrue();
    }

    @Test
    void shouldExpireAcrossTheClockWrappingPastLongMaxValue()
    {
        final NegativeProbeCache cache = new NegativeProbeCache(16, TTL);
        final long now = Long.MAX_VALUE - TTL / 2;
        cache.missing(1, 2, now);
        assertThat(cache.isMissing(1, 2, now + TTL - 1)).isTrue();
        assertThat(cache.isMissing(1, 2, now + TTL)).isFalse();
    }

    @Test
    void shouldRememberNothingWhenTurnedOff()
    {
        final NegativeProbeCache cache = new NegativeProbeCache(64, 0);
        cache.missing(1, 2, NOW);
        assertThat(cache.isMissing(1, 2, NOW)).isFalse();
    }

    @Test
    void shouldNotTakeAnEmptySlotForTheKeyOfAllZeroes()
    {
        // An engine clock is comparable only with itself: it may read below zero.
        final NegativeProbeCache cache = new NegativeProbeCache(16, TTL);
        assertThat(cache.isMissing(0, 0, -NOW)).isFalse();
        cache.missing(0, 0, -NOW);
        cache.present(0, 0);
        assertThat(cache.isMissing(0, 0, -NOW)).isFalse();
    }
}
