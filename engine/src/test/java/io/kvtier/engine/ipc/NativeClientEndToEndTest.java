package io.kvtier.engine.ipc;

import io.kvtier.engine.Engine;
import io.kvtier.engine.pool.PageStateWord;
import io.kvtier.engine.status.EngineCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The C client ({@code native/client}) and its Python binding against a real engine with IPC on, each as
 * its own process: reserve, write in place, commit, acquire and compare every byte; a replayed request id
 * answered STALE_REQUEST_ID and a namespace the HELLO did not name answered NAMESPACE_DENIED; STATS;
 * the binding's context managers and both examples (two processes sharing a prefix among them); a HELLO
 * refused (NOT_ALLOWED) surfacing in Python with its code. Both also drive the device operations of
 * protocol 1.1 (section 10) on KV buffers in host files: registrations (and refusals with their detail),
 * blocks saved into pages, pages loaded into blocks of another arrangement, every byte compared.
 * The native module builds the client at compile; where gcc, make or python3 is missing these skip and
 * say which.
 */
class NativeClientEndToEndTest
{
    private static final Path CLIENT = Path.of("").toAbsolutePath().resolve("../native/client").normalize();
    private static final Path C_TEST = CLIENT.resolve("build/kvtier_client_test");
    private static final Path LIBRARY = CLIENT.resolve("build/libkvtier_client.so");

    @TempDir
    Path directory;

    @Test
    void theCClientReservesWritesCommitsAndAcquiresTheSameBytes() throws Exception
    {
        assumeTrue(Files.isExecutable(C_TEST),
            "the C client is not built at " + C_TEST + " (the native module builds it with gcc and make: apt-get install gcc make)");
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 256)))
        {
            final Run run = run(List.of(C_TEST.toString(), "--socket", IpcTestSupport.socket(engine).toString()), CLIENT, Map.of());
            assertThat(run.exit()).as(run.output()).isZero();
            assertThat(run.output()).contains("end to end against", "device operations against", ", 0 failed");
            awaitNoClients(engine);
        }
    }

    @Test
    void thePythonBindingAndItsExamplesWorkAgainstTheEngine() throws Exception
    {
        assumeTrue(Files.exists(LIBRARY),
            "the C client is not built at " + LIBRARY + " (the native module builds it with gcc and make: apt-get install gcc make)");
        assumeTrue(onPath("python3"), "python3 is not installed (apt-get install python3)");
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 256)))
        {
            final Run run = run(List.of("python3", "-m", "unittest", "-v", "test_kvtier_client.EndToEndTest"), CLIENT.resolve("python"),
                Map.of("KVTIER_SOCKET", IpcTestSupport.socket(engine).toString(), "KVTIER_CLIENT_LIB", LIBRARY.toString()));
            assertThat(run.exit()).as(run.output()).isZero();
            assertThat(run.output()).contains("OK", "test_device_save_then_load_bytes_equal").doesNotContain("skipped");
            awaitNoClients(engine);
        }
    }

    @Test
    void aRefusedHelloSurfacesInPythonAsItsCodeAndTheEnginesMessage() throws Exception
    {
        assumeTrue(Files.exists(LIBRARY),
            "the C client is not built at " + LIBRARY + " (the native module builds it with gcc and make: apt-get install gcc make)");
        assumeTrue(onPath("python3"), "python3 is not installed (apt-get install python3)");
        final int ownUid = (Integer)Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        final Map<String, String> settings = IpcTestSupport.settings(directory, 16);
        settings.put("ipc.allowed-uids", String.valueOf(ownUid + 4242));
        try (Engine engine = IpcTestSupport.start(settings))
        {
            final String script = "import sys, kvtier_client as kv\n"
                + "try:\n    kv.Client(sys.argv[1])\nexcept kv.KvtierError as e:\n    print('refused', e.code, e.name, e)\n";
            final Run run = run(List.of("python3", "-c", script, IpcTestSupport.socket(engine).toString()), CLIENT.resolve("python"),
                Map.of("KVTIER_CLIENT_LIB", LIBRARY.toString()));
            assertThat(run.exit()).as(run.output()).isZero();
            assertThat(run.output()).contains("refused 33 NOT_ALLOWED");
            assertThat(engine.ipc().orElseThrow().clientCount()).isZero();
        }
    }

    /** A Python client holding 2 pins and 2 half-written reservations, then killed with SIGKILL. */
    private static final String HOLDER = """
        import os, sys, time, kvtier_client as kv
        root = kv.namespace_root("killed-client", "bytes/page4", 0, "")
        committed = kv.page_keys(root, range(0, 8), 4)
        writing = kv.page_keys(root, range(100, 108), 4)
        c = kv.Client(sys.argv[1], namespaces=[root], max_keys=16)
        if sys.argv[2] == "hold":
            with c.reserved(committed) as r:
                for i, page in r.pages():
                    page[:4] = b"kept"
            c.acquire(committed, first_slot=4)
            c.reserve(writing, first_slot=8)
            for slot in (8, 9):
                c.slot_view(slot)[:4] = b"torn"
            print("READY", c.slot_page(4), c.slot_page(5), flush=True)
            time.sleep(600)
        else:
            print("CHECK", c.lookup(committed).pool_pages, c.lookup(writing, first_slot=4).pool_pages, flush=True)
            c.close()
        """;

    @Test
    void aPythonClientKilledWithSigkillGivesBackItsPinsAndItsReservationsNeverBecomeVisible() throws Exception
    {
        assumeTrue(Files.exists(LIBRARY),
            "the C client is not built at " + LIBRARY + " (the native module builds it with gcc and make: apt-get install gcc make)");
        assumeTrue(onPath("python3"), "python3 is not installed (apt-get install python3)");
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 64)))
        {
            final String socket = IpcTestSupport.socket(engine).toString();
            final long expiredBefore = engine.counters().getOpaque(EngineCounter.RESERVATIONS_EXPIRED);
            final Path out = directory.resolve("holder.out");
            final ProcessBuilder builder = new ProcessBuilder("python3", "-c", HOLDER, socket, "hold")
                .directory(CLIENT.resolve("python").toFile()).redirectErrorStream(true).redirectOutput(out.toFile());
            builder.environment().put("KVTIER_CLIENT_LIB", LIBRARY.toString());
            final Process holder = builder.start();
            final int[] pinned = new int[2];
            try
            {
                final long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
                while (!Files.readString(out).contains("\n") && holder.isAlive() && System.nanoTime() < deadline)
                {
                    Thread.sleep(10);
                }
                final String ready = Files.readString(out);
                assertThat(ready).startsWith("READY");
                final String[] fields = ready.trim().split(" ");
                for (int i = 0; i < 2; i++)
                {
                    pinned[i] = Integer.parseInt(fields[1 + i]);
                    assertThat(pins(engine, pinned[i])).as("the holder's pin on page %d", pinned[i]).isEqualTo(1);
                }
            }
            finally
            {
                holder.destroyForcibly();   // SIGKILL
                assertThat(holder.waitFor(5, TimeUnit.MINUTES)).isTrue();
            }
            awaitNoClients(engine);
            final long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
            while ((pins(engine, pinned[0]) != 0 || pins(engine, pinned[1]) != 0) && System.nanoTime() < deadline)
            {
                Thread.sleep(10);
            }
            assertThat(pins(engine, pinned[0]) + pins(engine, pinned[1])).as("the killed client's pins are given back").isZero();
            assertThat(engine.counters().getOpaque(EngineCounter.RESERVATIONS_EXPIRED) - expiredBefore)
                .as("its 2 reservations went through quarantine").isEqualTo(2);

            final Run check = run(List.of("python3", "-c", HOLDER, socket, "check"), CLIENT.resolve("python"),
                Map.of("KVTIER_CLIENT_LIB", LIBRARY.toString()));
            assertThat(check.exit()).as(check.output()).isZero();
            assertThat(check.output()).as("committed pages stay found; the half-written ones never appear").contains("CHECK 2 0");
        }
    }

    private static int pins(final Engine engine, final int page)
    {
        return PageStateWord.pins(engine.pool().metadata().stateWordAcquire(page));
    }

    private record Run(int exit, String output)
    {
    }

    private Run run(final List<String> command, final Path workingDirectory, final Map<String, String> environment)
        throws IOException, InterruptedException
    {
        final Path log = directory.resolve("client.log");
        final ProcessBuilder builder = new ProcessBuilder(command).directory(workingDirectory.toFile())
            .redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().putAll(environment);
        final Process process = builder.start();
        if (!process.waitFor(5, TimeUnit.MINUTES))   // only a hang gets here
        {
            process.destroyForcibly().waitFor();
            return new Run(-1, "timed out after 5 minutes: " + command + "\n" + Files.readString(log, StandardCharsets.UTF_8));
        }
        final String output = Files.readString(log, StandardCharsets.UTF_8);
        Files.delete(log);
        return new Run(process.exitValue(), output);
    }

    private static void awaitNoClients(final Engine engine) throws InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        while (engine.ipc().orElseThrow().clientCount() != 0 && System.nanoTime() < deadline)
        {
            Thread.sleep(10);
        }
        assertThat(engine.ipc().orElseThrow().clientCount()).as("every client process closed or went").isZero();
    }

    private static boolean onPath(final String program)
    {
        for (final String dir : System.getenv().getOrDefault("PATH", "").split(":"))
        {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program)))
            {
                return true;
            }
        }
        return false;
    }
}
