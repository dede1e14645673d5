package io.kvtier.cli;

import io.kvtier.bench.chaos.ChaosCampaign;
import io.kvtier.bench.chaos.ChaosOptions;
import io.kvtier.bench.chaos.ChaosReport;
import io.kvtier.bench.ipc.JavaProcesses;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code kvtier chaos}: runs the chaos campaign (bench's {@link ChaosCampaign}) against {@code kvtier serve}
 * started as a process of its own with this command's JVM and module path, and prints its figures.
 */
@Command(name = "chaos", mixinStandardHelpOptions = true,
    description = {
        "Runs kvtier serve in a process of its own (a pool and two L3 tiers in directories the command owns, IPC on, short"
            + " leases) and honest client processes over IPC that replay requests with shared prefixes and check every page they"
            + " read against bytes derived from its key (in Java, C and Python, as --clients says), while faults drawn from --seed hit them: kill -9 of clients (holding"
            + " pins, mid-write, at random), SIGSTOP of a client past its lease then SIGCONT (its late writes must not land), kill -9"
            + " of the engine and restart on the same L3, the L3 filesystem and the pool's filesystem filling up (tmpfs the command"
            + " mounts when it may), the engine's descriptor limit, hostile raw-protocol clients, and, when the faults tier type is"
            + " installed, tier faults (I/O errors, slow and stalled calls, short reads, torn writes, bit flips, replaced objects,"
            + " late writes).",
        "Then it heals every fault, waits out every lease, counts leaked pins and reservations, restarts the engine with an empty"
            + " pool and reads back every page a client saw acknowledged as backed up. docs/chaos.md describes each fault and"
            + " figure."},
    footer = {"", "Examples:", "  kvtier chaos --duration 2m --json", "  kvtier chaos --duration 60m --min-each 100 --overtime 30m --json", "  kvtier chaos --duration 2m --clients java,c,python --client-processes 6",
        "  kvtier chaos --replay /tmp/kvtier-chaos/replay.json", "",
        "Exits 5 when wrong_bytes_served, pages_lost, pins_leaked or reservations_leaked is not 0 (or a late write landed, or a"
            + " hostile request was let through), after writing <work-dir>/replay.json.", ExitCode.HELP})
public final class ChaosCommand implements Callable<Integer>
{
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--duration", defaultValue = "10m", paramLabel = "DURATION",
        description = "How long faults are injected (the healed verification follows). Default: ${DEFAULT-VALUE}.")
    Duration duration;

    @Option(names = "--seed", paramLabel = "N", description = "The seed every fault decision is drawn from. Default: drawn at random, and printed.")
    Long seed;

    @Option(names = "--json", description = "Print one JSON object: pages_verified, wrong_bytes_served, pages_lost, pages_destroyed_by_faults,"
        + " pins_leaked, reservations_leaked, faults, client_kills, client_stops, engine_restarts, hostile_refused, clients_by_language, tiers,"
        + " seed, duration_s, min_each, overtime_s, short_of_min_each.")
    boolean json;

    @Option(names = "--work-dir", paramLabel = "DIR", description = "The directory the campaign owns (config, L3 tiers, logs, replay.json)."
        + " Default: kvtier-chaos-<pid> in the temporary directory.")
    Path workDir;

    @Option(names = "--clients", defaultValue = "java", split = ",", paramLabel = "LIST",
        description = "Client languages: java, c, python (C and Python from this checkout's clients/c and clients/python; one that"
            + " cannot run here is named with what it lacks, and the others run). Default: ${DEFAULT-VALUE}.")
    List<String> clients;

    @Option(names = {"--client-processes", "--java-clients"}, defaultValue = "4", paramLabel = "N",
        description = "Honest client processes at any time, the --clients languages taking them in turn. Default: ${DEFAULT-VALUE}.")
    int clientProcesses;

    @Option(names = "--min-each", defaultValue = "0", paramLabel = "N",
        description = "Go on past --duration, drawing only the fault kinds injected fewer than N times (and raising the rates of such"
            + " tier kinds), until every kind has been injected N times or --overtime has passed too; min_each, overtime_s and"
            + " short_of_min_each report it. Default: ${DEFAULT-VALUE} (the duration alone decides).")
    int minEach;

    @Option(names = "--overtime", paramLabel = "DURATION",
        description = "The most the faulty phase may run past --duration to reach --min-each. Default: as long as --duration.")
    Duration overtime;

    @Option(names = "--replay", paramLabel = "FILE",
        description = "Runs again with the seed, duration and clients of a replay.json a failed campaign wrote.")
    Path replay;

    @Option(names = "--wrong-writer", hidden = true, arity = "0..1", fallbackValue = "java", paramLabel = "LANGUAGE",
        description = "Test only: the first client of LANGUAGE (default java) commits another key's bytes, so the campaign must report"
            + " wrong bytes and exit 5.")
    String wrongWriter;

    @Override
    public Integer call() throws Exception
    {
        final var err = spec.commandLine().getErr();
        if (replay != null)
        {
            final Map<String, String> fields;
            try
            {
                fields = ChaosCampaign.readReplay(replay);
            }
            catch (final IOException ex)
            {
                err.println("kvtier: --replay: " + ex.getMessage());
                return ExitCode.USAGE;
            }
            seed = Long.parseLong(fields.get("seed"));
            duration = Duration.ofSeconds(Long.parseLong(fields.get("duration_s")));
            clientProcesses = Integer.parseInt(fields.get("client_processes"));
            clients = Arrays.asList(fields.get("clients").split(","));
            minEach = Integer.parseInt(fields.get("min_each"));
            overtime = Duration.ofSeconds(Long.parseLong(fields.get("overtime_s")));
        }
        for (final String client : clients)
        {
            if (!List.of("java", "c", "python").contains(client))
            {
                err.println("kvtier: --clients: unknown client '" + client + "' (allowed: java, c, python)");
                return ExitCode.USAGE;
            }
        }
        if (clientProcesses < 1 || clientProcesses > 64)
        {
            err.println("kvtier: --client-processes: " + clientProcesses + " is not from 1 to 64");
            return ExitCode.USAGE;
        }
        if (wrongWriter != null && !clients.contains(wrongWriter))
        {
            err.println("kvtier: --wrong-writer: '" + wrongWriter + "' is not one of --clients " + String.join(",", clients));
            return ExitCode.USAGE;
        }
        if (duration.isNegative() || duration.isZero())
        {
            err.println("kvtier: --duration: " + duration + " is not a positive duration");
            return ExitCode.USAGE;
        }
        if (minEach < 0)
        {
            err.println("kvtier: --min-each: " + minEach + " is negative (0 lets the duration alone decide)");
            return ExitCode.USAGE;
        }
        final Duration allowed = overtime != null ? overtime : duration;
        final long chosen = seed != null ? seed : System.nanoTime();
        final Path dir = workDir != null ? workDir : Path.of(System.getProperty("java.io.tmpdir"), "kvtier-chaos-" + ProcessHandle.current().pid());
        Files.createDirectories(dir);
        final List<String> serve = JavaProcesses.java(Main.class, "serve").command();
        final ChaosCampaign campaign = new ChaosCampaign(new ChaosOptions(duration, chosen, dir, clients, clientProcesses, wrongWriter, serve,
            minEach, allowed), err);
        err.println("kvtier chaos: seed " + chosen + ", " + duration.toSeconds() + " s of faults"
            + (minEach > 0 ? " (up to " + allowed.toSeconds() + " s more until every kind is injected " + minEach + " times)" : "")
            + ", work directory " + dir
            + (campaign.hasFaultTier() ? "" : "; tier faults are not available (no tier of type faults is installed)"));
        final ChaosReport report = campaign.run();
        final var out = spec.commandLine().getOut();
        out.println(json ? report.toJson() : report.toText());
        out.flush();
        if (report.failed())
        {
            err.println("kvtier chaos: FAILED; replay with: kvtier chaos --replay " + dir.resolve("replay.json"));
            return ExitCode.CORRUPT;
        }
        return ExitCode.OK;
    }
}
