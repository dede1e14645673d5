package io.kvtier.bench.tier;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** The two goals, as the bench computes them from its cases: 0.9 of fio from 256 KiB, 0.8 at 64 KiB. */
class TierBenchmarkGoalTest
{
    private static TierBenchmark.Case write(final long pageBytes, final double ratio)
    {
        return new TierBenchmark.Case("write", pageBytes, 1, 8, 1_000_000, null, ratio);
    }

    @Test
    void shouldScoreEachPageSizeGroupAgainstItsOwnGoal()
    {
        final TierBenchmark.Result result = new TierBenchmark.Result(null, Map.of(), Set.of(), "", "fio", "", null, null, List.of(
            write(64 << 10, 0.81), write(64 << 10, 0.64), write(128 << 10, 0.10),
            write(256 << 10, 0.95), write(1 << 20, 0.85), write(4 << 20, Double.NaN),
            new TierBenchmark.Case("read", 256 << 10, 1, 8, 1_000_000, null, 0.5)));
        assertThat(result.smallGoalGeomean("write")).as("64 KiB only, not 128 KiB").isCloseTo(Math.sqrt(0.81 * 0.64), within(1e-9));
        assertThat(result.smallGoalCount("write")).as("0.81 meets 0.8, 0.64 does not").containsExactly(1, 2);
        assertThat(result.goalGeomean("write")).as("256 KiB and up, a case without fio left out").isCloseTo(Math.sqrt(0.95 * 0.85), within(1e-9));
        assertThat(result.goalCount("write")).containsExactly(1, 2);
        assertThat(result.goalCount("read")).containsExactly(0, 1);
        assertThat(result.smallGoalGeomean("read")).as("no 64 KiB reads").isNaN();
        assertThat(result.smallGoalCount("read")).containsExactly(0, 0);
    }
}
