package io.kvtier.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.kvtier.bench.ipc.PythonRoundTrips;
import io.kvtier.bench.tier.MooncakeMasterProcess;
import io.kvtier.bench.workload.ByteWorkBaseline;
import io.kvtier.bench.workload.ChatWorkload;
import io.kvtier.bench.workload.ProcessWorkloadClient;
import io.kvtier.bench.workload.ThreadsCpu;
import io.kvtier.bench.workload.WorkloadReport;
import io.kvtier.bench.workload.WorkloadRunner;
import io.kvtier.engine.Engine;
import io.kvtier.engine.config.ConfigFile;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.client.Namespace;
import io.kvtier.engine.tier.TierHandle;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;
import io.kvtier.client.pool.CountersDescriptor;
import io.kvtier.spi.ConfigValues;
import io.kvtier.spi.TierUsage;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * {@code kvtier demo}: the engine on an embedded default. A small pool and a POSIX L3 in a temporary
 * directory serve a synthetic multi-turn chat workload whose page bytes derive from their keys, so
 * every byte read back is checked. The L3 may be any tier type instead ({@code --l3 TYPE}): the demo
 * gives the POSIX and Mooncake tiers the settings a short run needs, and any other type none, so a
 * plugin's author passes its settings with {@code --set tier.l3.KEY=VALUE}.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
    description = {
        "Runs the engine with a small shared-memory pool and a POSIX L3 tier in a temporary directory, replays a built-in"
            + " multi-turn chat workload (shared system prompts, growing conversations) from concurrent clients, checks every"
            + " byte read back, and prints a summary: requests, pages written and read, hit rate per tier, throughput,"
            + " latency percentiles, pages verified and corrupt.",
        "With --ipc the engine serves the IPC protocol (docs/ipc-protocol.md) and each client is an OS process of its own,"
            + " attached over the socket and the shared-memory rings, reading and writing pages in place in the mapped pool;"
            + " the workload, the byte checks and the summary are the same.",
        "With --l3 mooncake the L3 tier is a Mooncake Store (docs/plugins/mooncake.md): the demo starts mooncake_master on loopback"
            + " from $KVTIER_MOONCAKE_HOME, or uses the master --mooncake-master names.",
        "With --l3 TYPE for any other type, the L3 tier is that provider's, from the class path or from plugins.dir"
            + " (--set plugins.dir=DIR, or --config FILE): the demo gives it no settings of its own, so pass the tier's with"
            + " --set tier.l3.KEY=VALUE (docs/writing-a-tier.md). The summary names each tier's type and its describe() line.",
        "With --engine sglang|vllm|lmcache two processes of that inference engine replay the workload one after the other, each driving"
            + " kvtier's adapter for it (kvtier.adapters.ENGINE) as the engine's loader and controller do: the second, with host memory of its"
            + " own, loads the prefixes the first stored, every byte checked (docs/adapters/).",
        "Throughput is page payload bytes read and written per second in the steady state: the requests after the warm-up (--warmup, the"
            + " first quarter of the expected requests by default, and then until the engine JVM's JIT compilers have quieted down unless"
            + " --no-wait-for-jit), whose figures are given apart. Once the clients are done and the engine"
            + " and its temporary L3 directories are gone, the demo runs its no-engine baseline (unless --no-baseline): the same workload"
            + " (shape, seed, client count as threads) with no engine at all, doing only the clients' page work: the page keys computed"
            + " from the tokens, every byte of each cached prefix page checked against its key, each missing page written and sealed"
            + " (CRC32C of the payload, a trailer with key and length), in frames of the pool's size in a shared-memory file in the pool's"
            + " directory, found through an in-memory table that never evicts. It runs three passes, each from a fresh table, and"
            + " throughput_vs_baseline is the demo's steady-state page MB/s over the median pass's (docs/PERFORMANCE.md, The demo against"
            + " its no-engine baseline). cpu_us_per_request gives the CPU a request cost over the whole run: the clients' threads (and the"
            + " baseline's), the engine thread, the tiers' threads, the kernel's io_uring workers and the JIT compilers."})
public final class DemoCommand implements Callable<Integer>
{
    /** The lease of the master the demo starts: Mooncake's default. */
    private static final java.time.Duration MOONCAKE_LEASE_TTL = java.time.Duration.ofSeconds(10);

    /** How to show progress. */
    enum Progress
    {
        auto, always, never
    }

    /** The built-in L3 type the demo runs by default, in a temporary directory of its own. */
    static final String POSIX = "posix";
    /** The second, larger L3 tier the demo adds to a POSIX one, and migrates to. */
    static final String COLD_TIER = "cold";

    /** The L3 type whose master the demo can start itself. */
    static final String MOONCAKE = "mooncake";

    /** The L3 tier's type setting, which --l3 sets. */
    private static final String L3_TYPE_KEY = EngineConfig.TIER_PREFIX + "l3.type";

    /** Which client library the --ipc clients use. */
    enum ClientKind
    {
        java, c, python
    }

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @CommandLine.ParentCommand
    Main main;

    @Option(names = "--json", description = "Print the summary as one JSON object on stdout.")
    boolean json;

    @Option(names = "--conversations", defaultValue = "540", paramLabel = "N", description = "Conversations to replay. Default: ${DEFAULT-VALUE}.")
    int conversations;

    @Option(names = "--clients", defaultValue = "2", paramLabel = "N", description = "Concurrent client sessions. Default: ${DEFAULT-VALUE}.")
    int clients;

    @Option(names = "--seed", defaultValue = "42", paramLabel = "N", description = "Workload seed. Default: ${DEFAULT-VALUE}.")
    long seed;

    @Option(names = "--pool-size", defaultValue = "24MiB", paramLabel = "SIZE", description = "Pool size (small, so the pool evicts and L3 serves hits). Default: ${DEFAULT-VALUE}.")
    ByteSize poolSize;

    @Option(names = "--page-size", defaultValue = "16KiB", paramLabel = "SIZE", description = "Bytes per page. Default: ${DEFAULT-VALUE}.")
    ByteSize pageSize;

    @Option(names = "--page-tokens", defaultValue = "16", paramLabel = "N", description = "Tokens per page. Default: ${DEFAULT-VALUE}.")
    int pageTokens;

    @Option(names = "--l3-dir", paramLabel = "DIR", description = "Directory of the POSIX L3 tier. Default: a new temporary directory, removed at the end.")
    Path l3Dir;

    @Option(names = "--l3", paramLabel = "TYPE",
        description = "The L3 tier's type: posix (files in --l3-dir), mooncake (a Mooncake Store: a master started from $KVTIER_MOONCAKE_HOME on"
            + " loopback, or the one --mooncake-master names; the library from KVTIER_MOONCAKE_LIB or KVTIER_MOONCAKE_HOME), or any other"
            + " tier provider on the class path or in plugins.dir, given no settings by the demo (pass them with --set tier.l3.KEY=VALUE)."
            + " Default: tier.l3.type when --set or --config gives it, else posix.")
    String l3Type;

    @Option(names = {"-c", "--config"}, paramLabel = "FILE",
        description = "Settings file (key = value lines; see docs/config.md), over the demo's own defaults; --set overrides it.")
    Path configFile;

    @Option(names = "--mooncake-master", paramLabel = "HOST:PORT",
        description = "With --l3 mooncake, the master to use instead of starting one.")
    String mooncakeMaster;

    @Option(names = "--progress", defaultValue = "auto", paramLabel = "WHEN", description = "Progress bar on stderr: auto (when stderr is a terminal), always, never. Default: ${DEFAULT-VALUE}.")
    Progress progress;

    @Option(names = "--ipc", description = "Run each client as a separate process attached over the IPC protocol, not as a session in this process.")
    boolean ipc;

    @Option(names = "--warmup", defaultValue = "0.25", paramLabel = "SHARE",
        description = "The share of the expected requests, from 0 to 0.9, that warm the JVMs up: their figures are given apart, and the throughput"
            + " and throughput_vs_baseline are the rest's (the steady state). Default: ${DEFAULT-VALUE}.")
    double warmup;

    @Option(names = "--wait-for-jit", negatable = true, defaultValue = "true", fallbackValue = "true",
        description = "Whether the warm-up, once its --warmup share is done, also lasts until the engine JVM's JIT compilers have quieted"
            + " down (less than a tenth of a core over half a second; at most 0.9 of the expected requests): on a host of few cores the"
            + " compilers otherwise take a core from the steady state. The baseline then warms up for as many requests."
            + " --no-wait-for-jit ends the warm-up at its share. Default: on.")
    boolean waitForJit;

    @Option(names = "--jvm-warmup", negatable = true, defaultValue = "true", fallbackValue = "true",
        description = "Before the measured run, whether to run the same workload (at most 540 conversations of it) with other seeds on an engine of its own (its own pool"
            + " file and temporary L3 directories, removed before the measured engine starts), up to three rounds until one leaves the JIT"
            + " compilers under a tenth of its time, then to wait (at most 20 s) for the compilers to go quiet, so that the JIT compilers have compiled the"
            + " engine's code before the clock starts: on a host of few cores they otherwise compile through most of the run and take a"
            + " core from its steady state. Only when every L3 tier is a temporary directory of the demo's own (the default); --no-jvm-warmup"
            + " skips it. Default: on.")
    boolean jvmWarmup;

    @Option(names = "--baseline", negatable = true, defaultValue = "true", fallbackValue = "true",
        description = "After the run, run the no-engine baseline (the same workload's page work with no engine) and report throughput_vs_baseline;"
            + " --no-baseline skips it. Default: on.")
    boolean baseline;

    @Option(names = "--client", defaultValue = "java", paramLabel = "LIBRARY",
        description = "With --ipc, the client library of the client processes: java, c or python. Default: ${DEFAULT-VALUE}.")
    ClientKind clientKind;

    @Option(names = "--engine", paramLabel = "ENGINE",
        description = "Replay the workload through two processes of an inference engine (sglang, vllm or lmcache), each driving kvtier's adapter for it"
            + " (kvtier.adapters.ENGINE) as that engine's loader and controller do; the second finds what the first stored. Implies --ipc.")
    EngineDrivers.Kind engineKind;

    @Mixin
    SettingsMixin settings;

    @Override
    public Integer call() throws Exception
    {
        final PrintWriter out = spec.commandLine().getOut();
        final PrintWriter err = spec.commandLine().getErr();
        if (conversations < 1 || clients < 1 || pageTokens < 1)
        {
            throw new CommandLine.ParameterException(spec.commandLine(), "--conversations, --clients and --page-tokens must be at least 1");
        }
        if (!(warmup >= 0 && warmup <= WorkloadRunner.Options.WARMUP_SHARE_MAX))
        {
            throw new CommandLine.ParameterException(spec.commandLine(), "--warmup " + warmup + " is not a share from 0 to "
                + WorkloadRunner.Options.WARMUP_SHARE_MAX + " of the expected requests");
        }
        if (engineKind != null && clientKind != ClientKind.java)
        {
            throw new CommandLine.ParameterException(spec.commandLine(), "--client chooses --ipc's client library; --engine " + engineKind
                + " runs that engine's driver over kvtier.adapters." + engineKind + " instead: give one of them");
        }
        if (!ipc && clientKind != ClientKind.java)
        {
            throw new CommandLine.ParameterException(spec.commandLine(), "--client " + clientKind + " needs --ipc: without it the clients are sessions in this process");
        }
        Path engineDirectory = null;
        EngineDrivers drivers = null;
        if (engineKind != null)
        {
            engineDirectory = EngineAdapterDemo.temporaryDirectory();
            final EngineDrivers.Found found = EngineDrivers.find(engineKind, engineDirectory);
            if (found.drivers() == null)
            {
                deleteTree(engineDirectory);
                err.println("kvtier: demo --engine " + engineKind + ": " + found.missing());
                return ExitCode.UNAVAILABLE;
            }
            drivers = found.drivers();
        }
        final Path pythonBinding = clientKind == ClientKind.python ? PythonRoundTrips.findBinding().orElse(null) : null;
        final Path cClient = clientKind == ClientKind.c ? ProcessWorkloadClient.findCClient().orElse(null) : null;
        final String missing = missingClient(clientKind, clientKind == ClientKind.c ? cClient : pythonBinding);
        if (missing != null)
        {
            err.println("kvtier: demo --ipc --client " + clientKind + ": " + missing);
            return ExitCode.UNAVAILABLE;
        }
        if (!main.verbose)
        {
            // The demo's own summary says what happened; engine start-up chatter would only bury it.
            Logging.atLeast(java.util.logging.Level.WARNING);
        }
        // The file's settings and --set's, which override the demo's defaults below.
        final Map<String, String> given = new LinkedHashMap<>(configFile == null ? Map.of() : ConfigFile.read(configFile));
        given.putAll(settings.settings());
        final String tierType = l3Type(given);
        if (mooncakeMaster != null && !tierType.equals(MOONCAKE))
        {
            throw new CommandLine.ParameterException(spec.commandLine(), "--mooncake-master needs --l3 mooncake");
        }
        if (l3Dir != null && !tierType.equals(POSIX))
        {
            throw new CommandLine.ParameterException(spec.commandLine(), "--l3-dir is the POSIX tier's directory: it needs --l3 posix");
        }
        Path temporaryL3 = null;
        Path temporaryCold = null;
        Path pythonScript = null;
        Thread cleanup = null;
        MooncakeMasterProcess startedMaster = null;
        try
        {
            final String mooncakeAddress;
            if (tierType.equals(MOONCAKE) && mooncakeMaster == null)
            {
                final Optional<Path> home = MooncakeMasterProcess.homeFromEnvironment(System.getenv());
                if (home.isEmpty())
                {
                    err.println("kvtier: demo --l3 mooncake: set " + MooncakeMasterProcess.HOME_ENV_NAME + " to a Mooncake install ("
                        + MooncakeMasterProcess.BINARY + ", lib/" + MooncakeMasterProcess.LIBRARY_FILE + ") so the demo can start a master,"
                        + " or name a running one with --mooncake-master HOST:PORT");
                    return ExitCode.UNAVAILABLE;
                }
                final Path masterLog = Files.createTempDirectory("kvtier-demo-mooncake-").resolve("mooncake_master.log");
                try
                {
                    startedMaster = MooncakeMasterProcess.start(home.get(), MOONCAKE_LEASE_TTL, masterLog);
                }
                catch (final IOException ex)
                {
                    err.println("kvtier: demo --l3 mooncake: " + ex.getMessage());
                    return ExitCode.UNAVAILABLE;
                }
                mooncakeAddress = startedMaster.address();
            }
            else
            {
                mooncakeAddress = mooncakeMaster;
            }
            final Map<String, String> config = new LinkedHashMap<>();
            final Path poolPath = defaultPoolDirectory().resolve("kvtier-demo-" + ProcessHandle.current().pid());
            config.put(EngineConfig.POOL_PATH, poolPath.toString());
            config.put(EngineConfig.POOL_SIZE, poolSize.toString());
            config.put(EngineConfig.POOL_PAGE_SIZE, pageSize.toString());
            config.put(L3_TYPE_KEY, tierType);
            // Each tier type takes its own settings: the demo's go only to the type they are for, and the
            // file's and --set's override them. Any other type gets none: its author knows what it needs.
            if (tierType.equals(MOONCAKE))
            {
                config.put("tier.l3.master", mooncakeAddress);
                // The demo keeps some 15,000 frames of 20 KiB: this node's segment holds them all.
                config.put("tier.l3.global-segment-size", "512MiB");
                config.put("tier.l3.key-prefix", "kvtier-demo/");
            }
            else if (tierType.equals(POSIX))
            {
                if (l3Dir != null || !given.containsKey("tier.l3.dir"))
                {
                    config.put("tier.l3.dir", (l3Dir != null ? l3Dir : (temporaryL3 = Files.createTempDirectory("kvtier-demo-l3-"))).toString());
                }
                // The demo keeps some 15,000 pages: one fan-out level (256 directories, made at start) holds
                // them fine, where the default two would have the tier make 65,792 directories for a 2 s run.
                config.put("tier.l3.fanout-levels", "1");
                if (temporaryL3 != null)
                {
                    // A directory the demo made is its engine's alone, so its pages go in slabs: the files layout
                    // costs an inode a page, and on ext4 allocating them took half the run's CPU (the kernel's scan
                    // past recently deleted inodes), more than the clients' own work. A directory the user names
                    // gets the tier's own choice: a slab, unless it already holds the files layout.
                    config.put("tier.l3.layout", "slab");
                }
                if (!given.keySet().stream().anyMatch(k -> k.startsWith(EngineConfig.TIER_PREFIX + COLD_TIER + ".")))
                {
                    // Two L3 tiers as a node has them: a small fast one that fills (l3) and a larger one (cold), with a
                    // migration that moves l3's coldest pages to cold once l3 is half full.
                    temporaryCold = Files.createTempDirectory("kvtier-demo-cold-");
                    config.put("tier.l3.capacity", "48MiB");
                    config.put("tier." + COLD_TIER + ".type", POSIX);
                    config.put("tier." + COLD_TIER + ".dir", temporaryCold.toString());
                    config.put("tier." + COLD_TIER + ".fanout-levels", "1");
                    config.put("tier." + COLD_TIER + ".layout", "slab");
                    config.put("l3.tiers", "l3, " + COLD_TIER);
                    config.put("migration.l3.target", COLD_TIER);
                    config.put("migration.l3.trigger", "0.5");
                    config.put("migration.l3.min-age", "0s");
                    config.put("migration.l3.batch", "128");
                    config.put("migration.l3.concurrency", "32");
                }
            }
            final Path socketPath = Path.of(poolPath + ".sock");
            if (ipc || engineKind != null)
            {
                config.put(IpcSettings.ENABLED, "true");
                config.put(IpcSettings.SOCKET_PATH, socketPath.toString());
            }
            if (engineKind != null)
            {
                // An engine's "exists" call counts the L3 pages after the pool's, and its load finds them in the pool.
                config.put(EngineConfig.POLICY_PREFETCH, "wait-complete");
            }
            config.putAll(given);
            final EngineConfig engineConfig = EngineConfig.from(config);
            final ChatWorkload workload = new ChatWorkload(ChatWorkload.Shape.demo(seed, conversations));
            // Ctrl-C ends the JVM (exit code 130) without unwinding this method: close the engine, or remove its pool file if
            // it was still starting, and remove the temporary L3 on the way out, so nothing is left in /dev/shm or the
            // temporary directory. Registered before the JVM warm-up and the engine's start, which take time of their own.
            final HookClosableEngine measuredEngine = new HookClosableEngine();
            final Path removeOnExit = temporaryL3;
            final Path removeColdOnExit = temporaryCold;
            final MooncakeMasterProcess stopOnExit = startedMaster;
            // Only a pool file the demo named is removed that way: one named in the settings may be another engine's.
            final boolean ownPool = engineConfig.poolPath().toAbsolutePath().equals(poolPath.toAbsolutePath());
            cleanup = new Thread(() ->
            {
                if (!measuredEngine.closeFromHook() && ownPool)
                {
                    deleteQuietly(poolPath);
                }
                removeTemporaries(removeOnExit, removeColdOnExit, stopOnExit);
            }, "kvtier-demo-cleanup");
            Runtime.getRuntime().addShutdownHook(cleanup);
            // Over IPC, the clients are processes of the kind asked for, attached to the socket they are given: the warm-up's
            // engine and the measured one each have their own.
            if (ipc && clientKind == ClientKind.python)
            {
                pythonScript = ProcessWorkloadClient.extractPythonClient();
            }
            final Path script = pythonScript;
            final Namespace clientNamespace = namespaceOf();
            final java.util.function.Function<Path, WorkloadRunner.ClientFactory> processClients = !ipc ? null
                : clientKind == ClientKind.python ? socket -> index -> ProcessWorkloadClient.startPython(script, pythonBinding, socket, pageTokens,
                    clientNamespace.modelId(), clientNamespace.kvLayout())
                : clientKind == ClientKind.c ? socket -> index -> ProcessWorkloadClient.startC(cClient, socket, pageTokens, clientNamespace.modelId(),
                    clientNamespace.kvLayout())
                : socket -> index -> ProcessWorkloadClient.start(socket, pageTokens, clientNamespace.modelId(), clientNamespace.kvLayout());
            final JvmWarmup warmedUp = !jvmWarmup ? JvmWarmup.skipped("not asked for (--no-jvm-warmup)")
                : engineKind != null ? JvmWarmup.skipped("the inference engines' processes warm themselves up")
                : temporaryL3 == null || temporaryCold == null ? JvmWarmup.skipped("the L3 tiers are not all temporary directories of the demo's own")
                : JvmWarmup.run(config, poolPath, conversations, seed, clients, pageTokens, namespaceOf(), processClients);
            final WorkloadReport report;
            final List<L3Summary> l3Tiers = new ArrayList<>();
            final long pagesMigrated;
            final EngineTime engineTime;
            final CpuSplit cpu;
            final io.kvtier.engine.Session.RoundTripLegs roundTripLegs;
            final long cleanupStart;
            try (Engine engine = measuredEngine.start(engineConfig))
            {
                final boolean showProgress = progress == Progress.always
                    || (progress == Progress.auto && System.console() != null && System.console().isTerminal());
                final ProgressBar bar = showProgress ? new ProgressBar(err) : null;
                final WorkloadRunner.Options options = new WorkloadRunner.Options(clients, pageTokens, clientNamespace, warmup, waitForJit);
                final Path socket = Path.of(config.getOrDefault(IpcSettings.SOCKET_PATH, socketPath.toString()));
                if (engineKind != null)
                {
                    final EngineAdapterDemo.Played played = EngineAdapterDemo.play(drivers, engineKind, socket, workload, pageTokens,
                        Math.toIntExact(engineConfig.pageSize()), engineDirectory);
                    for (final TierHandle tier : engine.tiers())
                    {
                        l3Tiers.add(L3Summary.of(tier, engineConfig, engine.counters()));
                    }
                    EngineAdapterDemo.print(out, json, played, engineConfig, l3Tiers);
                    return played.total("pages_corrupt") > 0 ? ExitCode.CORRUPT : ExitCode.OK;
                }
                final WorkloadRunner runner;
                runner = processClients == null ? new WorkloadRunner(engine, workload, options)
                    : new WorkloadRunner(engine, workload, options, processClients.apply(socket));
                final ThreadsCpu cpuBefore = ThreadsCpu.now();
                report = runner.run(bar, 100);
                final ThreadsCpu cpuAfter = ThreadsCpu.now();
                cpu = new CpuSplit(cpuBefore.isKnown() && cpuAfter.isKnown() ? cpuAfter.since(cpuBefore) : java.util.Map.of(),
                    ipc ? -1 : runner.clientCpuNanos(), report.requests());
                roundTripLegs = runner.roundTripLegs();
                if (bar != null)
                {
                    bar.done();
                }
                for (final TierHandle tier : engine.tiers())
                {
                    l3Tiers.add(L3Summary.of(tier, engineConfig, engine.counters()));
                }
                pagesMigrated = engine.snapshot().get(EngineCounter.PAGES_MIGRATED);
                engineTime = EngineTime.of(engine);
                // The clock stopped with the last client; closing the engine (its backups in flight end) and removing the
                // temporary L3 directories happen after it, timed apart, and before the baseline, which they would slow down.
                cleanupStart = System.nanoTime();
            }
            if (temporaryL3 != null)
            {
                deleteTree(temporaryL3);
                temporaryL3 = null;
            }
            if (temporaryCold != null)
            {
                deleteTree(temporaryCold);
                temporaryCold = null;
            }
            final long cleanupNanos = System.nanoTime() - cleanupStart;
            // The baseline warms up for as many requests as the demo did, whatever ended the demo's warm-up.
            final double baselineWarmup = Math.min(WorkloadRunner.Options.WARMUP_SHARE_MAX,
                report.warmup().requests() / (double)Math.max(1, workload.shape().expectedRequests()));
            final Baseline measured = baseline ? runBaseline(report, engineConfig, workload.shape(),
                new WorkloadRunner.Options(clients, pageTokens, namespaceOf(), baselineWarmup)) : null;
            print(out, report, engineConfig, l3Tiers, pagesMigrated, engineTime, cpu, roundTripLegs, cleanupNanos, measured, warmedUp);
            return exitCode(report);
        }
        finally
        {
            if (cleanup != null)
            {
                try
                {
                    Runtime.getRuntime().removeShutdownHook(cleanup);
                }
                catch (final IllegalStateException ex)
                {
                    // the JVM is exiting: the hook does the cleanup
                }
            }
            removeTemporaries(temporaryL3, temporaryCold, startedMaster);
            if (pythonScript != null)
            {
                Files.deleteIfExists(pythonScript);
            }
            if (engineDirectory != null)
            {
                deleteTree(engineDirectory);
            }
        }
    }

    /**
     * Removes what the demo made for its L3 and stops the Mooncake master it started: on the way out, and from the
     * Ctrl-C hook.
     *
     * @param l3     the temporary l3 directory, or null
     * @param cold   the temporary cold directory, or null
     * @param master the master the demo started, or null
     */
    private static void removeTemporaries(final Path l3, final Path cold, final MooncakeMasterProcess master)
    {
        if (l3 != null)
        {
            deleteTree(l3);
        }
        if (cold != null)
        {
            deleteTree(cold);
        }
        if (master != null)
        {
            master.close();
        }
    }

    /** @return the namespace of the demo's pages */
    private Namespace namespaceOf()
    {
        return new Namespace("kvtier-demo/synthetic-chat", "demo/page" + pageTokens + "/" + pageSize, 0, "");
    }

    /**
     * The no-engine baseline's outcome.
     *
     * @param result what it did, or null when it could not run
     * @param error  why it could not run, or null
     */
    record Baseline(ByteWorkBaseline.Result result, String error)
    {
    }

    /**
     * Runs the no-engine baseline after the demo, with the demo's workload, clients and warm-up share.
     *
     * @param report  the demo's run
     * @param config  the engine's settings: page size, pool pages, the pool's directory
     * @param shape   the demo's workload
     * @param options the demo's clients, tokens per page, namespace and warm-up share
     * @return what it did, or why it could not run (no room for its frames, say): the demo's own figures stand either way
     * @throws InterruptedException if interrupted
     */
    private static Baseline runBaseline(final WorkloadReport report, final EngineConfig config, final ChatWorkload.Shape shape,
                                        final WorkloadRunner.Options options) throws InterruptedException
    {
        final Path directory = config.poolPath().toAbsolutePath().getParent();
        try
        {
            return new Baseline(ByteWorkBaseline.run(shape, options, Math.toIntExact(config.pageSize()),
                ByteWorkBaseline.framesFor(report.pagesWritten(), config.pageCount()), directory), null);
        }
        catch (final IOException | RuntimeException ex)
        {
            return new Baseline(null, ex.getMessage() == null ? ex.toString() : ex.getMessage());
        }
    }

    /**
     * @param report a finished run
     * @return {@link ExitCode#CORRUPT} if any page read back was wrong, else {@link ExitCode#OK}
     */
    static int exitCode(final WorkloadReport report)
    {
        return report.pagesCorrupt() > 0 ? ExitCode.CORRUPT : ExitCode.OK;
    }

    /**
     * @param given the settings of --config and --set
     * @return the L3 tier's type: --l3's, else tier.l3.type's, else posix
     * @throws CommandLine.ParameterException if --l3 and tier.l3.type name different types
     */
    private String l3Type(final Map<String, String> given)
    {
        final String set = given.containsKey(L3_TYPE_KEY) ? given.get(L3_TYPE_KEY).strip() : null;
        if (l3Type != null && set != null && !set.equals(l3Type.strip()))
        {
            throw new CommandLine.ParameterException(spec.commandLine(), "--l3 " + l3Type + " and " + L3_TYPE_KEY + " = " + set
                + " name different tier types: give the type once");
        }
        return l3Type != null ? l3Type.strip() : set != null ? set : POSIX;
    }

    /**
     * What the summary says of one L3 tier, taken while the engine runs.
     *
     * @param name         its configured name
     * @param type         its type
     * @param description  its type and describe() line, as the engine recorded them at start
     * @param settings     its settings, without the tier.NAME. prefix
     * @param usage        how full it is, or null when usage() failed
     * @param usageError   what usage() threw, or null
     * @param hits         reads from it that were verified and served
     * @param bytesWritten bytes written into it, by backups and migrations
     */
    record L3Summary(String name, String type, String description, Map<String, String> settings, TierUsage usage, String usageError, long hits,
                     long bytesWritten)
    {
        /**
         * @param tier     a started tier
         * @param config   the engine's settings
         * @param counters the engine's counters, with each tier's
         * @return its summary; a tier whose usage() throws is reported with what it threw, not a stack trace
         */
        static L3Summary of(final TierHandle tier, final EngineConfig config, final EngineCounters counters)
        {
            final Map<String, String> settings = config.tiers().stream().filter(t -> t.name().equals(tier.name()))
                .map(EngineConfig.TierSettings::settings).findFirst().orElse(Map.of());
            TierUsage usage = null;
            String error = null;
            try
            {
                usage = tier.tier().usage();
                if (usage == null)
                {
                    error = "usage() returned null";
                }
            }
            catch (final RuntimeException | LinkageError | AssertionError | StackOverflowError ex)
            {
                error = "usage() threw " + ex;
            }
            return new L3Summary(tier.name(), tier.type(), tier.description(), settings, usage, error,
                counters.tierOpaque(tier.index(), CountersDescriptor.TIER_HITS), counters.tierOpaque(tier.index(), CountersDescriptor.TIER_BYTES_WRITTEN));
        }

        /** @return where the tier keeps its objects, for the banner: the master of a Mooncake tier, else nothing */
        String where()
        {
            return type.equals(MOONCAKE) && settings.containsKey("master") ? " on master " + settings.get("master") : "";
        }
    }

    private void print(final PrintWriter out, final WorkloadReport report, final EngineConfig config, final List<L3Summary> l3Tiers,
                       final long pagesMigrated, final EngineTime engineTime, final CpuSplit cpu,
                       final io.kvtier.engine.Session.RoundTripLegs roundTripLegs,
                       final long cleanupNanos,
                       final Baseline measured, final JvmWarmup warmedUp) throws IOException
    {
        if (!json)
        {
            final StringBuilder tiers = new StringBuilder();
            for (final L3Summary tier : l3Tiers)
            {
                tiers.append(", L3 tier ").append(tier.name()).append(" (").append(tier.description()).append(')').append(tier.where());
            }
            out.println("kvtier demo: pool " + config.pageCount() + " pages of " + ConfigValues.formatSize(config.pageSize())
                + " in " + config.poolPath() + tiers + ", write policy " + config.writePolicy().configName() + ", eviction policy " + config.evictionPolicy()
                + ", prefetch " + config.prefetchMode().configName() + ", clients " + clientTransport());
            out.println(warmedUp.toText());
            out.print(report.toText());
            out.println(engineTime.toText());
            out.println(cpu.toText(measured == null ? null : measured.result()));
            if (roundTripLegs != null && roundTripLegs.roundTrips() > 0)
            {
                out.println(String.format(java.util.Locale.ROOT, "round trips         mean of %,d: %,.0f us from the client's publish to the engine"
                    + " taking it, %,.0f us in the engine, %,.0f us from its answer to the client running again", roundTripLegs.roundTrips(),
                    roundTripLegs.toEngineMicros(), roundTripLegs.inEngineMicros(), roundTripLegs.backMicros()));
            }
            for (final L3Summary tier : l3Tiers)
            {
                out.println("L3 tier " + tier.name() + " (" + tier.type() + "): " + (tier.usage() == null ? tier.usageError()
                    : tier.usage().objects() + " objects, " + String.format(java.util.Locale.ROOT, "%.1f MiB", tier.usage().usedBytes() / 1048576.0)
                    + ", " + tier.hits() + " hits, " + String.format(java.util.Locale.ROOT, "%.1f MiB", tier.bytesWritten() / 1048576.0) + " written"));
            }
            if (l3Tiers.size() > 1)
            {
                out.println("pages migrated between L3 tiers: " + pagesMigrated);
            }
            out.println(String.format(java.util.Locale.ROOT, "clean-up            %.2f s after the clock stopped (engine closed, temporary L3 removed)",
                cleanupNanos / 1e9));
            if (measured == null)
            {
                out.println("baseline            not run (--no-baseline)");
            }
            else if (measured.result() == null)
            {
                out.println("baseline            not run: " + measured.error());
            }
            else
            {
                final ByteWorkBaseline.Result result = measured.result();
                out.println(String.format(java.util.Locale.ROOT, "baseline            %,.1f MB/s of page data with no engine in the steady state"
                    + " (the same workload's page work on %d threads: %,d pages read, %,d written, %.2f s; warm-up %.2f s; the median of %d passes: %s MB/s)",
                    result.measured().pageMegabytesPerSecond(), result.clients(), result.measured().pagesRead(), result.measured().pagesWritten(),
                    result.measured().elapsedNanos() / 1e9, result.warmup().elapsedNanos() / 1e9, result.passes().size(),
                    String.join(", ", result.passes().stream().map(p -> String.format(java.util.Locale.ROOT, "%,.0f", p)).toList())));
                out.println(String.format(java.util.Locale.ROOT, "vs baseline         %.3f of the no-engine baseline's page throughput",
                    result.ratio(report)));
            }
            out.println(report.pagesCorrupt() == 0 ? "every page read back matched what was written" : "CORRUPT PAGES FOUND");
            out.flush();
            return;
        }
        try (JsonGenerator generator = new JsonFactory().createGenerator(out))
        {
            generator.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
            report.writeJson(generator, g ->
            {
                try
                {
                    g.writeObjectFieldStart("pool");
                    g.writeStringField("path", config.poolPath().toString());
                    g.writeNumberField("pages", config.pageCount());
                    g.writeNumberField("page_size_bytes", config.pageSize());
                    g.writeEndObject();
                    g.writeStringField("write_policy", config.writePolicy().configName());
                    g.writeStringField("eviction_policy", config.evictionPolicy());
                    g.writeStringField("prefetch", config.prefetchMode().configName());
                    g.writeStringField("client_transport", clientTransport());
                    g.writeNumberField("pages_migrated", pagesMigrated);
                    warmedUp.writeJson(g);
                    engineTime.writeJson(g);
                    cpu.writeJson(g, measured == null ? null : measured.result());
                    if (roundTripLegs != null && roundTripLegs.roundTrips() > 0)
                    {
                        g.writeObjectFieldStart("round_trip_legs_us");
                        g.writeNumberField("round_trips", roundTripLegs.roundTrips());
                        g.writeNumberField("to_engine", Math.round(roundTripLegs.toEngineMicros() * 100) / 100.0);
                        g.writeNumberField("in_engine", Math.round(roundTripLegs.inEngineMicros() * 100) / 100.0);
                        g.writeNumberField("back", Math.round(roundTripLegs.backMicros() * 100) / 100.0);
                        g.writeEndObject();
                    }
                    else
                    {
                        g.writeNullField("round_trip_legs_us");
                        g.writeStringField("round_trip_legs_missing", "the clients are processes of their own: their publish and wake-up are not on this clock");
                    }
                    g.writeNumberField("cleanup_s", Math.round(cleanupNanos / 1e5) / 1e4);
                    writeBaseline(g, report, measured);
                    g.writeArrayFieldStart("l3_tiers");
                    for (final L3Summary tier : l3Tiers)
                    {
                        g.writeStartObject();
                        g.writeStringField("name", tier.name());
                        g.writeStringField("type", tier.type());
                        g.writeNumberField("hits", tier.hits());
                        g.writeNumberField("objects", tier.usage() == null ? 0 : tier.usage().objects());
                        g.writeNumberField("bytes_written", tier.bytesWritten());
                        g.writeEndObject();
                    }
                    g.writeEndArray();
                    g.writeObjectFieldStart("l3");
                    for (final L3Summary tier : l3Tiers)
                    {
                        g.writeObjectFieldStart(tier.name());
                        g.writeStringField("type", tier.type());
                        g.writeStringField("description", tier.description());
                        // Where the two tier types the demo configures itself keep their objects, as before.
                        for (final String key : List.of("master", "dir"))
                        {
                            if (tier.settings().containsKey(key))
                            {
                                g.writeStringField(key, tier.settings().get(key));
                            }
                        }
                        if (tier.usage() != null)
                        {
                            g.writeNumberField("objects", tier.usage().objects());
                            g.writeNumberField("used_bytes", tier.usage().usedBytes());
                        }
                        else
                        {
                            g.writeStringField("usage_error", tier.usageError());
                        }
                        g.writeEndObject();
                    }
                    g.writeEndObject();
                }
                catch (final IOException ex)
                {
                    throw new UncheckedIOException(ex);
                }
            });
        }
        out.println();
        out.flush();
    }

    /**
     * Writes {@code baseline} (what the no-engine baseline did, or why it did not run) and {@code throughput_vs_baseline} (null
     * without a baseline).
     */
    private static void writeBaseline(final JsonGenerator g, final WorkloadReport report, final Baseline measured) throws IOException
    {
        g.writeObjectFieldStart("baseline");
        if (measured == null || measured.result() == null)
        {
            g.writeStringField("error", measured == null ? "not run (--no-baseline)" : measured.error());
        }
        else
        {
            final ByteWorkBaseline.Result result = measured.result();
            g.writeStringField("what", "the same workload's page work with no engine: keys, byte checks of cached pages, pattern writes, CRC32C"
                + " and trailer of new pages, in shared-memory frames, an unbounded in-memory table");
            g.writeNumberField("clients", result.clients());
            g.writeNumberField("frames", result.frames());
            g.writeNumberField("pages_not_cached", result.pagesNotCached());
            g.writeNumberField("throughput_page_mb_per_s", Math.round(result.measured().pageMegabytesPerSecond() * 1e4) / 1e4);
            g.writeObjectFieldStart("warmup");
            result.warmup().writeFields(g);
            g.writeEndObject();
            g.writeObjectFieldStart("steady_state");
            result.measured().writeFields(g);
            g.writeEndObject();
            g.writeArrayFieldStart("passes_mb_per_s");
            for (final double pass : result.passes())
            {
                g.writeNumber(Math.round(pass * 10) / 10.0);
            }
            g.writeEndArray();
        }
        g.writeEndObject();
        final double ratio = measured == null || measured.result() == null ? Double.NaN : measured.result().ratio(report);
        if (Double.isNaN(ratio))
        {
            g.writeNullField("throughput_vs_baseline");
        }
        else
        {
            g.writeNumberField("throughput_vs_baseline", Math.round(ratio * 1e4) / 1e4);
        }
    }

    /** @return how the clients reach the engine: in-process sessions, or processes over IPC with a client library */
    private String clientTransport()
    {
        return ipc ? "ipc-" + clientKind : "in-process";
    }

    /**
     * @param kind    a client library
     * @param binding for python the Python binding's directory, for c the C demo driver, found in this checkout; or null
     * @return what this build lacks to run demo clients with it, or null when nothing
     */
    static String missingClient(final ClientKind kind, final Path binding)
    {
        return switch (kind)
        {
            case java -> null;
            case c -> binding != null ? null
                : "the C demo client " + ProcessWorkloadClient.C_CLIENT + " (the demo's driver over the C client library libkvtier_client.so)"
                + " is not built in this checkout: ./mvnw -pl clients compile or make -C clients/c builds it (they need gcc and make);"
                + " use --client java or python";
            case python ->
            {
                final String missing = PythonRoundTrips.missing(binding);
                yield missing == null ? null : "the Python demo client needs the Python binding and its library: " + missing;
            }
        };
    }

    static Path defaultPoolDirectory()
    {
        final Path shm = Path.of("/dev/shm");
        return Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
    }

    /** Deletes a file if it is there, saying nothing if it cannot: for the way out after Ctrl-C. */
    static void deleteQuietly(final Path file)
    {
        try
        {
            Files.deleteIfExists(file);
        }
        catch (final IOException ex)
        {
            // the JVM is going away; nothing else to do
        }
    }

    static void deleteTree(final Path root)
    {
        try (Stream<Path> paths = Files.walk(root))
        {
            paths.sorted(Comparator.reverseOrder()).forEach(path ->
            {
                try
                {
                    Files.deleteIfExists(path);
                }
                catch (final IOException ignored)
                {
                    // best effort: a temporary directory
                }
            });
        }
        catch (final IOException | java.io.UncheckedIOException ignored)
        {
            // best effort: a temporary directory, which the shutdown hook and the command may both be removing
        }
    }
}
