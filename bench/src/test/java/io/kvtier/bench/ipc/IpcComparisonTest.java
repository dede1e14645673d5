package io.kvtier.bench.ipc;

import io.kvtier.client.protocol.IdleStrategy;
import io.kvtier.engine.config.IdleStrategyKind;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The comparison's arithmetic and its reading of pairs: what it reports of a pair is the median over
 * the rounds (of each turn's own ratio, not a ratio of medians), and a pair it cannot read is refused
 * naming the strategies there are.
 */
class IpcComparisonTest
{
    private static IpcBenchmark.Phase phase(final long clientP50, final long baselineP50, final long engineSleeps)
    {
        final Histogram baseline = new Histogram(PingPongBaseline.HIGHEST_TRACKABLE_NANOS, 3);
        baseline.recordValue(baselineP50);
        final IdleStrategy.Counts none = new IdleStrategy.Counts(0, 0, 0, 0, 0);
        final IpcBenchClient.IpcBenchFigures client = new IpcBenchClient.IpcBenchFigures(100, clientP50, clientP50 * 2, clientP50 * 3, clientP50 * 4,
            1000, 1_000_000, none, none, 10, 0);
        return new IpcBenchmark.Phase(baseline, null, "none here", client, new IpcBenchmark.EngineWaits(engineSleeps, 0, 0, 0),
            new IpcBenchmark.EngineWaits(0, 0, 0, 0), 0);
    }

    @Test
    void shouldReadAPairOfStrategies()
    {
        assertThat(IpcComparison.Strategies.parse("backoff/adaptive"))
            .isEqualTo(new IpcComparison.Strategies(IdleStrategyKind.BACKOFF, IdleStrategy.Kind.ADAPTIVE));
        assertThat(IpcComparison.Strategies.parse("spin/spin").label()).isEqualTo("spin/spin");
    }

    @Test
    void shouldRefuseAPairItCannotReadNamingWhatThereIs()
    {
        assertThatThrownBy(() -> IpcComparison.Strategies.parse("backoff")).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("\"backoff\" is not ENGINE/CLIENT");
        assertThatThrownBy(() -> IpcComparison.Strategies.parse("nap/backoff")).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("the engine's strategy \"nap\" is none of [adaptive, backoff, spin, yield, sleep]");
        assertThatThrownBy(() -> IpcComparison.Strategies.parse("backoff/yield")).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("the client's strategy \"yield\" is none of [backoff, spin, sleep, adaptive, timed, awake]");
    }

    @Test
    void shouldTakeTheMedianOverTheRoundsOfEachTurnsOwnRatio()
    {
        // Ratios 10, 2 and 4: the median is 4, where the ratio of the median p50s (2,000 / 200) would be 10.
        final List<IpcBenchmark.Phase> rounds = List.of(phase(1_000, 100, 0), phase(2_000, 1_000, 0), phase(4_000, 1_000, 0));
        assertThat(IpcComparison.median(rounds, IpcBenchmark.Phase::rttP50Ratio)).isCloseTo(4.0, org.assertj.core.data.Offset.offset(0.01));
        assertThat(IpcComparison.median(rounds, p -> p.client().p50Nanos())).isEqualTo(2_000);
        assertThat(IpcComparison.median(rounds.subList(0, 2), p -> p.client().p50Nanos())).as("an even count: the middle two's mean").isEqualTo(1_500);
    }

    @Test
    void shouldReportEachPairsMediansAndEveryRoundsRatio()
    {
        final IpcBenchmark.Plan plan = new IpcBenchmark.Plan(10, 100, 8, 5, false, IdleStrategy.Kind.BACKOFF, 0);
        final IpcComparison.Result result = new IpcComparison.Result(plan, 3, List.of(
            new IpcComparison.PairFigures(IpcComparison.Strategies.parse("backoff/backoff"),
                List.of(phase(1_000, 100, 50), phase(2_000, 1_000, 0), phase(4_000, 1_000, 0)), List.of()),
            new IpcComparison.PairFigures(IpcComparison.Strategies.parse("spin/adaptive"),
                List.of(phase(300, 100, 0), phase(300, 100, 0), phase(300, 100, 0)), List.of())));
        assertThat(result.toJson()).contains("\"engine_idle_strategy\":\"backoff\",\"client_idle_strategy\":\"backoff\","
                + "\"rtt_p50_ratio_by_round\":[10.0,2.0,4.0],\"rtt_p50_ratio\":4.0,\"rtt_p50_ns\":2000")
            .contains("\"engine_sleeps_per_rtt\":0.167").contains("\"client_idle_strategy\":\"adaptive\",\"rtt_p50_ratio_by_round\":[3.0,3.0,3.0]")
            .contains("\"load_missing\":\"not measured: --no-load\"").doesNotContain("_loaded");
        assertThat(result.toText()).contains("backoff/backoff").contains("[10.00 2.00 4.00]").contains("spin/adaptive");
    }
}
