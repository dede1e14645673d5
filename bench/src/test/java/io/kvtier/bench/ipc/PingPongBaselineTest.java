package io.kvtier.bench.ipc;

import io.kvtier.nativeaccess.libc.Futex;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class PingPongBaselineTest
{
    @Test
    void shouldRecordEveryRoundTripWithASecondProcessAndLeaveNoFileBehind(@TempDir final Path dir) throws Exception
    {
        final Histogram histogram = PingPongBaseline.measure(dir, 100, 500);

        assertThat(histogram.getTotalCount()).isEqualTo(500);
        assertThat(histogram.getMinValue()).isPositive();
        try (var files = Files.list(dir))
        {
            assertThat(files).isEmpty();
        }
    }

    @Test
    void shouldRecordEveryWakeUpRoundTripAndLeaveNoFileBehind(@TempDir final Path dir) throws Exception
    {
        assumeTrue(Futex.instance().isPresent(), "no futex in this JVM");
        final Histogram histogram = PingPongBaseline.measureWakeUps(dir, 10, 200);

        assertThat(histogram.getTotalCount()).isEqualTo(200);
        assertThat(histogram.getMinValue()).isPositive();
        try (var files = Files.list(dir))
        {
            assertThat(files).isEmpty();
        }
    }

    @Test
    void shouldRefuseToMeasureNothing(@TempDir final Path dir)
    {
        assertThatThrownBy(() -> PingPongBaseline.measure(dir, 0, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PingPongBaseline.measureWakeUps(dir, 0, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
