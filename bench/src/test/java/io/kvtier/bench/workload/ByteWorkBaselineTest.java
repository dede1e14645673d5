package io.kvtier.bench.workload;

import io.kvtier.client.Namespace;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The demo's no-engine baseline does the workload's page work, checks what it reads, and leaves nothing behind. */
class ByteWorkBaselineTest
{
    private static final WorkloadRunner.Options OPTIONS = new WorkloadRunner.Options(2, 64, new Namespace("baseline-test", "page64", 0, ""), 0.25);

    @Test
    void shouldReadBackAndWritePagesOfTheWorkloadSplittingWarmupFromSteadyState(@TempDir final Path dir) throws Exception
    {
        final ChatWorkload.Shape shape = ChatWorkload.Shape.demo(7, 30);
        final ByteWorkBaseline.Result result = ByteWorkBaseline.run(shape, OPTIONS, 4096, 4_000, dir);

        assertThat(result.clients()).isEqualTo(2);
        assertThat(result.warmup().requests()).as("a quarter of the expected requests").isEqualTo(OPTIONS.warmupRequests(shape.expectedRequests()));
        assertThat(result.steady().requests()).isPositive();
        final long pagesRead = result.warmup().pagesRead() + result.steady().pagesRead();
        final long pagesWritten = result.warmup().pagesWritten() + result.steady().pagesWritten();
        assertThat(pagesWritten).as("the prompts' new pages").isPositive();
        assertThat(pagesRead).as("turns after the first find their conversation's prefix").isPositive();
        assertThat(result.pagesNotCached()).as("4,000 frames hold this workload (at most 90 pages a conversation)").isZero();
        assertThat(result.measured()).isEqualTo(result.steady());
        assertThat(result.measured().pageMegabytesPerSecond()).isPositive();
        assertThat(result.passes()).as("every pass's steady state").hasSize(ByteWorkBaseline.PASSES);
        assertThat(result.passes().stream().sorted().toList().get(ByteWorkBaseline.PASSES / 2)).as("the result is the median pass's")
            .isEqualTo(result.measured().pageMegabytesPerSecond());
        assertThat(result.clientCpuNanos()).as("its threads' CPU").isPositive();
        try (var left = Files.list(dir))
        {
            assertThat(left).as("the frames' file is unlinked once mapped").isEmpty();
        }
    }

    @Test
    void shouldCountPagesItHasNoFrameForAsNotCached(@TempDir final Path dir) throws Exception
    {
        final ByteWorkBaseline.Result result = ByteWorkBaseline.run(ChatWorkload.Shape.demo(7, 12), OPTIONS, 4096, 50, dir);
        assertThat(result.warmup().pagesWritten() + result.steady().pagesWritten()).isEqualTo(50);
        assertThat(result.pagesNotCached()).isPositive();
    }

    @Test
    void shouldRefuseFramesItsDirectoryCannotHoldNamingHowMuch(@TempDir final Path dir)
    {
        assertThatThrownBy(() -> ByteWorkBaseline.run(ChatWorkload.Shape.demo(7, 12), OPTIONS, 1 << 30, 1 << 20, dir))
            .isInstanceOf(java.io.IOException.class).hasMessageContaining("the no-engine baseline needs").hasMessageContaining(dir.toString());
    }

    @Test
    void shouldHideAPageUntilItIsPublishedAndGiveEachKeyOneWriter()
    {
        final ByteWorkBaseline.FrameTable table = new ByteWorkBaseline.FrameTable(2);
        final AtomicInteger next = new AtomicInteger();
        assertThat(table.claim(1, 2, next, 2)).isZero();
        assertThat(table.find(1, 2)).as("being written: not visible").isEqualTo(-1);
        assertThat(table.claim(1, 2, next, 2)).as("a second writer of the key").isEqualTo(ByteWorkBaseline.FrameTable.PRESENT);
        table.publish(1, 2);
        assertThat(table.find(1, 2)).isZero();
        assertThat(table.claim(3, 4, next, 2)).isEqualTo(1);
        assertThat(table.claim(5, 6, next, 2)).as("no frame left").isEqualTo(ByteWorkBaseline.FrameTable.FULL);
        assertThat(table.find(5, 6)).isEqualTo(-1);
    }

    @Test
    void shouldGiveTheDemosThroughputOverItsOwn()
    {
        final ByteWorkBaseline.Result baseline = new ByteWorkBaseline.Result(2, 100, new RunPhase(10, 0, 10, 1_000_000, 1_000_000_000L),
            new RunPhase(30, 100, 100, 1_000_000, 1_000_000_000L), 0, 1_000_000L, List.of());
        final WorkloadReport demo = new WorkloadReport(40, 2, 500, 100, 0, 100, 100, 0, 0, 1_000_000, 3_000_000_000L, 1, 2, 3, 4,
            java.util.Map.of(), java.util.Map.of(), new RunPhase(10, 0, 10, 1_000_000, 1_000_000_000L), new RunPhase(30, 50, 50, 1_000_000, 2_000_000_000L));
        // 200 MB/s against 50 MB/s: the steady states', not the whole runs'.
        assertThat(baseline.measured().pageMegabytesPerSecond()).isEqualTo(200.0);
        assertThat(demo.measured().pageMegabytesPerSecond()).isEqualTo(50.0);
        assertThat(baseline.ratio(demo)).isEqualTo(0.25);
    }
}
