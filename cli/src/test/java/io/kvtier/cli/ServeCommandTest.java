package io.kvtier.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code kvtier serve} in its own JVM, stopped by SIGTERM as an operator or a service manager would. */
class ServeCommandTest
{
    @Test
    void shouldServeUntilSigtermThenStopCleanly(@TempDir final Path dir) throws Exception
    {
        final Path pool = Path.of("/dev/shm/kvtier-serve-test-" + ProcessHandle.current().pid());
        final Path config = dir.resolve("kvtier.conf");
        Files.write(config, List.of("pool.path = " + pool, "pool.size = 2MiB", "pool.page-size = 64KiB",
            "tier.disk.type = posix", "tier.disk.dir = " + dir.resolve("l3")));
        final Path out = dir.resolve("out.txt");
        final Process process = new ProcessBuilder(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(), "--enable-native-access=ALL-UNNAMED",
            "-cp", System.getProperty("java.class.path"), Main.class.getName(), "serve", "--config", config.toString())
            .redirectErrorStream(true).redirectOutput(out.toFile()).start();
        try
        {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!Files.readString(out).contains("kvtier serving"))
            {
                assertThat(process.isAlive()).as("serve is running; output so far: %s", Files.readString(out)).isTrue();
                assertThat(System.nanoTime()).as("serve announced itself in time").isLessThan(deadline);
                Thread.sleep(50);
            }
            assertThat(pool).exists();
            final Path socket = Path.of(pool + ".sock");
            assertThat(Files.readString(out)).as("serve turns IPC on and names its socket").contains("IPC socket " + socket);
            assertThat(socket).exists();
            assertThat(Path.of(pool + ".ipc")).as("the IPC control file").exists();
            process.destroy();
            assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("serve stopped after SIGTERM").isTrue();
            final String output = Files.readString(out);
            assertThat(output).contains("tiers [disk]").contains("kvtier: stopping on SIGTERM").contains("kvtier: stopped");
            assertThat(process.exitValue()).as("a clean stop on SIGTERM is a success, not 128 + 15").isZero();
            assertThat(pool).doesNotExist();
            assertThat(socket).doesNotExist();
            assertThat(Path.of(pool + ".ipc")).doesNotExist();
        }
        finally
        {
            process.destroyForcibly();
        }
    }
}
