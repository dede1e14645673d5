package io.kvtier.engine.ipc;

import io.kvtier.client.IpcConnection;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.Engine;
import io.kvtier.engine.ScriptedTier;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.ipc.IpcTestSupport.Answer;
import io.kvtier.client.pool.PageStateWord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static io.kvtier.engine.ipc.IpcTestSupport.call;
import static io.kvtier.engine.ipc.IpcTestSupport.keys;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client that dies while a request of its waits gives back its pins and reservations within a bounded
 * time, whatever any tier does: its FLUSH waiting on a tier that never answers must not keep them.
 */
class IpcDyingClientTest
{
    private static final long WAIT_MILLIS = 30_000;
    private static final long BASE = 0x6600;
    private static final int PAGES = 2;

    @TempDir
    Path directory;

    @Test
    void aClientKilledWhileItsFlushWaitsOnAStuckTierGivesItsPinsBack() throws Exception
    {
        final Map<String, String> settings = IpcTestSupport.settings(directory, 32);
        settings.put("tier.slow.type", "scripted");
        settings.put(EngineConfig.POLICY_WRITE, "none");
        settings.put(EngineConfig.L3_IO_TIMEOUT, "10m");
        try (Engine engine = IpcTestSupport.start(settings);
             IpcConnection writer = IpcConnection.connect(IpcTestSupport.socket(engine), 16))
        {
            final Answer reserved = call(writer, MessageType.RESERVE, 0, keys(BASE, PAGES), keys(BASE, PAGES));
            assertThat(reserved.pageStatuses()).containsOnly(PageEntryStatus.RESERVED);
            assertThat(IpcTestSupport.await(writer, writer.sendCommit(0, PAGES, new int[] {64, 64})).pageStatuses())
                .containsOnly(PageEntryStatus.COMMITTED);
            final int[] pages = reserved.pageIds();
            final CountDownLatch gate = ScriptedTier.holdWritesOf("slow");
            final Path out = directory.resolve("child.out");
            final Process child = new ProcessBuilder(List.of(ProcessHandle.current().info().command().orElseThrow(), "--enable-native-access=ALL-UNNAMED",
                "-cp", System.getProperty("java.class.path"), IpcFlushingClient.class.getName(), IpcTestSupport.socket(engine).toString(),
                Long.toString(BASE), Integer.toString(PAGES))).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            try
            {
                waitFor(() -> read(out).contains("READY") || !child.isAlive(), "the child to be READY: " + out);
                assertThat(read(out)).contains("READY").doesNotContain("FLUSHED");
                for (final int page : pages)
                {
                    assertThat(pins(engine, page)).as("the child's pin and its backup's").isEqualTo(2);
                }
                child.destroyForcibly();
                assertThat(child.waitFor(WAIT_MILLIS, TimeUnit.MILLISECONDS)).isTrue();
                // The tier still holds the backups: only the child's pins may go, and they must.
                waitFor(() -> engine.ipc().orElseThrow().clientCount() == 1, "the engine to drop the killed client (the writer stays)");
                for (final int page : pages)
                {
                    waitFor(() -> pins(engine, page) == 1, "the killed client's pin on page " + page + " to go");
                }
            }
            finally
            {
                child.destroyForcibly();
                gate.countDown();
            }
        }
    }

    private static int pins(final Engine engine, final int page)
    {
        return PageStateWord.pins(engine.pool().metadata().stateWordAcquire(page));
    }

    private static String read(final Path out)
    {
        try
        {
            return Files.exists(out) ? Files.readString(out) : "";
        }
        catch (final java.io.IOException ex)
        {
            return "";
        }
    }

    private static void waitFor(final BooleanSupplier condition, final String what) throws InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MILLIS);
        while (!condition.getAsBoolean())
        {
            if (System.nanoTime() - deadline > 0)
            {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(10);
        }
    }
}
