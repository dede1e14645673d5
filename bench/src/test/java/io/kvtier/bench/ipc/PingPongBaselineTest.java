package io.kvtier.bench.ipc;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
    void shouldRefuseToMeasureNothing(@TempDir final Path dir)
    {
        assertThatThrownBy(() -> PingPongBaseline.measure(dir, 0, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
