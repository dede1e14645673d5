package io.kvtier.engine.eviction;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FrequencySketchTest
{
    @Test
    void shouldCountAKeyUpToFifteen()
    {
        final FrequencySketch sketch = new FrequencySketch(1 << 16);
        assertThat(sketch.frequency(7)).isZero();
        for (int i = 1; i <= 20; i++)
        {
            sketch.increment(7);
            assertThat(sketch.frequency(7)).isEqualTo(Math.min(i, FrequencySketch.MAX));
        }
        assertThat(sketch.frequency(8)).isZero();
    }

    @Test
    void shouldNeverUnderestimateWhatItCounted()
    {
        final FrequencySketch sketch = new FrequencySketch(1 << 14);
        final int keys = 2_000;
        for (int key = 0; key < keys; key++)
        {
            for (int i = 0; i < key % 4; i++)
            {
                sketch.increment(key);
            }
        }
        int exact = 0;
        for (int key = 0; key < keys; key++)
        {
            assertThat(sketch.frequency(key)).isGreaterThanOrEqualTo(key % 4);
            exact += sketch.frequency(key) == key % 4 ? 1 : 0;
        }
        assertThat(exact).as("keys counted exactly by a sketch of eight counters per key").isGreaterThan(keys / 2);
    }

    @Test
    void shouldHalveEveryCounterAfterTenIncrementsPerCounter()
    {
        final FrequencySketch sketch = new FrequencySketch(16);
        for (int i = 1; i < 160; i++)
        {
            sketch.increment(3);
        }
        assertThat(sketch.frequency(3)).isEqualTo(FrequencySketch.MAX);
        sketch.increment(3);
        assertThat(sketch.frequency(3)).as("the 160th increment halves").isEqualTo(FrequencySketch.MAX / 2);
        for (int i = 0; i < 159; i++)
        {
            sketch.increment(4);
        }
        assertThat(sketch.frequency(3)).as("not yet halved again").isGreaterThanOrEqualTo(FrequencySketch.MAX / 2);
        sketch.increment(4);
        assertThat(sketch.frequency(3)).isLessThanOrEqualTo(FrequencySketch.MAX / 2);
    }

    @Test
    void shouldEstimateAfterIncrementingAsIncrementThenFrequencyDo()
    {
        // A sketch of 64 counters: a key's four counters often coincide, and it halves every 640 increments.
        final FrequencySketch fused = new FrequencySketch(64);
        final FrequencySketch separate = new FrequencySketch(64);
        final SplittableRandom random = new SplittableRandom(3);
        for (int i = 0; i < 20_000; i++)
        {
            final long key = random.nextInt(40) - 20L;
            separate.increment(key);
            assertThat(fused.incrementAndEstimate(key)).as("increment %d of key %d", i, key).isEqualTo(separate.frequency(key));
        }
        for (long key = -20; key < 20; key++)
        {
            assertThat(fused.frequency(key)).isEqualTo(separate.frequency(key));
        }
    }

    @Test
    void shouldSizeForAtLeastSixteenCountersAPage()
    {
        assertThat(FrequencySketch.countersFor(0)).isEqualTo(1 << 20);
        assertThat(FrequencySketch.countersFor(100_000)).isEqualTo(1 << 21);
        assertThat(FrequencySketch.countersFor(Integer.MAX_VALUE - 8)).isEqualTo(1 << 30);
        assertThatThrownBy(() -> new FrequencySketch(24)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("counters=24");
    }
}
