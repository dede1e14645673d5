package io.kvtier.bench.replay;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.Locale;

/**
 * The outcome of one {@link TraceReplay}.
 *
 * @param trace            the trace's name, usually its path
 * @param policy           the policy's {@link ReplayPolicy#name()}
 * @param capacityTokens   the capacity asked for, or {@link TraceReplay#UNBOUNDED}
 * @param capacityBlocks   {@code floor(capacityTokens / 512)}, or {@link TraceReplay#UNBOUNDED}
 * @param requests         requests replayed
 * @param totalBlocks      blocks over all requests
 * @param hitBlocks        blocks in the requests' cached leading runs
 * @param evictions        blocks evicted
 * @param peakCachedBlocks the most blocks resident at once
 * @param elapsedNanos     wall time of the replay including reading the trace (and, for an offline
 *                         policy, the first pass)
 */
public record ReplayResult(
    String trace,
    String policy,
    long capacityTokens,
    long capacityBlocks,
    long requests,
    long totalBlocks,
    long hitBlocks,
    long evictions,
    long peakCachedBlocks,
    long elapsedNanos)
{
    private static final JsonFactory JSON = new JsonFactory();

    /** @return whether the capacity was unbounded */
    public boolean unbounded()
    {
        return capacityBlocks == TraceReplay.UNBOUNDED;
    }

    /** @return hit blocks over total blocks; 0 for a trace without blocks */
    public double hitRate()
    {
        return totalBlocks == 0 ? 0.0 : (double)hitBlocks / totalBlocks;
    }

    /**
     * @return a few aligned lines for a terminal, e.g. {@code hit rate  0.0532 (15,345 of 288,500 blocks)}
     */
    public String toText()
    {
        return figuresText() + String.format(Locale.ROOT, "elapsed      %.1f ms%n", elapsedNanos / 1e6);
    }

    /** @return the lines of {@link #toText()} before the elapsed time */
    String figuresText()
    {
        final String capacity = unbounded() ?
            "unbounded" :
            String.format(Locale.ROOT, "%,d tokens = %,d blocks of %d tokens", capacityTokens, capacityBlocks, TraceReplay.BLOCK_TOKENS);
        return String.format(
            Locale.ROOT,
            "trace        %s%n" +
            "policy       %s%n" +
            "capacity     %s%n" +
            "requests     %,d%n" +
            "hit rate     %.4f (%,d of %,d blocks)%n" +
            "evictions    %,d%n" +
            "peak cached  %,d blocks%n",
            trace, policy, capacity, requests, hitRate(), hitBlocks, totalBlocks, evictions, peakCachedBlocks);
    }

    /**
     * Writes the result as one JSON object with snake_case keys: {@code trace}, {@code policy},
     * {@code block_tokens}, {@code capacity_tokens} and {@code capacity_blocks} (both {@code null} when
     * unbounded), {@code unbounded}, {@code requests}, {@code total_blocks}, {@code hit_blocks},
     * {@code hit_rate}, {@code evictions}, {@code peak_cached_blocks}, {@code elapsed_nanos}.
     *
     * @param out where to write; left open
     * @throws IOException if writing fails
     */
    public void writeJson(final JsonGenerator out) throws IOException
    {
        out.writeStartObject();
        writeJsonFields(out);
        out.writeEndObject();
    }

    /** Writes the fields of {@link #writeJson} into an object the caller opened. */
    void writeJsonFields(final JsonGenerator out) throws IOException
    {
        out.writeStringField("trace", trace);
        out.writeStringField("policy", policy);
        out.writeNumberField("block_tokens", TraceReplay.BLOCK_TOKENS);
        if (unbounded())
        {
            out.writeNullField("capacity_tokens");
            out.writeNullField("capacity_blocks");
        }
        else
        {
            out.writeNumberField("capacity_tokens", capacityTokens);
            out.writeNumberField("capacity_blocks", capacityBlocks);
        }
        out.writeBooleanField("unbounded", unbounded());
        out.writeNumberField("requests", requests);
        out.writeNumberField("total_blocks", totalBlocks);
        out.writeNumberField("hit_blocks", hitBlocks);
        out.writeNumberField("hit_rate", hitRate());
        out.writeNumberField("evictions", evictions);
        out.writeNumberField("peak_cached_blocks", peakCachedBlocks);
        out.writeNumberField("elapsed_nanos", elapsedNanos);
    }

    /** @return the result as one line of JSON, as {@link #writeJson} describes */
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
