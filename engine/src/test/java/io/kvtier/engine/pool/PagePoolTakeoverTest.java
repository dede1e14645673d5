package io.kvtier.engine.pool;

import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.config.EngineConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** A pool file left behind by an engine that died is taken over; with pool.warm-restart off, none of its pages is kept. */
class PagePoolTakeoverTest
{
    @Test
    void shouldTakeOverThePoolFileOfADeadEngine(@TempDir final Path dir) throws Exception
    {
        final Path poolPath = Path.of("/dev/shm/kvtier-takeover-" + ProcessHandle.current().pid());
        final Path out = dir.resolve("out.txt");
        final Process crashed = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"), PoolCrashProbe.class.getName(), poolPath.toString())
            .redirectErrorStream(true).redirectOutput(out.toFile()).start();
        assertThat(crashed.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(Files.readString(out)).contains("ready");
        assertThat(crashed.exitValue()).isEqualTo(9);
        assertThat(poolPath).as("the dead engine left its pool file").exists();

        try (Engine engine = Engine.start(EngineConfig.from(Map.of(EngineConfig.POOL_PATH, poolPath.toString(), EngineConfig.POOL_SIZE, "1MiB",
                EngineConfig.POOL_PAGE_SIZE, "64KiB", EngineConfig.POOL_WARM_RESTART, "false")));
             Session session = engine.openSession())
        {
            assertThat(engine.pool().header().creatorPidPlain()).isEqualTo(ProcessHandle.current().pid());
            session.keys().add(7, 7);
            // Nothing of the dead engine's pool is served: without a warm restart a new pool starts empty.
            assertThat(session.lookup(0, 1)).isZero();
        }
        assertThat(poolPath).doesNotExist();
    }
}
