package io.kvtier.bench.jmh;

import io.kvtier.bench.replay.LinkedHashMapLru;
import io.kvtier.bench.replay.ReplayPolicy;
import io.kvtier.bench.replay.TraceReader;
import io.kvtier.bench.replay.TraceReplay;
import io.kvtier.bench.replay.TraceRequest;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The trace replay of {@code kvtier bench replay} under JMH: reading the trace into requests, the LRU
 * replay of the parsed requests on the engine's KeyTable and IntLruList, and the baseline, a
 * {@link LinkedHashMapLru} over the same requests. It uses only the replay's public API, so it also
 * runs against earlier versions of it (with {@code LinkedHashMapLru} copied beside it). The setup replays
 * each capacity once both ways and requires the two hit counts to agree; every replay and baseline run
 * then checks that it counted the same hits, and every parse that it read every request.
 *
 * <p>The trace ships beside the repository: {@code -p trace=FILE} when not run from the repository root.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx2g"})
public class ReplayBenchmark
{
    /** The trace, parsed once. */
    @State(Scope.Benchmark)
    public static class TraceState
    {
        @Param({"../shared/traces/conversation_trace.jsonl"})
        String trace;

        Path path;
        List<TraceRequest> requests;

        @Setup
        public void setUp() throws IOException
        {
            path = Path.of(trace);
            requests = TraceReader.readAll(path);
        }
    }

    /** A cache capacity, and the hit blocks that the replay and its baseline must both count at it. */
    @State(Scope.Benchmark)
    public static class CapacityState
    {
        @Param({"1e5", "1e6", "3e6", "1e7", "unbounded"})
        String capacityTokens;

        long tokens;
        long blocks;
        long hitBlocks;

        @Setup
        public void setUp(final TraceState trace)
        {
            tokens = TraceReplay.parseCapacityTokens(capacityTokens);
            blocks = TraceReplay.capacityBlocks(tokens);
            hitBlocks = LinkedHashMapLru.hitBlocks(trace.requests, blocks);
            final long replayed = TraceReplay.run(trace.trace, trace.requests, tokens, ReplayPolicy.lru()).hitBlocks();
            if (replayed != hitBlocks)
            {
                throw new IllegalStateException("at " + capacityTokens + " tokens the replay counts " + replayed
                    + " hit blocks and the LinkedHashMap " + hitBlocks + ": two LRUs over the same requests must agree");
            }
        }
    }

    /**
     * @return requests read (checked: as many as the setup read)
     * @throws IOException if the trace cannot be read
     */
    @Benchmark
    public int parse(final TraceState state) throws IOException
    {
        final int read = TraceReader.readAll(state.path).size();
        if (read != state.requests.size())
        {
            throw new IllegalStateException("parsed " + read + " requests from " + state.path + ", not " + state.requests.size());
        }
        return read;
    }

    /** @return hit blocks of the LRU replay on the engine's structures (checked against the setup's count) */
    @Benchmark
    public long replay(final TraceState trace, final CapacityState capacity)
    {
        final long hits = TraceReplay.run(trace.trace, trace.requests, capacity.tokens, ReplayPolicy.lru()).hitBlocks();
        if (hits != capacity.hitBlocks)
        {
            throw new IllegalStateException("the replay counted " + hits + " hit blocks, not " + capacity.hitBlocks);
        }
        return hits;
    }

    /** @return hit blocks of the LinkedHashMap LRU over the same requests (checked against the setup's count) */
    @Benchmark
    public long baselineLinkedHashMap(final TraceState trace, final CapacityState capacity)
    {
        final long hits = LinkedHashMapLru.hitBlocks(trace.requests, capacity.blocks);
        if (hits != capacity.hitBlocks)
        {
            throw new IllegalStateException("the LinkedHashMap LRU counted " + hits + " hit blocks, not " + capacity.hitBlocks);
        }
        return hits;
    }
}
