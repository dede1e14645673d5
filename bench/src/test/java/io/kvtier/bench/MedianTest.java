package io.kvtier.bench;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The median the benchmarks report over their rounds. */
class MedianTest
{
    @Test
    void shouldTakeTheMiddleOfAnOddCountAndTheMeanOfTheMiddleTwoOfAnEvenOneLeavingTheValuesAsTheyAre()
    {
        final double[] values = {9, 1, 5};
        assertThat(Median.of(values)).isEqualTo(5);
        assertThat(values).as("not sorted in place").containsExactly(9, 1, 5);
        assertThat(Median.of(new double[] {7, 1, 3, 100})).isEqualTo(5);
        assertThat(Median.of(List.of("aaaa", "a", "aaaaaaaaa"), String::length)).isEqualTo(4);
        assertThat(Median.of(new double[0])).isNaN();
    }
}
