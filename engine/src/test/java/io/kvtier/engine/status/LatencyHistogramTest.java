package io.kvtier.engine.status;

import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The single-writer latency histogram: its buckets' bounds, what it reports, and a reader beside its writer. */
class LatencyHistogramTest
{
    @Test
    void shouldCountEachLatencyInTheFirstBucketWhoseBoundHoldsIt()
    {
        final LatencyHistogram histogram = new LatencyHistogram();
        histogram.record(0);
        histogram.record(1_000);
        histogram.record(1_001);
        histogram.record(2_500);
        histogram.record(7_000_000);
        histogram.record(10_000_000_000L);
        histogram.record(10_000_000_001L);
        histogram.record(-5);
        final long[] counts = new long[LatencyHistogram.BUCKETS];
        assertThat(histogram.countsOpaque(counts)).isEqualTo(8);
        assertThat(counts[0]).as("0, 1 µs and a negative latency").isEqualTo(3);
        assertThat(counts[1]).as("1.001 and 2.5 µs").isEqualTo(2);
        assertThat(counts[12]).as("7 ms, at most 10 ms").isEqualTo(1);
        assertThat(counts[LatencyHistogram.UPPER_BOUNDS_NANOS.length - 1]).as("10 s").isEqualTo(1);
        assertThat(counts[LatencyHistogram.BUCKETS - 1]).as("past 10 s").isEqualTo(1);
        assertThat(histogram.sumNanosOpaque()).isEqualTo(1_000 + 1_001 + 2_500 + 7_000_000 + 10_000_000_000L + 10_000_000_001L);
    }

    @Test
    void shouldHaveBoundsThatOnlyGrowFromOneMicrosecondToTenSeconds()
    {
        final long[] bounds = LatencyHistogram.UPPER_BOUNDS_NANOS;
        assertThat(bounds[0]).isEqualTo(1_000L);
        assertThat(bounds[bounds.length - 1]).isEqualTo(10_000_000_000L);
        for (int i = 1; i < bounds.length; i++)
        {
            assertThat(bounds[i]).isGreaterThan(bounds[i - 1]);
            assertThat(LatencyHistogram.bucketOf(bounds[i])).isEqualTo(i);
            assertThat(LatencyHistogram.bucketOf(bounds[i - 1] + 1)).isEqualTo(i);
        }
    }

    @Test
    void shouldRefuseTooFewSlotsNamingHowManyItNeeds()
    {
        assertThatThrownBy(() -> new LatencyHistogram().countsOpaque(new long[3]))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("3 slots, need " + LatencyHistogram.BUCKETS);
    }

    @Test
    void shouldNeverShowAReaderACountThatShrinksOrBucketsThatDisagreeWithIt() throws Exception
    {
        final LatencyHistogram histogram = new LatencyHistogram();
        final int records = 2_000_000;
        final AtomicBoolean done = new AtomicBoolean();
        final AtomicReference<String> wrong = new AtomicReference<>();
        final Thread reader = Thread.ofPlatform().start(() ->
        {
            final long[] counts = new long[LatencyHistogram.BUCKETS];
            final long[] previous = new long[LatencyHistogram.BUCKETS];
            while (!done.get() && wrong.get() == null)
            {
                final long total = histogram.countsOpaque(counts);
                long sum = 0;
                for (int i = 0; i < counts.length; i++)
                {
                    sum += counts[i];
                    if (counts[i] < previous[i])
                    {
                        wrong.set("bucket " + i + " went from " + previous[i] + " to " + counts[i]);
                    }
                    previous[i] = counts[i];
                }
                if (sum != total || total > records)
                {
                    wrong.set("total " + total + " against buckets summing to " + sum);
                }
            }
        });
        for (int i = 0; i < records; i++)
        {
            histogram.record((i % 50) * 1_000L);
        }
        done.set(true);
        reader.join();
        assertThat(wrong.get()).isNull();
        assertThat(histogram.countsOpaque(new long[LatencyHistogram.BUCKETS])).isEqualTo(records);
    }
}
