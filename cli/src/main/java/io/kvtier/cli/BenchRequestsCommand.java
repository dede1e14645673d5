package io.kvtier.cli;

import io.kvtier.bench.requests.RequestCycleBenchmark;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * {@code kvtier bench requests}: one inference request done with the five fine-grained requests and with
 * protocol 1.3's two combined ones, interleaved in one run, in process and over IPC.
 */
@Command(name = "requests", mixinStandardHelpOptions = true,
    description = {
        "Starts an engine with IPC on (its pool in /dev/shm, or the temporary directory) and times one inference request: a chain of"
            + " --prefix-pages pages committed beforehand, which it pins and reads, then --fresh-pages new keys, for which it reserves"
            + " pages, writes 64 bytes into each and commits them.",
        "The baseline does it with five requests (LOOKUP, ACQUIRE, RELEASE, RESERVE, COMMIT); the measured way with two"
            + " (LOOKUP_AND_LOCK, COMMIT_AND_RELEASE), the same work. Both through an in-process session and through an IPC client in"
            + " this process. After --warmup rounds, --rounds rounds each time --requests requests each way, in alternating order; it"
            + " prints the median microseconds per request of each and the median of the rounds' ratios (combined over five). Every answer"
            + " is checked; the new pages are evicted after each request, off the clock."},
    footer = {"", "Examples:", "  kvtier bench requests", "  kvtier bench requests --json --prefix-pages 32 --fresh-pages 4 --rounds 50"})
public final class BenchRequestsCommand implements Callable<Integer>
{
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--prefix-pages", defaultValue = "16", paramLabel = "N", description = "Cached pages each request pins and reads. Default: ${DEFAULT-VALUE}.")
    int prefixPages;

    @Option(names = "--fresh-pages", defaultValue = "4", paramLabel = "N", description = "New pages each request writes. Default: ${DEFAULT-VALUE}.")
    int freshPages;

    @Option(names = "--rounds", defaultValue = "40", paramLabel = "N", description = "Timed rounds. Default: ${DEFAULT-VALUE}.")
    int rounds;

    @Option(names = "--requests", defaultValue = "200", paramLabel = "N", description = "Requests each way per round. Default: ${DEFAULT-VALUE}.")
    int requests;

    @Option(names = "--warmup", defaultValue = "10", paramLabel = "N", description = "Rounds run first and not counted. Default: ${DEFAULT-VALUE}.")
    int warmup;

    @Option(names = "--dir", paramLabel = "DIR", description = "Where the pool goes. Default: /dev/shm, or the temporary directory without it.")
    Path directory;

    @Option(names = "--json", description = "Print one JSON object whose results array has fine_us_per_request, combined_us_per_request and"
        + " combined_vs_fine per path (in-process, ipc).")
    boolean json;

    @Override
    public Integer call()
    {
        return BenchRun.call(spec, () -> new RequestCycleBenchmark.Plan(prefixPages, freshPages, rounds, requests, warmup),
            directory, RequestCycleBenchmark::measure, "cannot start the benchmark's engine", result -> json ? result.toJson() : result.toText());
    }
}
