package io.kvtier.cli;

import io.kvtier.bench.replay.ReplayPolicy;
import io.kvtier.bench.replay.ReplayResult;
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
 * table and LRU list, printing the block hit rate.
 */
@Command(name = "replay", mixinStandardHelpOptions = true,
    description = {
        "Replays a Mooncake-format request trace at block granularity (512 tokens per block) on the engine's key index and LRU,"
            + " and prints the block hit rate: a request's hits are its leading run of cached blocks; then all its blocks are"
            + " touched or inserted in order."},
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

    @Option(names = "--json", description = "Print the result as one JSON object.")
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
            final ReplayResult result = TraceReplay.run(trace, capacity, replayPolicy);
            out.println(json ? result.toJson() : result.toText());
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
    }
}
