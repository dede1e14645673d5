package io.kvtier.engine.ipc;

import io.kvtier.client.IpcConnection;
import io.kvtier.client.pool.MappedPool;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.engine.pool.Counters;
import io.kvtier.engine.status.EngineCounter;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An engine whose process runs out of descriptors cannot accept a connection for a while; it must keep
 * listening, say so once, count it, and accept the waiting client as soon as it can, never close the
 * socket for good.
 */
class IpcAcceptErrorsTest
{
    private static final long WAIT_MILLIS = 60_000;

    @TempDir
    Path directory;

    @Test
    void anEngineOutOfDescriptorsKeepsListeningAndAcceptsOnceItCan() throws Exception
    {
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/prlimit")),
            "skipped: this test limits the engine process's descriptors with prlimit (util-linux), which is not installed");
        final Path out = directory.resolve("engine.out");
        final List<String> command = List.of(ProcessHandle.current().info().command().orElseThrow(), "--enable-native-access=ALL-UNNAMED",
            "-cp", System.getProperty("java.class.path"), IpcEngineProcess.class.getName(), directory.toString());
        final Process engine = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        try
        {
            waitFor(() -> Files.readString(out).contains("READY") || !engine.isAlive(), "the engine to start: " + out);
            assertThat(Files.readString(out)).contains("READY");
            final Path socket = directory.resolve("s.sock");
            try (IpcConnection first = IpcConnection.connect(socket, 8))
            {
                assertThat(first.welcome().status()).isZero();
            }
            // No descriptor left: a soft limit below every free descriptor number (0 to 2 are its standard streams).
            final long before = softLimit(engine.pid());
            prlimit(engine.pid(), 3);
            final CompletableFuture<Integer> waiting = CompletableFuture.supplyAsync(() ->
            {
                try (IpcConnection client = IpcConnection.connect(socket, 8))
                {
                    final long id = client.send(MessageType.STATS, 0, 0, 0);
                    final int status = client.awaitResponse(id).status();
                    client.releaseResponse();
                    return status;
                }
                catch (final Exception ex)
                {
                    throw new IllegalStateException(ex);
                }
            });
            // Until the engine has tried (it says so once, then retries): a bound that gave up quietly after 5 s let a loaded
            // host restore the limit before the first try, and the client was then served without the error this test is about.
            waitFor(() -> Files.readString(out).contains("cannot accept"), "the engine to say it cannot accept the client");
            // A few more retries, none of which may serve the client or say so again.
            Thread.sleep(300);
            assertThat(waiting).as("the client waits while the engine has no descriptor").isNotDone();
            prlimit(engine.pid(), before);
            assertThat(waiting.get(WAIT_MILLIS, TimeUnit.MILLISECONDS)).as("the waiting client, served").isZero();
            try (IpcConnection later = IpcConnection.connect(socket, 8))
            {
                assertThat(later.welcome().status()).as("a client after").isZero();
            }
            try (MappedPool pool = MappedPool.attach(directory.resolve("pool")))
            {
                assertThat(new Counters(pool.counters()).valueOpaque(EngineCounter.IPC_ACCEPT_ERRORS.id())).isPositive();
            }
            assertThat(Files.readString(out).split("cannot accept", -1)).as("said once, not once per retry").hasSize(2);
        }
        finally
        {
            engine.getOutputStream().close();
            if (!engine.waitFor(30, TimeUnit.SECONDS))
            {
                engine.destroyForcibly();
            }
        }
    }

    private static void prlimit(final long pid, final long soft) throws Exception
    {
        final Process process = new ProcessBuilder("prlimit", "--pid", Long.toString(pid), "--nofile=" + soft + ":")
            .redirectErrorStream(true).start();
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(new String(process.getInputStream().readAllBytes())).isZero();
    }

    /** The process's soft limit of open files, from /proc/PID/limits. */
    private static long softLimit(final long pid) throws Exception
    {
        for (final String line : Files.readAllLines(Path.of("/proc/" + pid + "/limits")))
        {
            if (line.startsWith("Max open files"))
            {
                return Long.parseLong(line.substring("Max open files".length()).trim().split("\\s+")[0]);
            }
        }
        throw new AssertionError("no open-files limit in /proc/" + pid + "/limits");
    }

    private interface Check
    {
        boolean holds() throws Exception;
    }

    private static void waitFor(final Check check, final String what) throws Exception
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MILLIS);
        while (!check.holds())
        {
            if (System.nanoTime() - deadline > 0)
            {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(20);
        }
    }
}
