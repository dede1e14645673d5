package io.kvtier.bench.workload;

import io.kvtier.engine.Engine;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.client.Namespace;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.client.pool.PageStateWord;
import org.junit.jupiter.api.Test;

import java.lang.foreign.ValueLayout;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The demo's driver reads back every page it is served: it must notice pages whose bytes were changed. */
class WorkloadRunnerTest
{
    private static Map<String, String> settings()
    {
        return Map.of(EngineConfig.POOL_PATH, "/dev/shm/kvtier-runner-" + ProcessHandle.current().pid() + "-" + System.nanoTime(),
            EngineConfig.POOL_SIZE, "8MiB", EngineConfig.POOL_PAGE_SIZE, "16KiB");
    }

    private static WorkloadRunner runner(final Engine engine)
    {
        return new WorkloadRunner(engine, new ChatWorkload(ChatWorkload.Shape.demo(11, 40)),
            new WorkloadRunner.Options(2, 256, new Namespace("runner-test", "page256", 0, "")));
    }

    @Test
    void shouldFindNoCorruptPageInAnHonestRun() throws Exception
    {
        try (Engine engine = Engine.start(EngineConfig.from(settings())))
        {
            final WorkloadReport report = runner(engine).run(null, 100);
            assertThat(report.pagesVerified()).isPositive();
            assertThat(report.pagesCorrupt()).isZero();
        }
    }

    @Test
    void shouldReportTheWarmupApartFromTheSteadyStateAndTheirSumAsTheWholeRun() throws Exception
    {
        try (Engine engine = Engine.start(EngineConfig.from(settings())))
        {
            final ChatWorkload workload = new ChatWorkload(ChatWorkload.Shape.demo(11, 40));
            final WorkloadRunner.Options options = new WorkloadRunner.Options(2, 256, new Namespace("runner-test", "page256", 0, ""), 0.3);
            final WorkloadReport report = new WorkloadRunner(engine, workload, options).run(null, 100);
            assertThat(report.warmup().requests()).isEqualTo(options.warmupRequests(workload.shape().expectedRequests())).isPositive();
            assertThat(report.steady().requests()).isPositive();
            assertThat(report.warmup().requests() + report.steady().requests()).isEqualTo(report.requests());
            assertThat(report.warmup().pagesRead() + report.steady().pagesRead()).isEqualTo(report.pagesVerified() + report.pagesCorrupt());
            assertThat(report.warmup().pagesWritten() + report.steady().pagesWritten()).isEqualTo(report.pagesWritten());
            assertThat(report.warmup().elapsedNanos() + report.steady().elapsedNanos()).isEqualTo(report.elapsedNanos());
            assertThat(report.measured()).isEqualTo(report.steady());
            assertThat(report.toText()).contains("in the steady state (").contains("warm-up             " + report.warmup().requests() + " requests in ");
            assertThat(report.toJson()).contains("\"warmup\":{\"requests\":" + report.warmup().requests() + ",")
                .contains("\"steady_state\":{\"requests\":" + report.steady().requests() + ",");
        }
    }

    @Test
    void shouldWarmUpAtLeastItsShareAndAtMostItsLimitWhenWaitingForTheJitAndReportTheCompileTime() throws Exception
    {
        try (Engine engine = Engine.start(EngineConfig.from(settings())))
        {
            final ChatWorkload workload = new ChatWorkload(ChatWorkload.Shape.demo(11, 40));
            final WorkloadRunner.Options options = new WorkloadRunner.Options(2, 256, new Namespace("runner-test", "page256", 0, ""), 0.3, true);
            final WorkloadReport report = new WorkloadRunner(engine, workload, options).run(null, 100);
            final long expected = workload.shape().expectedRequests();
            assertThat(report.requests()).as("the workload's requests, exactly as expected").isEqualTo(expected);
            // The request numbered at the limit ends the warm-up, or one a few further when another client's answer
            // was counted first and told the clock first: as many as the other clients, at most.
            assertThat(report.warmup().requests()).isBetween(options.warmupRequests(expected), options.warmupLimit(expected) + options.clients() - 1);
            assertThat(report.steady().requests()).as("the limit leaves a steady state").isPositive();
            assertThat(report.warmup().requests() + report.steady().requests()).isEqualTo(report.requests());
            assertThat(report.warmup().compileMillis()).as("a JVM that compiled its way through the warm-up").isPositive();
            assertThat(report.warmup().compileMillis() + report.steady().compileMillis()).isGreaterThanOrEqualTo(report.warmup().compileMillis());
            assertThat(report.toJson()).contains("\"jit_compile_ms\":" + report.warmup().compileMillis());
            assertThat(report.toText()).contains("JIT compilers");
        }
    }

    @Test
    void shouldRefuseAWarmupShareOutsideItsRangeNamingIt()
    {
        final Namespace namespace = new Namespace("runner-test", "page256", 0, "");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new WorkloadRunner.Options(2, 256, namespace, 0.95))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("warm-up share 0.95").hasMessageContaining("from 0 to 0.9");
    }

    @Test
    void shouldCountPagesWhoseBytesChangedInThePoolAsCorrupt() throws Exception
    {
        try (Engine engine = Engine.start(EngineConfig.from(settings())))
        {
            final PagePool pool = engine.pool();
            assertThat(runner(engine).run(null, 100).pagesCorrupt()).as("an honest first run").isZero();
            // One bit of every committed page flipped behind the engine's back, as a bad writer or bad memory would; then the
            // same workload again, whose hits are those pages. (A scribbler thread beside the run was not deterministic: on a
            // busy host the run could end before it, or between two flips of one page that put it back.)
            long flipped = 0;
            for (int page = 0; page < pool.pageCount(); page++)
            {
                if (PageStateWord.state(pool.metadata().stateWordAcquire(page)) == PageStateWord.SERVING)
                {
                    pool.frames().payload(page).set(ValueLayout.JAVA_BYTE, 100, (byte)(pool.frames().payload(page).get(ValueLayout.JAVA_BYTE, 100) ^ 0x40));
                    flipped++;
                }
            }
            assertThat(flipped).as("committed pages left by the first run").isPositive();
            final WorkloadReport report = runner(engine).run(null, 100);
            assertThat(report.hitPagesL2()).as("the second run hit the pool").isPositive();
            assertThat(report.pagesCorrupt()).as("pages read back wrong").isPositive();
        }
    }
}
