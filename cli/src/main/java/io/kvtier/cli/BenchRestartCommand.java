package io.kvtier.cli;

import io.kvtier.bench.warm.WarmRestartBenchmark;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;

/**
 * {@code kvtier bench restart}: the pool hit rate of the first minute after an engine is killed, with a
 * warm restart against a cold one, from the same dead pool in one run.
 */
@Command(name = "restart", mixinStandardHelpOptions = true,
    description = {
        "Starts an engine in a process of its own, replays --before requests of the synthetic chat trace on it (multi-turn"
            + " conversations, no L3 tier), and kills it with SIGKILL, which leaves its pool file behind as a crash does (or, with --stop"
            + " clean, stops it cleanly with pool.keep-on-stop=true, as for an upgrade). The dead pool"
            + " is copied; then an engine in this process starts on it with pool.warm-restart=true (warm: it adopts the dead engine's"
            + " committed pages in the background) and replays the next --rate x --window requests at --rate per second, and, as the"
            + " baseline, an engine starts on the copy with pool.warm-restart=false (cold) and replays the same requests alike.",
        "Before either, an engine is started and closed on a fresh pool, so that neither restart's start pays for loading classes.",
        "It prints each restart's pool hit rate over those requests (blocks found in the pool over blocks asked for), its start time,"
            + " and for the warm one the pages adopted, dropped as corrupt and skipped, and when adoption had accounted for every page."
            + " Every hit page's first word is checked against its block: a wrong one fails the command with exit code 5."},
    footer = {"", "Examples:", "  kvtier bench restart", "  kvtier bench restart --json --window 20s --rate 30", "  kvtier bench restart --stop clean"})
public final class BenchRestartCommand implements Callable<Integer>
{
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--page-size", defaultValue = "16KiB", paramLabel = "SIZE", description = "pool.page-size. Default: ${DEFAULT-VALUE}.")
    ByteSize pageSize;

    @Option(names = "--pool-size", defaultValue = "64MiB", paramLabel = "SIZE", description = "pool.size. Default: ${DEFAULT-VALUE}.")
    ByteSize poolSize;

    @Option(names = "--conversations", defaultValue = "100", paramLabel = "N", description = "Conversation slots of the chat trace. Default: ${DEFAULT-VALUE}.")
    int conversations;

    @Option(names = "--before", defaultValue = "5000", paramLabel = "N", description = "Requests the engine replays before it is killed. Default: ${DEFAULT-VALUE}.")
    int before;

    @Option(names = "--rate", defaultValue = "10", paramLabel = "N", description = "Requests per second after the restart. Default: ${DEFAULT-VALUE}.")
    double rate;

    @Option(names = "--window", defaultValue = "60s", paramLabel = "DURATION", description = "How long after the restart is measured. Default: ${DEFAULT-VALUE}.")
    Duration window;

    @Option(names = "--seed", defaultValue = "1", paramLabel = "N", description = "The trace's seed. Default: ${DEFAULT-VALUE}.")
    long seed;

    @Option(names = "--stop", defaultValue = "kill", paramLabel = "HOW",
        description = "How the first engine ends: kill (SIGKILL, a crash) or clean (a clean stop with pool.keep-on-stop=true, as for an upgrade)."
            + " Default: ${DEFAULT-VALUE}.")
    String stop;

    @Option(names = "--dir", paramLabel = "DIR", description = "Where the pools go. Default: /dev/shm, or the temporary directory without it.")
    Path directory;

    @Option(names = "--json", description = "Print one JSON object: hit_rate_warm, hit_rate_cold, wrong_pages, and an object per restart.")
    boolean json;

    @Override
    public Integer call()
    {
        final var err = spec.commandLine().getErr();
        final WarmRestartBenchmark.Plan plan;
        try
        {
            if (!stop.equals("kill") && !stop.equals("clean"))
            {
                throw new IllegalArgumentException("--stop " + stop + " is not kill or clean");
            }
            plan = new WarmRestartBenchmark.Plan(pageSize.bytes(), poolSize.bytes(), conversations, before, rate, window, seed, stop.equals("clean"));
        }
        catch (final IllegalArgumentException ex)
        {
            err.println("kvtier: " + ex.getMessage());
            return ExitCode.USAGE;
        }
        final WarmRestartBenchmark.Result result;
        try
        {
            result = WarmRestartBenchmark.measure(directory != null ? directory : DemoCommand.defaultPoolDirectory(), plan);
        }
        catch (final IOException | IllegalStateException ex)
        {
            err.println("kvtier: " + ex.getMessage());
            return ExitCode.FAILURE;
        }
        final var out = spec.commandLine().getOut();
        out.println(json ? result.toJson() : result.toText());
        out.flush();
        if (result.wrongPages())
        {
            err.println("kvtier: a restarted engine served pages holding another block's bytes (wrong_pages above)");
            return ExitCode.CORRUPT;
        }
        return ExitCode.OK;
    }
}
