package io.kvtier.engine.pool;

import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.config.EngineConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Another process maps the pool and finds a committed page by key, as a co-located client will. */
class PagePoolCrossProcessTest
{
    private static String runProbe(final Path pool, final long high, final long low, final Path out) throws Exception
    {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("--enable-native-access=ALL-UNNAMED");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(PoolAttachProbe.class.getName());
        command.add(pool.toString());
        command.add(Long.toHexString(high));
        command.add(Long.toHexString(low));
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("probe finished").isTrue();
        final String output = Files.readString(out).strip();
        assertThat(process.exitValue()).as("probe exit code, output: %s", output).isZero();
        return output;
    }

    @Test
    void shouldLetAnotherProcessFindAndPinACommittedPageByKey(@TempDir final Path dir) throws Exception
    {
        final Path poolPath = Path.of("/dev/shm/kvtier-xproc-" + ProcessHandle.current().pid());
        final Map<String, String> settings = Map.of(EngineConfig.POOL_PATH, poolPath.toString(), EngineConfig.POOL_SIZE, "1MiB",
            EngineConfig.POOL_PAGE_SIZE, "64KiB");
        try (Engine engine = Engine.start(EngineConfig.from(settings));
             Session session = engine.openSession())
        {
            session.keys().add(0x1234L, 0x5678L).add(0x1234L, 0x9999L);
            session.reserve(0, 2);
            session.page(0).set(ValueLayout.JAVA_BYTE, 0, (byte)42);
            session.payloadLength(0, 1000);
            assertThat(session.commit(0, 1)).isEqualTo(1);
            assertThat(session.status(1)).isEqualTo(PageEntryStatus.RESERVED);

            assertThat(runProbe(poolPath, 0x1234L, 0x5678L, dir.resolve("a.txt")))
                .contains("found").contains("length=1000").contains("intact=true").contains("first=42")
                .contains("creator=" + ProcessHandle.current().pid());
            // A reserved, uncommitted page is indexed but never served.
            assertThat(runProbe(poolPath, 0x1234L, 0x9999L, dir.resolve("b.txt"))).isEqualTo("not-serving");
            assertThat(runProbe(poolPath, 0x1L, 0x2L, dir.resolve("c.txt"))).isEqualTo("missing");
            session.abort(1, 1);
        }
    }
}
