package io.kvtier.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvtier.engine.Engine;
import io.kvtier.engine.config.EngineConfig;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code kvtier bench adapters}: each engine adapter's batch store and batch load, from two processes, against
 * {@code memmove} of the same bytes between the same buffers in the same processes.
 */
@Command(name = "adapters", mixinStandardHelpOptions = true,
    description = {
        "Starts an engine with IPC on and pages of --page-bytes, then for each engine adapter (kvtier.adapters.sglang, .vllm, .lmcache)"
            + " runs its driver twice: a first process stores --pages new pages with one batch call of the engine's contract (SGLang"
            + " batch_set_v1, vLLM submit_store, LMCache submit_batch_set) per round, then a second process, with host memory of its own,"
            + " loads them with one batch call (batch_get_v1, submit_load, submit_batch_get) and checks every byte.",
        "Each round of each process also times ctypes.memmove of the same bytes between the same buffers (its host memory and pool pages"
            + " reserved or pinned for the purpose): the baseline. It prints the medians of both, in GB/s, the median ratio of their times, and"
            + " the CPU time the engine's process spent in one batch call (every thread of it).",
        "vLLM's adapter is also run with --copy engine: its host region is a shared-memory file registered with the engine (HOST_FD),"
            + " and the engine copies."},
    footer = {"", "Examples:", "  kvtier bench adapters", "  kvtier bench adapters --engines sglang --pages 64 --page-bytes 2MiB --rounds 9 --json"})
public final class BenchAdaptersCommand implements Callable<Integer>
{
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @CommandLine.ParentCommand
    BenchCommand bench;

    @Option(names = "--engines", split = ",", paramLabel = "LIST", description = "Adapters to measure. Default: sglang,vllm,lmcache.")
    List<EngineDrivers.Kind> engines;

    @Option(names = "--pages", defaultValue = "64", paramLabel = "N", description = "Pages per batch. Default: ${DEFAULT-VALUE}.")
    int pages;

    @Option(names = "--page-bytes", defaultValue = "2MiB", paramLabel = "SIZE", description = "Bytes per page. Default: ${DEFAULT-VALUE}.")
    ByteSize pageBytes;

    @Option(names = "--rounds", defaultValue = "5", paramLabel = "N", description = "Timed batches per process. Default: ${DEFAULT-VALUE}.")
    int rounds;

    @Option(names = "--json", description = "Print the results as one JSON object.")
    boolean json;

    @Override
    public Integer call() throws Exception
    {
        final PrintWriter out = spec.commandLine().getOut();
        final PrintWriter err = spec.commandLine().getErr();
        if (pages < 1 || rounds < 1)
        {
            throw new CommandLine.ParameterException(spec.commandLine(), "--pages and --rounds must be at least 1");
        }
        if (bench == null || !bench.main.verbose)
        {
            // The figures are the output; the engine's start-up lines would only interleave with them.
            Logging.atLeast(java.util.logging.Level.WARNING);
        }
        final List<EngineDrivers.Kind> kinds = engines == null || engines.isEmpty() ? List.of(EngineDrivers.Kind.values()) : engines;
        final List<Run> runs = new ArrayList<>();
        for (final EngineDrivers.Kind kind : kinds)
        {
            runs.add(new Run(kind, "client"));
            if (kind == EngineDrivers.Kind.vllm)
            {
                runs.add(new Run(kind, "engine"));
            }
        }
        final Path directory = Files.createTempDirectory("kvtier-bench-adapters-");
        final Path pool = DemoCommand.defaultPoolDirectory().resolve("kvtier-bench-adapters-" + ProcessHandle.current().pid());
        EngineDrivers drivers = null;
        for (final EngineDrivers.Kind kind : kinds)
        {
            final EngineDrivers.Found found = EngineDrivers.find(kind, directory);
            if (found.drivers() == null)
            {
                err.println("kvtier: bench adapters: " + found.missing());
                Files.deleteIfExists(directory);
                return ExitCode.UNAVAILABLE;
            }
            drivers = found.drivers();
        }
        final long pageSize = pageBytes.bytes();
        // Every round of every run keeps its pages, so a later process finds them; two batches more for the baselines' pages.
        final long poolPages = (long)pages * rounds * runs.size() + 2L * pages + 16;
        final Map<String, String> settings = new LinkedHashMap<>();
        settings.put(EngineConfig.POOL_PATH, pool.toString());
        settings.put(EngineConfig.POOL_PAGE_SIZE, String.valueOf(pageSize));
        settings.put(EngineConfig.POOL_SIZE, String.valueOf(pageSize * poolPages));
        settings.put(IpcSettings.ENABLED, "true");
        settings.put(IpcSettings.SOCKET_PATH, pool + ".sock");
        final ObjectNode root = JSON.createObjectNode();
        root.put("pages", pages);
        root.put("page_bytes", pageSize);
        root.put("rounds", rounds);
        root.put("python", drivers.interpreter());
        final ArrayNode results = root.putArray("results");
        try (Engine engine = Engine.start(EngineConfig.from(settings)))
        {
            final String socket = engine.ipc().orElseThrow().socketPath().toString();
            for (final Run run : runs)
            {
                final String seed = "bench-" + run.kind() + "-" + run.copy() + "-" + ProcessHandle.current().pid();
                final ObjectNode result = results.addObject();
                result.put("engine", run.kind().name());
                result.put("copy", run.copy());
                for (final String role : List.of("set", "get"))
                {
                    final JsonNode figures = drivers.run(run.kind(), List.of("bench", "--socket", socket, "--role", role, "--pages", String.valueOf(pages),
                        "--page-bytes", String.valueOf(pageSize), "--rounds", String.valueOf(rounds), "--seed", seed, "--copy", run.copy()));
                    result.set(role, figures);
                }
            }
        }
        finally
        {
            Files.deleteIfExists(directory);
        }
        if (json)
        {
            out.println(JSON.writeValueAsString(root));
        }
        else
        {
            out.println(String.format(Locale.ROOT, "kvtier bench adapters: %d pages of %s per batch, %d rounds, drivers under %s", pages,
                pageBytes, rounds, drivers.interpreter()));
            out.println(String.format(Locale.ROOT, "%-8s %-6s %9s %13s %6s %10s %9s %13s %6s %10s", "engine", "copy", "set GB/s", "memmove GB/s",
                "ratio", "set CPU ms", "get GB/s", "memmove GB/s", "ratio", "get CPU ms"));
            for (final JsonNode result : results)
            {
                final JsonNode set = result.path("set");
                final JsonNode get = result.path("get");
                out.println(String.format(Locale.ROOT, "%-8s %-6s %9.2f %13.2f %6.2f %10.1f %9.2f %13.2f %6.2f %10.1f", result.path("engine").asText(),
                    result.path("copy").asText(), set.path("adapter_gb_s").asDouble(), set.path("memmove_gb_s").asDouble(), set.path("ratio").asDouble(),
                    1000 * set.path("adapter_cpu_s").asDouble(), get.path("adapter_gb_s").asDouble(), get.path("memmove_gb_s").asDouble(),
                    get.path("ratio").asDouble(), 1000 * get.path("adapter_cpu_s").asDouble()));
            }
            out.println("ratio: the adapter's batch time over memmove's for the same bytes (median of the rounds); 1.00 is memmove's speed;"
                + " CPU ms: the engine process's CPU time during one batch call (median), the bytes' copy included unless the engine copies");
        }
        out.flush();
        return ExitCode.OK;
    }

    /**
     * One adapter measured one way.
     *
     * @param kind the engine
     * @param copy who copies the bytes: client (the process, memmove) or engine (the engine, from a registered host region)
     */
    private record Run(EngineDrivers.Kind kind, String copy)
    {
    }
}
