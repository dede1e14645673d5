package io.kvtier.cli;

import io.kvtier.bench.ipc.CRoundTrips;
import io.kvtier.bench.ipc.IpcBenchmark;
import io.kvtier.bench.ipc.IpcComparison;
import io.kvtier.bench.ipc.PythonRoundTrips;
import io.kvtier.client.protocol.IdleStrategy;
import io.kvtier.engine.Engine;
import io.kvtier.engine.config.EngineConfig;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code kvtier bench ipc}: the IPC protocol's round trip against the bare cost of two processes
 * talking through shared memory, in the same run: an engine serving IPC in this process, the Java
 * client in a second one, and the raw ping-pong baseline between this process and a third.
 */
@Command(name = "ipc", mixinStandardHelpOptions = true,
    description = {
        "Starts an engine with ipc.enabled (pool in /dev/shm, or the temporary directory) and a Java client in another process,"
            + " which writes --batch-keys pages, then times one-key LOOKUP round trips (p50, p99, p99.9) and batched LOOKUPs of"
            + " --batch-keys keys (keys/s).",
        "Before it, in the same run, the baseline: a raw ping-pong of two sequence words in a shared file between this process"
            + " and another JVM, each side spinning then yielding, with nothing of the protocol. It prints both side by side and"
            + " the ratio of the two medians.",
        "For reference it also times the same lookup through an in-process Session of the same engine and, when the checkout has"
            + " it built, through the Python binding of the C client in another process (clients/python), waiting with its default back-off and then with wait=awake,"
            + " and from the C client in another process timed in C (clients/c/build/kvtier_bench_client), with the same two waits, and its"
            + " batched LOOKUPs of the Java client's --batch-keys pages.",
        "Then the loaded case (unless --no-load): it starts a background load of one busy core's worth (a child JVM whose one"
            + " thread spins on integer arithmetic, never sleeping) and measures the baseline and the client again beside it"
            + " (rtt_p50_ratio_loaded). For each timed part it reports how both sides waited: the engine thread's sleeps and"
            + " yields (its counters), the client's sleeps, yields and wakes of the engine; and, for scale, the same ping-pong"
            + " with each side sleeping on a futex between its turns (two wake-ups a round trip: futex_rtt_p50_ns).",
        "With --compare it measures pairs of idle strategies (the engine's and the client's) against each other, interleaved:"
            + " --rounds rounds, each measuring every pair once, one right after the other, in an order rotated each round, each"
            + " turn with a fresh engine and its own baseline just before it, quiet and then beside the background load; it reports"
            + " per pair the medians over the rounds and every round's ratio. On a host whose load comes and goes, only a"
            + " comparison made this way says which strategy is better."},
    footer = {"", "Examples:", "  kvtier bench ipc", "  kvtier bench ipc --json --iterations 200000",
        "  kvtier bench ipc --json --set engine.idle-strategy=adaptive --client-idle-strategy adaptive",
        "  kvtier bench ipc --compare backoff/backoff,adaptive/adaptive,adaptive/timed --rounds 5 --iterations 20000 --batches 500", "",
        ExitCode.HELP})
public final class BenchIpcCommand implements Callable<Integer>
{
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--iterations", defaultValue = "100000", paramLabel = "N", description = "Round trips timed, in each of the two. Default: ${DEFAULT-VALUE}.")
    int iterations;

    @Option(names = "--warmup", defaultValue = "20000", paramLabel = "N", description = "Round trips first, unrecorded, in each. Default: ${DEFAULT-VALUE}.")
    int warmups;

    @Option(names = "--batch-keys", defaultValue = "1024", paramLabel = "N", description = "Keys per batched lookup. Default: ${DEFAULT-VALUE}.")
    int batchKeys;

    @Option(names = "--batches", defaultValue = "5000", paramLabel = "N", description = "Batched lookups timed. Default: ${DEFAULT-VALUE}.")
    int batches;

    @Option(names = "--python-binding", paramLabel = "DIR",
        description = "Directory of the Python binding (kvtier_client.py) to time beside the Java client. Default: clients/python of the"
            + " checkout kvtier runs from, if any; without it the Python figure is reported missing.")
    Path pythonBinding;

    @Option(names = "--c-client", paramLabel = "DIR",
        description = "Directory of the C client (clients/c) whose build/kvtier_bench_client times the C client beside the Java client. Default:"
            + " clients/c of the checkout kvtier runs from, if any; without it, or with the program not built, the C figure is reported missing.")
    Path cClient;

    @Option(names = "--jit-wait", defaultValue = "10s", paramLabel = "DURATION",
        description = "The longest each warm-up goes on, past its --warmup round trips, while the JIT compilers of the client's JVM or the"
            + " engine's are still busy (on few cores they would take a core from the timed part); 0s: not at all. Default: ${DEFAULT-VALUE}.")
    Duration jitWait;

    @Option(names = "--no-load", description = "Skip the loaded case (the background load and the second measurement).")
    boolean noLoad;

    @Option(names = "--client-idle-strategy", defaultValue = "awake", paramLabel = "KIND",
        converter = ClientIdleConverter.class,
        description = "How the client process waits for its answers: awake (the client's default), backoff, adaptive, timed, spin or sleep. Default: ${DEFAULT-VALUE}.")
    IdleStrategy.Kind clientIdle;

    @Option(names = "--compare", split = ",", paramLabel = "ENGINE/CLIENT",
        description = "Pairs of idle strategies to measure against each other, interleaved (as backoff/backoff,adaptive/adaptive): the engine's"
            + " engine.idle-strategy (adaptive, backoff, spin, yield, sleep) and the client's (adaptive, timed, awake, backoff, spin, sleep);"
            + " --client-idle-strategy and the in-process, Python and C figures are then left out.")
    List<String> compare;

    @Option(names = "--rounds", defaultValue = "3", paramLabel = "N",
        description = "With --compare: rounds, each measuring every pair once. Default: ${DEFAULT-VALUE}.")
    int rounds;

    @Option(names = "--json", description = "Print one JSON object: rtt_p50_ns, rtt_p99_ns, rtt_p999_ns, baseline_rtt_p50_ns, rtt_p50_ratio, batched_keys_per_s,"
        + " the same with _loaded, engine_sleeps, client_sleeps, python_rtt_p50_ns, c_rtt_p50_ns ...")
    boolean json;

    @Mixin
    SettingsMixin settings;

    @CommandLine.ParentCommand
    BenchCommand bench;

    @Override
    public Integer call() throws Exception
    {
        final IpcBenchmark.Plan plan;
        try
        {
            plan = new IpcBenchmark.Plan(warmups, iterations, batchKeys, batches, !noLoad, clientIdle, jitWait.toNanos());
        }
        catch (final IllegalArgumentException ex)
        {
            spec.commandLine().getErr().println("kvtier: " + ex.getMessage());
            return ExitCode.USAGE;
        }
        if (!bench.main.verbose)
        {
            // The figures are the output; the engine's start-up and client-connect lines would only interleave with them.
            Logging.atLeast(java.util.logging.Level.WARNING);
        }
        final Path directory = DemoCommand.defaultPoolDirectory();
        if (compare != null && !compare.isEmpty())
        {
            return compare(plan, directory);
        }
        final Path pool = directory.resolve("kvtier-bench-ipc-" + ProcessHandle.current().pid());
        final Map<String, String> config = engineSettings(pool);
        final EngineConfig engineConfig = EngineConfig.from(config);
        final IpcBenchmark.Result result;
        try (Engine engine = Engine.start(engineConfig))
        {
            result = IpcBenchmark.measure(engine, Path.of(config.get(IpcSettings.SOCKET_PATH)), directory, plan,
                pythonBinding != null ? pythonBinding : PythonRoundTrips.findBinding().orElse(null),
                cClient != null ? cClient : CRoundTrips.findClient().orElse(null));
        }
        finally
        {
            Files.deleteIfExists(Path.of(config.get(IpcSettings.SOCKET_PATH)));
        }
        final var out = spec.commandLine().getOut();
        out.println(json ? result.toJson() : result.toText());
        out.flush();
        return ExitCode.OK;
    }

    /** The interleaved comparison: a fresh engine per turn, idling as its pair says, its files removed after it. */
    private int compare(final IpcBenchmark.Plan plan, final Path directory) throws Exception
    {
        final List<IpcComparison.Strategies> pairs = new ArrayList<>();
        try
        {
            if (rounds < 1)
            {
                throw new IllegalArgumentException("--rounds=" + rounds + " must be at least 1");
            }
            for (final String pair : compare)
            {
                pairs.add(IpcComparison.Strategies.parse(pair));
            }
            if (settings.settings().containsKey(EngineConfig.ENGINE_IDLE_STRATEGY))
            {
                throw new IllegalArgumentException("--compare names the engine's idle strategy of each pair: do not --set "
                    + EngineConfig.ENGINE_IDLE_STRATEGY + " with it");
            }
        }
        catch (final IllegalArgumentException ex)
        {
            spec.commandLine().getErr().println("kvtier: --compare: " + ex.getMessage());
            return ExitCode.USAGE;
        }
        final IpcComparison.Result result = IpcComparison.measure((idle, turn) ->
        {
            final Path pool = directory.resolve("kvtier-bench-ipc-" + ProcessHandle.current().pid() + "-" + turn);
            final Map<String, String> config = engineSettings(pool);
            config.put(EngineConfig.ENGINE_IDLE_STRATEGY, idle.configName());
            return new IpcComparison.Started(Engine.start(EngineConfig.from(config)), Path.of(config.get(IpcSettings.SOCKET_PATH)));
        }, directory, plan, pairs, rounds);
        final var out = spec.commandLine().getOut();
        out.println(json ? result.toJson() : result.toText());
        out.flush();
        return ExitCode.OK;
    }

    /** The engine's settings for a pool at {@code pool}: IPC on, the socket beside the pool, then the --set ones. */
    private Map<String, String> engineSettings(final Path pool)
    {
        final Map<String, String> config = new LinkedHashMap<>();
        config.put(EngineConfig.POOL_PATH, pool.toString());
        // Room for the batch's pages (each a 4 KiB page in an 8 KiB frame) with the pool far from its eviction mark.
        config.put(EngineConfig.POOL_PAGE_SIZE, "4KiB");
        config.put(EngineConfig.POOL_SIZE, Math.max(4, 4L * batchKeys * 4096 / (1 << 20) + 1) + "MiB");
        config.put(IpcSettings.ENABLED, "true");
        config.put(IpcSettings.SOCKET_PATH, pool + ".sock");
        config.putAll(settings.settings());
        return config;
    }

    /** Reads a client idle strategy by its name in settings (adaptive, timed, awake, backoff, spin, sleep), naming the ones there are when it is none. */
    static final class ClientIdleConverter implements CommandLine.ITypeConverter<IdleStrategy.Kind>
    {
        @Override
        public IdleStrategy.Kind convert(final String value)
        {
            for (final IdleStrategy.Kind kind : IdleStrategy.Kind.values())
            {
                if (kind.configName().equals(value))
                {
                    return kind;
                }
            }
            throw new CommandLine.TypeConversionException("--client-idle-strategy=" + value + " is none of adaptive, timed, awake, backoff, spin, sleep");
        }
    }
}
