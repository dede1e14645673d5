package io.kvtier.cli;

import io.kvtier.bench.replay.ReplayPolicy;
import io.kvtier.bench.replay.ReplayTiming;
import io.kvtier.bench.replay.TraceFormatException;
import io.kvtier.bench.replay.TraceReplay;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * {@code kvtier bench replay}: index-level replay of a Mooncake-format trace, on the engine's own key
 * table and LRU list, printing the block hit rate and how long the replay took beside a LinkedHashMap LRU
 * over the same parsed trace, in the same JVM.
 */
@Command(name = "replay", mixinStandardHelpOptions = true,
    description = {
        "Replays a Mooncake-format request trace at block granularity (512 tokens per block) on the engine's key index and LRU,"
            + " and prints the block hit rate: a request's hits are its leading run of cached blocks; then all its blocks are"
            + " touched or inserted in order.",
        "It parses the trace once, then replays the parsed requests --warmup + --runs times, alternating with a LinkedHashMap LRU"
            + " over the same requests (the baseline), and prints the parse time and the median of the measured runs of both.",
        "A malformed trace (invalid UTF-8, invalid JSON, a missing field, a value of the wrong type) is reported as"
            + " FILE:LINE:COLUMN: what is wrong, with the byte offset in the file, and exits with 2."},
    footer = {"", "Example: kvtier bench replay --trace ../shared/traces/conversation_trace.jsonl --capacity-tokens 1e6 --policy lru", "", ExitCode.HELP})
public final class BenchReplayCommand implements Callable<Integer>
{
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--trace", required = true, paramLabel = "FILE", description = "Trace in JSON lines: timestamp, input_length, output_length, hash_ids.")
    Path trace;

    @Option(names = "--capacity-tokens", required = true, paramLabel = "N",
        description = "Cache capacity in tokens (floor(N / 512) blocks), e.g. 1e6 or 3000000, or 'unbounded'.")
    String capacityTokens;

    @Option(names = "--policy", defaultValue = "lru", paramLabel = "POLICY",
        description = "Eviction policy: lru, or belady (offline optimum, for reference) and its variants belady-block, belady-bypass, belady-block-bypass. Default: ${DEFAULT-VALUE}.")
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
        final var out = spec.commandLine().getOut();
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
        if (!Files.isRegularFile(trace))
        {
            err.println("kvtier: --trace " + trace + ": no such file");
            return ExitCode.USAGE;
        }
        try
        {
            final ReplayTiming timing = ReplayTiming.measure(trace, capacity, replayPolicy, warmup, runs);
            out.println(json ? timing.toJson() : timing.toText());
            out.flush();
            return ExitCode.OK;
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
}
