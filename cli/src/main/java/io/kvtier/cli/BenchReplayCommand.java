package io.kvtier.cli;

import io.kvtier.bench.replay.ReplayPolicy;
import io.kvtier.bench.replay.ReplayTiming;
import io.kvtier.bench.replay.SyntheticTraces;
import io.kvtier.bench.replay.TraceFormatException;
import io.kvtier.bench.replay.TraceReplay;
import io.kvtier.bench.replay.TraceRequest;
import io.kvtier.engine.eviction.EvictionPolicies;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code kvtier bench replay}: index-level replay of a Mooncake-format trace, or of a generated one, on the
 * engine's own key table and eviction policy classes, printing the block hit rate and how long the replay took
 * beside a LinkedHashMap LRU over the same parsed trace, in the same JVM.
 */
@Command(name = "replay", mixinStandardHelpOptions = true,
    description = {
        "Replays a Mooncake-format request trace at block granularity (512 tokens per block) on the engine's key index and"
            + " eviction policy, and prints the block hit rate: a request's hits are its leading run of cached blocks; then all"
            + " its blocks are touched or inserted in order.",
        "It parses the trace once, then replays the parsed requests --warmup + --runs times, alternating with a LinkedHashMap LRU"
            + " over the same requests (the baseline), and prints the parse time and the median of the measured runs of both.",
        "A malformed trace (invalid UTF-8, invalid JSON, a missing field, a value of the wrong type) is reported as"
            + " FILE:LINE:COLUMN: what is wrong, with the byte offset in the file, and exits with 2."},
    footer = {"", "Examples:", "  kvtier bench replay --trace ../shared/traces/conversation_trace.jsonl --capacity-tokens 1e6 --policy lru",
        "  kvtier bench replay --synthetic zipf-prefix --capacity-tokens 3e6 --json", "", ExitCode.HELP})
public final class BenchReplayCommand implements Callable<Integer>
{
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--trace", paramLabel = "FILE", description = "Trace in JSON lines: timestamp, input_length, output_length, hash_ids.")
    Path trace;

    @Option(names = "--synthetic", paramLabel = "NAME",
        description = "Replay a generated trace instead of --trace: zipf-prefix, documents or chat (docs/PERFORMANCE.md, \"Eviction policies\").")
    String synthetic;

    @Option(names = "--seed", defaultValue = "" + SyntheticTraces.DEFAULT_SEED, paramLabel = "N",
        description = "Seed of the --synthetic generator. Default: ${DEFAULT-VALUE}.")
    long seed;

    @Option(names = "--capacity-tokens", required = true, paramLabel = "N",
        description = "Cache capacity in tokens (floor(N / 512) blocks), e.g. 1e6 or 3000000, or 'unbounded'.")
    String capacityTokens;

    @Option(names = "--policy", defaultValue = EvictionPolicies.DEFAULT, paramLabel = "POLICY",
        description = "Eviction policy: one of the engine's (lru, chain, probation, admission, frequency, adaptive), or belady (offline"
            + " optimum, for reference) and its variants belady-block, belady-bypass, belady-block-bypass. Default: ${DEFAULT-VALUE},"
            + " the engine's default.")
    String policy;

    @Option(names = "--runs", defaultValue = "10", paramLabel = "N", description = "Measured rounds of the replay and the baseline. Default: ${DEFAULT-VALUE}.")
    int runs;

    @Option(names = "--warmup", defaultValue = "5", paramLabel = "N", description = "Unreported rounds first, for the JIT. Default: ${DEFAULT-VALUE}.")
    int warmup;

    @Option(names = "--json", description = "Print the result as one JSON object (timings: parse_ms, replay_ms, baseline_linkedhashmap_ms ...).")
    boolean json;

    @Override
    public Integer call()
    {
        final var err = spec.commandLine().getErr();
        final long capacity;
        final ReplayPolicy replayPolicy;
        try
        {
            capacity = TraceReplay.parseCapacityTokens(capacityTokens);
            if (capacity != TraceReplay.UNBOUNDED)
            {
                TraceReplay.capacityBlocks(capacity);
            }
            replayPolicy = ReplayPolicy.forName(policy);
            if (runs < 1 || warmup < 0)
            {
                throw new IllegalArgumentException("--runs=" + runs + " must be at least 1 and --warmup=" + warmup + " at least 0");
            }
        }
        catch (final IllegalArgumentException ex)
        {
            err.println("kvtier: " + ex.getMessage());
            return ExitCode.USAGE;
        }
        if ((trace == null) == (synthetic == null))
        {
            err.println("kvtier: give either --trace FILE or --synthetic NAME (one of " + String.join(", ", SyntheticTraces.names()) + ")");
            return ExitCode.USAGE;
        }
        if (synthetic != null)
        {
            final long start = System.nanoTime();
            final List<TraceRequest> requests;
            try
            {
                requests = SyntheticTraces.generate(synthetic, seed);
            }
            catch (final IllegalArgumentException ex)
            {
                err.println("kvtier: " + ex.getMessage());
                return ExitCode.USAGE;
            }
            final String source = "synthetic:" + synthetic.toLowerCase(Locale.ROOT) + "(seed=" + seed + ")";
            try
            {
                return print(ReplayTiming.measure(source, requests, System.nanoTime() - start, capacity, replayPolicy, warmup, runs));
            }
            catch (final IllegalStateException ex)
            {
                err.println("kvtier: replay failed its own check: " + ex.getMessage());
                return ExitCode.FAILURE;
            }
        }
        if (!Files.isRegularFile(trace))
        {
            err.println("kvtier: --trace " + trace + ": no such file");
            return ExitCode.USAGE;
        }
        try
        {
            return print(ReplayTiming.measure(trace, capacity, replayPolicy, warmup, runs));
        }
        catch (final TraceFormatException ex)
        {
            err.println("kvtier: bad trace: " + ex.getMessage());
            return ExitCode.USAGE;
        }
        catch (final NoSuchFileException ex)
        {
            err.println("kvtier: --trace " + trace + ": no such file");
            return ExitCode.USAGE;
        }
        catch (final IOException ex)
        {
            err.println("kvtier: cannot read --trace " + trace + ": " + ex.getMessage());
            return ExitCode.FAILURE;
        }
        catch (final IllegalStateException ex)
        {
            err.println("kvtier: replay failed its own check: " + ex.getMessage());
            return ExitCode.FAILURE;
        }
    }

    private int print(final ReplayTiming timing)
    {
        final var out = spec.commandLine().getOut();
        out.println(json ? timing.toJson() : timing.toText());
        out.flush();
        return ExitCode.OK;
    }
}
