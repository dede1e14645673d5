package io.kvtier.engine.ipc;

import io.kvtier.client.python.PythonInterpreter;
import io.kvtier.engine.Engine;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The inference-engine adapters of the Python package ({@code kvtier.adapters.sglang}, {@code .vllm},
 * {@code .lmcache}) driven through each engine's contract by their Python tests ({@code clients/python/test_adapter_*.py})
 * against a real engine: two engine processes sharing a prefix byte-exact, a third tenant finding nothing, a
 * process killed with SIGKILL mid-store leaving nothing visible and nothing held.
 *
 * <p>The tests pass real {@code torch} tensors where a contract passes tensors, so they run under a python3 that
 * imports torch when there is one ({@code python3} on the PATH, else {@code /usr/bin/python3}, where Debian's
 * {@code python3-torch} installs it; {@code .ci/run} installs it). Without torch the Python tests that need it skip,
 * saying {@code apt-get install python3-torch}, and so does this test, after the others passed; any other skip fails it.
 */
class EngineAdaptersTest
{
    private static final Path CLIENTS = Path.of("").toAbsolutePath().resolve("../clients").normalize();
    private static final Path LIBRARY = CLIENTS.resolve("c/build/libkvtier_client.so");
    private static final Path PYTHON = CLIENTS.resolve("python");
    /** The Debian package that gives /usr/bin/python3 torch. */
    private static final String TORCH_PACKAGE = "python3-torch";
    /** Short leases, so that a killed process's reservations come back within the test. */
    private static final String LEASE = "1s";

    @TempDir
    Path directory;

    // Each adapter's test method runs its Python module and names the tests it must see pass.

    /**
     * LMCache's native_plugin L2 connector ({@code kvtier.adapters.lmcache}) built by the loader from an L2 adapter
     * entry and driven through the bridge's eventfd, with chunks in torch tensors: two engine processes share a
     * prefix byte-exact, another tenant finds none, a store killed before its commit leaves nothing.
     */
    @Test
    void theLmcacheConnectorSharesAPrefixBetweenTwoEngineProcesses() throws Exception
    {
        final Run run = runPythonTests("test_adapter_lmcache", settings(65_536, 1_024));
        assertThat(run.output()).contains(
            "test_two_engine_processes_share_a_prefix_and_another_tenant_finds_none",
            "test_another_process_loads_what_this_one_stored_byte_exact",
            "test_a_process_killed_between_write_and_commit_leaves_nothing_visible_and_nothing_held",
            "test_torch_chunks_stored_are_found_and_loaded_byte_exact",
            "test_no_engine_answers_misses_with_a_named_reason_and_no_exception",
            "test_a_chunk_too_big_for_the_pool_fails_construction_naming_both_sizes",
            "test_unsupported_features_are_refused_naming_them_and_capabilities_say_why");
    }

    /**
     * SGLang's HiCache backend: built by the dynamic factory, two SGLang processes share a prefix byte-exact over
     * batch_exists and batch_get_v1, a third tenant finds none, a process killed mid-batch_set_v1 leaves nothing.
     */
    @Test
    void theSglangAdapterSharesAPrefixBetweenTwoEngineProcesses() throws Exception
    {
        final Run run = runPythonTests("test_adapter_sglang", settings(64 * 1024, 512));
        // runPythonTests saw them all pass, none skipped: these must be among them
        assertThat(run.output()).contains(
            "test_the_dynamic_factory_loads_it_and_the_host_pool_registers",
            "test_batch_set_v1_then_batch_get_v1_into_another_host_pool_is_byte_exact",
            "test_two_engine_processes_share_a_prefix_and_another_tenant_sees_none",
            "test_a_process_killed_mid_batch_set_v1_leaves_nothing_visible_and_nothing_held",
            "test_no_engine_answers_misses_naming_the_reason_then_reconnects",
            "test_a_page_too_big_for_the_pool_fails_registration_naming_both_sizes",
            "test_a_page_of_another_length_is_a_miss_never_copied",
            "test_unsupported_calls_are_named_refusals_never_none");
    }

    /**
     * vLLM's tiering offloading spec over kvtier: the secondary tier loaded by module path, two vLLM processes
     * sharing a prefix by client copy and by engine copy (HOST_FD of vLLM's /dev/shm primary region), a third
     * tenant finding none, and SIGKILL mid-store by either copy leaving nothing visible and nothing held.
     */
    @Test
    void theVllmAdapterSharesAPrefixBetweenTwoEngineProcesses() throws Exception
    {
        final Run run = runPythonTests("test_adapter_vllm", settings(64 * 1024, 1024));
        assertThat(run.output()).contains(
            "test_vllm_s_loader_builds_the_tier_from_its_config_by_module_path",
            "test_two_vllm_processes_share_a_prefix_and_another_tenant_finds_none",
            "test_a_prefix_stored_by_client_copy_loads_byte_exact_by_client_copy_in_another_process",
            "test_a_prefix_stored_by_engine_copy_loads_byte_exact_by_engine_copy_in_another_process",
            "test_engine_copied_and_client_copied_pages_are_the_same_bytes",
            "test_a_process_killed_mid_store_by_client_copy_leaves_nothing_visible_and_nothing_held",
            "test_a_process_killed_mid_store_by_engine_copy_leaves_nothing_visible_and_nothing_held",
            "test_no_engine_at_the_socket_gives_misses_and_failed_jobs_with_the_reason",
            "test_a_page_of_the_wrong_length_is_a_miss_never_copied_by_the_client",
            "test_unsupported_and_bad_settings_are_refused_naming_them");
    }

    /** Settings for an adapter test: a pool of {@code pages} pages of {@code pageSize} bytes and short leases. */
    Map<String, String> settings(final int pageSize, final int pages)
    {
        final Map<String, String> settings = new LinkedHashMap<>(IpcTestSupport.settings(directory, pages));
        settings.put("pool.page-size", String.valueOf(pageSize));
        settings.put("pool.size", String.valueOf((long)pageSize * pages));
        settings.put("lease.session-timeout", LEASE);
        settings.put("lease.reservation-timeout", LEASE);
        settings.put("lease.quarantine", "100ms");
        settings.put("ipc.client-timeout", LEASE);
        return settings;
    }

    /**
     * Runs {@code python -m unittest -v module} in clients/python against an engine started with these settings,
     * with KVTIER_SOCKET and KVTIER_CLIENT_LIB set; asserts it passed with no test skipped, then that every client
     * process has gone.
     */
    Run runPythonTests(final String module, final Map<String, String> settings) throws Exception
    {
        assumeTrue(Files.exists(LIBRARY),
            "the C client is not built at " + LIBRARY + " (the clients module builds it with gcc and make: apt-get install gcc make)");
        final String python = PythonInterpreter.withTorch();
        assumeTrue(python != null, "python3 is not installed (apt-get install python3)");
        try (Engine engine = IpcTestSupport.start(settings))
        {
            final Map<String, String> environment = new LinkedHashMap<>();
            environment.put("KVTIER_SOCKET", IpcTestSupport.socket(engine).toString());
            environment.put("KVTIER_CLIENT_LIB", LIBRARY.toString());
            environment.put("KVTIER_POOL", settings.get("pool.path"));
            environment.put("KVTIER_LEASE_MS", String.valueOf(1000));
            final Run run = run(List.of(python, "-m", "unittest", "-v", module), environment);
            assertThat(run.exit()).as(run.output()).isZero();
            assertThat(run.output()).contains("OK");
            awaitNoClients(engine);
            final List<String> skips = run.output().lines().filter(line -> line.contains("... skipped")).toList();
            assertThat(skips).as("only what needs torch may skip, and only where torch is missing: " + run.output())
                .allMatch(line -> line.contains(TORCH_PACKAGE));
            assumeTrue(skips.isEmpty(), skips.size() + " of the adapter's tests need torch, which " + python + " lacks: apt-get install "
                + TORCH_PACKAGE + " (.ci/run installs it); the others passed");
            return run;
        }
    }

    record Run(int exit, String output)
    {
    }

    private Run run(final List<String> command, final Map<String, String> environment) throws IOException, InterruptedException
    {
        final Path log = Files.createTempFile(directory, "python", ".log");
        final ProcessBuilder builder = new ProcessBuilder(command).directory(PYTHON.toFile())
            .redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().putAll(environment);
        final Process process = builder.start();
        process.getOutputStream().close();   // nothing to say on its stdin: no pipe left for a Cleaner to close later
        if (!process.waitFor(5, TimeUnit.MINUTES))   // only a hang gets here
        {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly().waitFor();
            return new Run(-1, "timed out after 5 minutes: " + command + "\n" + Files.readString(log, StandardCharsets.UTF_8));
        }
        return new Run(process.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
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
}
