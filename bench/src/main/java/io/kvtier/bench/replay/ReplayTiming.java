package io.kvtier.bench.replay;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * A timed replay beside its baseline, in one JVM: the trace is parsed once (timed on its own), then the
 * parsed requests are replayed on the engine's structures and through {@link LinkedHashMapLru}, in
 * alternating order, {@code warmups} rounds unreported and {@code runs} rounds measured. Figures are the
 * median of the measured rounds (the best is kept too); each replay is timed alone with
 * {@link System#nanoTime()}, from an empty cache to the counts.
 *
 * @param result         the replay's counts, with {@code elapsedNanos} the median replay time
 * @param parseNanos     reading the trace file into requests, once
 * @param warmups        rounds run before measuring
 * @param replayNanos    each measured replay on the engine's structures, in round order
 * @param baselineNanos  each measured {@link LinkedHashMapLru} replay, in round order
 * @param baselineHits   the baseline's hit blocks
 */
public record ReplayTiming(ReplayResult result, long parseNanos, int warmups, long[] replayNanos, long[] baselineNanos, long baselineHits)
{
    private static final JsonFactory JSON = new JsonFactory();

    /**
     * Parses a trace and times its replay and the baseline's.
     *
     * @param trace          a JSON-lines Mooncake trace
     * @param capacityTokens the cache capacity in tokens, or {@link TraceReplay#UNBOUNDED}
     * @param policy         the eviction policy of the measured replay; the baseline is LRU whatever it is
     * @param warmups        rounds to run first, unreported, at least 0
     * @param runs           rounds to measure, at least 1
     * @return the figures
     * @throws IOException              if the trace cannot be read
     * @throws TraceFormatException     if a line of it is not a valid request
     * @throws IllegalStateException    if a replay's counts change between rounds, or an LRU replay's hits
     *                                  differ from the baseline's: one of the two is wrong
     * @throws IllegalArgumentException if the capacity holds less than one block or the counts are invalid
     */
    public static ReplayTiming measure(final Path trace, final long capacityTokens, final ReplayPolicy policy, final int warmups, final int runs)
        throws IOException
    {
        check(warmups, runs);
        TraceReplay.capacityBlocks(capacityTokens);
        final long parseStart = System.nanoTime();
        final List<TraceRequest> requests = TraceReader.readAll(trace);
        return measure(trace.toString(), requests, System.nanoTime() - parseStart, capacityTokens, policy, warmups, runs);
    }

    /**
     * Times the replay of requests already in memory, such as a {@link SyntheticTraces synthetic trace}, and the
     * baseline's.
     *
     * @param source         a name for the requests in the result
     * @param requests       the requests in arrival order
     * @param parseNanos     what producing them took, reported as {@code parse_ms}
     * @param capacityTokens the cache capacity in tokens, or {@link TraceReplay#UNBOUNDED}
     * @param policy         the eviction policy of the measured replay; the baseline is LRU whatever it is
     * @param warmups        rounds to run first, unreported, at least 0
     * @param runs           rounds to measure, at least 1
     * @return the figures
     * @throws IllegalStateException    as {@link #measure(Path, long, ReplayPolicy, int, int)}
     * @throws IllegalArgumentException if the capacity holds less than one block or the counts are invalid
     */
    public static ReplayTiming measure(
        final String source,
        final List<TraceRequest> requests,
        final long parseNanos,
        final long capacityTokens,
        final ReplayPolicy policy,
        final int warmups,
        final int runs)
    {
        check(warmups, runs);
        final long capacityBlocks = TraceReplay.capacityBlocks(capacityTokens);
        final long[] replayNanos = new long[runs];
        final long[] baselineNanos = new long[runs];
        ReplayResult result = null;
        long baselineHits = -1;
        for (int round = 0; round < warmups + runs; round++)
        {
            // Alternating which goes first spreads any drift of a shared machine over both.
            final boolean baselineFirst = (round & 1) == 1;
            long baselineTime = 0;
            if (baselineFirst)
            {
                baselineTime = System.nanoTime();
                baselineHits = checkedSame(baselineHits, LinkedHashMapLru.hitBlocks(requests, capacityBlocks), "baseline");
                baselineTime = System.nanoTime() - baselineTime;
            }
            final ReplayResult replayed = TraceReplay.run(source, requests, capacityTokens, policy);
            if (result != null && !sameCounts(result, replayed))
            {
                throw new IllegalStateException("the replay counted differently in two rounds: " + result + " then " + replayed);
            }
            result = replayed;
            if (!baselineFirst)
            {
                baselineTime = System.nanoTime();
                baselineHits = checkedSame(baselineHits, LinkedHashMapLru.hitBlocks(requests, capacityBlocks), "baseline");
                baselineTime = System.nanoTime() - baselineTime;
            }
            if (round >= warmups)
            {
                replayNanos[round - warmups] = replayed.elapsedNanos();
                baselineNanos[round - warmups] = baselineTime;
            }
        }
        if (policy.equals(ReplayPolicy.lru()) && baselineHits != result.hitBlocks())
        {
            throw new IllegalStateException("LRU on the engine's structures hit " + result.hitBlocks() + " blocks and the LinkedHashMap baseline " +
                baselineHits + ": one of them is wrong");
        }
        final ReplayResult median = new ReplayResult(result.trace(), result.policy(), result.capacityTokens(), result.capacityBlocks(),
            result.requests(), result.totalBlocks(), result.hitBlocks(), result.evictions(), result.peakCachedBlocks(), median(replayNanos));
        return new ReplayTiming(median, parseNanos, warmups, replayNanos, baselineNanos, baselineHits);
    }

    private static void check(final int warmups, final int runs)
    {
        if (warmups < 0 || runs < 1)
        {
            throw new IllegalArgumentException("warmups=" + warmups + " must be at least 0 and runs=" + runs + " at least 1");
        }
    }

    private static long checkedSame(final long previous, final long hits, final String what)
    {
        if (previous >= 0 && previous != hits)
        {
            throw new IllegalStateException("the " + what + " hit " + previous + " blocks in one round and " + hits + " in another");
        }
        return hits;
    }

    private static boolean sameCounts(final ReplayResult a, final ReplayResult b)
    {
        return a.requests() == b.requests() && a.totalBlocks() == b.totalBlocks() && a.hitBlocks() == b.hitBlocks() &&
            a.evictions() == b.evictions() && a.peakCachedBlocks() == b.peakCachedBlocks();
    }

    private static long median(final long[] nanos)
    {
        final long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        final int n = sorted.length;
        return (n & 1) == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private static long best(final long[] nanos)
    {
        return Arrays.stream(nanos).min().orElseThrow();
    }

    /** @return measured rounds */
    public int runs()
    {
        return replayNanos.length;
    }

    /** @return the median replay on the engine's structures */
    public long replayMedianNanos()
    {
        return median(replayNanos);
    }

    /** @return the fastest replay on the engine's structures */
    public long replayBestNanos()
    {
        return best(replayNanos);
    }

    /** @return the median baseline replay */
    public long baselineMedianNanos()
    {
        return median(baselineNanos);
    }

    /** @return the fastest baseline replay */
    public long baselineBestNanos()
    {
        return best(baselineNanos);
    }

    /** @return the baseline's hit blocks over the total blocks */
    public double baselineHitRate()
    {
        return result.totalBlocks() == 0 ? 0.0 : (double)baselineHits / result.totalBlocks();
    }

    /**
     * @return the result's lines, then one line each for the parse, the replay and the baseline, such as
     *         {@code replay       6.1 ms (median of 10 warm runs, best 5.8 ms) on the engine's KeyTable and eviction policy}
     */
    public String toText()
    {
        return result.figuresText() + String.format(
            Locale.ROOT,
            "parse        %.1f ms (once: trace file or generator to requests)%n" +
            "replay       %.1f ms (median of %d warm runs, best %.1f ms) on the engine's KeyTable and eviction policy%n" +
            "baseline     %.1f ms (median of %d warm runs, best %.1f ms) LinkedHashMap LRU over the same parsed requests, hit rate %.4f%n",
            parseNanos / 1e6,
            replayMedianNanos() / 1e6, runs(), replayBestNanos() / 1e6,
            baselineMedianNanos() / 1e6, runs(), baselineBestNanos() / 1e6, baselineHitRate());
    }

    /**
     * Writes one JSON object: the fields of {@link ReplayResult#writeJson} ({@code elapsed_nanos} being the
     * median replay), then {@code parse_ms}, {@code replay_ms} and {@code baseline_linkedhashmap_ms}
     * (medians), {@code replay_best_ms}, {@code baseline_linkedhashmap_best_ms},
     * {@code baseline_hit_blocks}, {@code baseline_hit_rate}, {@code warmup_runs}, {@code runs} and
     * {@code statistic} ({@code "median"}).
     *
     * @param out where to write; left open
     * @throws IOException if writing fails
     */
    public void writeJson(final JsonGenerator out) throws IOException
    {
        out.writeStartObject();
        result.writeJsonFields(out);
        out.writeNumberField("parse_ms", parseNanos / 1e6);
        out.writeNumberField("replay_ms", replayMedianNanos() / 1e6);
        out.writeNumberField("replay_best_ms", replayBestNanos() / 1e6);
        out.writeNumberField("baseline_linkedhashmap_ms", baselineMedianNanos() / 1e6);
        out.writeNumberField("baseline_linkedhashmap_best_ms", baselineBestNanos() / 1e6);
        out.writeNumberField("baseline_hit_blocks", baselineHits);
        out.writeNumberField("baseline_hit_rate", baselineHitRate());
        out.writeNumberField("warmup_runs", warmups);
        out.writeNumberField("runs", runs());
        out.writeStringField("statistic", "median");
        out.writeEndObject();
    }

    /** @return {@link #writeJson} as one line */
    public String toJson()
    {
        final StringWriter text = new StringWriter();
        try (JsonGenerator out = JSON.createGenerator(text))
        {
            writeJson(out);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("a StringWriter does not fail", ex);
        }
        return text.toString();
    }
}
