package io.kvtier.engine.ipc;

import io.kvtier.engine.Engine;
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
 * the binding's context managers and both examples (two processes sharing a prefix among them).
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
            assertThat(run.output()).contains("end to end against", ", 0 failed");
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
            assertThat(run.output()).contains("OK").doesNotContain("skipped");
            awaitNoClients(engine);
        }
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
