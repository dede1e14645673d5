package io.kvtier.bench.ipc;

import io.kvtier.bench.workload.JitSettling;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The client's warm-up goes on past its own count while the compilers of its JVM or of the engine's are busy, and
 * no longer than its limit: the timed part of a fresh client JVM otherwise shared two cores with both JVMs' JIT
 * compilers. Time here is a clock the round trips move, 10 µs each.
 */
class IpcBenchClientWarmUpTest
{
    private static final long ROUND_TRIP_NANOS = TimeUnit.MICROSECONDS.toNanos(10);

    /** A clock each round trip moves on, and compilers that use half a core until a moment, then nothing. */
    private static final class FakeHost
    {
        long nowNanos;
        long roundTrips;
        final long compilersQuietFromNanos;
        final List<Long> engineAsked = new ArrayList<>();

        FakeHost(final long compilersQuietFromNanos)
        {
            this.compilersQuietFromNanos = compilersQuietFromNanos;
        }

        void roundTrip()
        {
            roundTrips++;
            nowNanos += ROUND_TRIP_NANOS;
        }

        long compileMillis()
        {
            return Math.min(nowNanos, compilersQuietFromNanos) / 2 / 1_000_000;
        }
    }

    @Test
    void shouldGoOnPastItsCountWhileThisJvmsCompilersAreBusy() throws Exception
    {
        final long quietFrom = TimeUnit.SECONDS.toNanos(2);
        final FakeHost host = new FakeHost(quietFrom);
        final long made = IpcBenchClient.warmUp(host::roundTrip, 5_000, new JitSettling(host::compileMillis), phase ->
        {
            host.engineAsked.add(host.nowNanos);
            return IpcBenchClient.SETTLED;
        }, () -> host.nowNanos, TimeUnit.SECONDS.toNanos(30));
        assertThat(made).as("what it says it made").isEqualTo(host.roundTrips);
        assertThat(made).as("more than its own 5,000 round trips (50 ms): the compilers were busy for 2 s").isGreaterThan(5_000);
        assertThat(host.nowNanos).as("it ended only after the compilers quieted down, and within two windows of it")
            .isGreaterThan(quietFrom)
            .isLessThan(quietFrom + 2 * JitSettling.WINDOW_NANOS + IpcBenchClient.SETTLE_CHUNK * ROUND_TRIP_NANOS);
        assertThat(host.engineAsked).as("the engine's side is asked only once this side is settled").allMatch(t -> t >= quietFrom);
    }

    @Test
    void shouldGoOnWhileTheEnginesCompilersAreBusyAndStopWhenTheParentSaysSettled() throws Exception
    {
        final FakeHost host = new FakeHost(0);
        final long made = IpcBenchClient.warmUp(host::roundTrip, 100, new JitSettling(host::compileMillis), phase ->
        {
            assertThat(phase).isEqualTo(IpcBenchClient.SETTLING);
            host.engineAsked.add(host.nowNanos);
            return host.engineAsked.size() < 4 ? "" : IpcBenchClient.SETTLED;
        }, () -> host.nowNanos, TimeUnit.SECONDS.toNanos(30));
        assertThat(host.engineAsked).as("asked until it answered settled, a chunk of round trips apart").hasSize(4);
        assertThat(made).isEqualTo(host.roundTrips);
        assertThat(host.engineAsked.get(3) - host.engineAsked.get(2)).isEqualTo(IpcBenchClient.SETTLE_CHUNK * ROUND_TRIP_NANOS);
    }

    @Test
    void shouldStopAtItsLimitWhenTheCompilersNeverQuietDownAndNotWaitAtAllWithNoLimit() throws Exception
    {
        final FakeHost busy = new FakeHost(Long.MAX_VALUE);
        final long limit = TimeUnit.SECONDS.toNanos(1);
        final long made = IpcBenchClient.warmUp(busy::roundTrip, 100, new JitSettling(busy::compileMillis), phase -> IpcBenchClient.SETTLED,
            () -> busy.nowNanos, limit);
        assertThat(made).isEqualTo(busy.roundTrips);
        assertThat(busy.nowNanos).as("stopped at the limit, within a chunk").isGreaterThanOrEqualTo(100 * ROUND_TRIP_NANOS + limit)
            .isLessThanOrEqualTo(100 * ROUND_TRIP_NANOS + limit + IpcBenchClient.SETTLE_CHUNK * ROUND_TRIP_NANOS);

        final FakeHost none = new FakeHost(Long.MAX_VALUE);
        assertThat(IpcBenchClient.warmUp(none::roundTrip, 100, new JitSettling(none::compileMillis), phase -> "", () -> none.nowNanos, 0))
            .as("--jit-wait 0s: its own count only").isEqualTo(100);
        assertThat(none.roundTrips).isEqualTo(100);
    }
}
