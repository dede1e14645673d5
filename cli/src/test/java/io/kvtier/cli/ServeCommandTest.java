package io.kvtier.cli;

import io.kvtier.client.ClientOptions;
import io.kvtier.client.KvtierClient;
import io.kvtier.client.LookupResult;
import io.kvtier.client.Namespace;
import io.kvtier.client.PageKeyChain;
import io.kvtier.client.PinnedPages;
import io.kvtier.client.ReservedPages;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

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

    private static Process serve(final Path config, final Path out) throws Exception
    {
        final Process process = new ProcessBuilder(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(), "--enable-native-access=ALL-UNNAMED",
            "-cp", System.getProperty("java.class.path"), Main.class.getName(), "serve", "--config", config.toString())
            .redirectErrorStream(true).redirectOutput(out.toFile()).start();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!Files.readString(out).contains("kvtier serving"))
        {
            assertThat(process.isAlive()).as("serve is running; output so far: %s", Files.readString(out)).isTrue();
            assertThat(System.nanoTime()).as("serve announced itself in time").isLessThan(deadline);
            Thread.sleep(50);
        }
        return process;
    }

    private static void stop(final Process process, final Path out) throws Exception
    {
        process.destroy();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("serve stopped after SIGTERM").isTrue();
        assertThat(process.exitValue()).as("output: %s", Files.readString(out)).isZero();
    }

    private static byte expected(final int page, final int b)
    {
        return (byte)(page * 31 + b * 7 + 1);
    }

    /**
     * An upgrade: {@code serve} stopped by SIGTERM with {@code pool.keep-on-stop} leaves its pool, and the next
     * {@code serve} on the same settings adopts its pages, which a client then finds in the pool with their bytes.
     */
    @Test
    void shouldKeepThePoolAtSigtermWithKeepOnStopSoTheNextServeStartsWarm(@TempDir final Path dir) throws Exception
    {
        final Path pool = Path.of("/dev/shm/kvtier-serve-kept-test-" + ProcessHandle.current().pid());
        final Path config = dir.resolve("kvtier.conf");
        final int pageSize = 64 << 10;
        Files.write(config, List.of("pool.path = " + pool, "pool.size = 2MiB", "pool.page-size = 64KiB", "pool.keep-on-stop = true"));
        final Namespace namespace = new Namespace("serve-kept-test", "page4", 0, "");
        final int pages = 8;
        final PageKeyChain keys = new PageKeyChain(pages).compute(namespace, IntStream.range(0, 4 * pages).toArray(), 4 * pages, 4, false);
        Process process = null;
        try
        {
            final Path out1 = dir.resolve("out1.txt");
            process = serve(config, out1);
            try (KvtierClient writer = KvtierClient.connect(Path.of(pool + ".sock"), ClientOptions.of(pages, namespace)))
            {
                try (ReservedPages reserved = writer.reserve(keys))
                {
                    for (int i = 0; i < pages; i++)
                    {
                        final MemorySegment page = reserved.page(i);
                        for (int b = 0; b < pageSize; b++)
                        {
                            page.set(ValueLayout.JAVA_BYTE, b, expected(i, b));
                        }
                    }
                    assertThat(reserved.commit(pageSize)).isEqualTo(pages);
                }
            }
            stop(process, out1);
            assertThat(pool).as("the pool after SIGTERM with pool.keep-on-stop").exists();
            assertThat(Files.readString(out1)).contains("kept, marked closed");

            final Path out2 = dir.resolve("out2.txt");
            process = serve(config, out2);
            try (KvtierClient reader = KvtierClient.connect(Path.of(pool + ".sock"), ClientOptions.of(pages, namespace)))
            {
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                LookupResult found = reader.lookup(keys);
                while (found.poolPages() < pages)
                {
                    assertThat(System.nanoTime()).as("the next serve adopted the pages in time; found %d", found.poolPages()).isLessThan(deadline);
                    Thread.sleep(20);
                    found = reader.lookup(keys);
                }
                try (PinnedPages pinned = reader.acquire(keys))
                {
                    assertThat(pinned.count()).isEqualTo(pages);
                    assertThat(pinned.fromPool()).as("every page from the pool: no L3 here").isEqualTo(pages);
                    for (int i = 0; i < pages; i++)
                    {
                        assertThat(pinned.payloadLength(i)).isEqualTo(pageSize);
                        final MemorySegment page = pinned.page(i);
                        for (int b = 0; b < pageSize; b++)
                        {
                            if (page.get(ValueLayout.JAVA_BYTE, b) != expected(i, b))
                            {
                                throw new AssertionError("page " + i + " differs at byte " + b + " after the warm restart");
                            }
                        }
                    }
                }
            }
            stop(process, out2);
        }
        finally
        {
            if (process != null)
            {
                process.destroyForcibly();
            }
            Files.deleteIfExists(pool);
        }
    }
}
