package io.kvtier.cli;

import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.config.EngineConfig;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class StatCommandTest
{
    @Test
    void shouldPrintALiveEnginesCountersFromItsPoolFile() throws Exception
    {
        final String pool = "/dev/shm/kvtier-stat-test-" + ProcessHandle.current().pid();
        try (Engine engine = Engine.start(EngineConfig.from(Map.of("pool.path", pool, "pool.size", "1MiB", "pool.page-size", "64KiB")));
             Session session = engine.openSession())
        {
            session.keys().add(1, 2);
            session.reserve(0, 1);
            session.payloadLength(0, 5);
            session.commit(0, 1);
            final CliFixture.Result result = CliFixture.run("stat", "--pool", pool, "--json");
            assertThat(result.exitCode()).as(result.err()).isEqualTo(ExitCode.OK);
            assertThat(result.out()).contains("\"engine_alive\":true").contains("\"pages_committed\":1").contains("\"pages\":16")
                .contains("\"engine_pid\":" + ProcessHandle.current().pid());
        }
    }

    @Test
    void shouldSayWhenThereIsNoPool()
    {
        final CliFixture.Result result = CliFixture.run("stat", "--pool", "/dev/shm/kvtier-no-such-pool");
        assertThat(result.exitCode()).isEqualTo(ExitCode.UNAVAILABLE);
        assertThat(result.err()).contains("no pool at /dev/shm/kvtier-no-such-pool");
    }
}
