package io.kvtier.bench.workload;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.Locale;
import java.util.Map;

/**
 * What a workload run did, as counted by its clients (which checked every byte they read) and by the
 * engine.
 *
 * @param requests          requests served
 * @param clients           concurrent client sessions
 * @param pagesRequested    pages named by the requests' prompts
 * @param hitPagesL2        prompt pages found in the pool
 * @param hitPagesL3        prompt pages loaded from L3 and verified
 * @param pagesWritten      pages the clients computed and committed
 * @param pagesVerified     pages read back whose every byte matched its key
 * @param pagesCorrupt      pages read back with a wrong byte or length
 * @param pagesNotCached    computed pages the pool could not take (full, or another client was writing them)
 * @param pageSize          payload bytes per page
 * @param elapsedNanos      wall time of the run
 * @param latencyP50Micros  median request latency
 * @param latencyP99Micros  99th percentile
 * @param latencyP999Micros 99.9th percentile
 * @param latencyMaxMicros  slowest request
 * @param engineCounters    the engine's counters at the end, by label
 * @param clientNanos       time the clients spent in each step of their requests, summed over all clients
 * @param warmup            the run's first requests, while the JVMs warmed up
 * @param steady            the rest of the run, whose throughput the report gives
 */
public record WorkloadReport(long requests, int clients, long pagesRequested, long hitPagesL2, long hitPagesL3, long pagesWritten,
                             long pagesVerified, long pagesCorrupt, long pagesNotCached, long pageSize, long elapsedNanos,
                             long latencyP50Micros, long latencyP99Micros, long latencyP999Micros, long latencyMaxMicros,
                             Map<String, Long> engineCounters, Map<ClientStep, Long> clientNanos, RunPhase warmup, RunPhase steady)
{
    /**
     * A report of a run with no warm-up: all of it is the steady state.
     *
     * @param requests          requests served
     * @param clients           concurrent client sessions
     * @param pagesRequested    pages named by the requests' prompts
     * @param hitPagesL2        prompt pages found in the pool
     * @param hitPagesL3        prompt pages loaded from L3 and verified
     * @param pagesWritten      pages the clients computed and committed
     * @param pagesVerified     pages read back whose every byte matched its key
     * @param pagesCorrupt      pages read back with a wrong byte or length
     * @param pagesNotCached    computed pages the pool could not take
     * @param pageSize          payload bytes per page
     * @param elapsedNanos      wall time of the run
     * @param latencyP50Micros  median request latency
     * @param latencyP99Micros  99th percentile
     * @param latencyP999Micros 99.9th percentile
     * @param latencyMaxMicros  slowest request
     * @param engineCounters    the engine's counters at the end, by label
     * @param clientNanos       time the clients spent in each step of their requests
     */
    public WorkloadReport(final long requests, final int clients, final long pagesRequested, final long hitPagesL2, final long hitPagesL3,
                          final long pagesWritten, final long pagesVerified, final long pagesCorrupt, final long pagesNotCached, final long pageSize,
                          final long elapsedNanos, final long latencyP50Micros, final long latencyP99Micros, final long latencyP999Micros,
                          final long latencyMaxMicros, final Map<String, Long> engineCounters, final Map<ClientStep, Long> clientNanos)
    {
        this(requests, clients, pagesRequested, hitPagesL2, hitPagesL3, pagesWritten, pagesVerified, pagesCorrupt, pagesNotCached, pageSize,
            elapsedNanos, latencyP50Micros, latencyP99Micros, latencyP999Micros, latencyMaxMicros, engineCounters, clientNanos,
            new RunPhase(0, 0, 0, pageSize, 0), new RunPhase(requests, pagesVerified + pagesCorrupt, pagesWritten, pageSize, elapsedNanos));
    }

    /** @return prompt pages served from the pool, over all prompt pages */
    public double hitRateL2()
    {
        return pagesRequested == 0 ? 0.0 : (double)hitPagesL2 / pagesRequested;
    }

    /** @return prompt pages served from L3, over all prompt pages */
    public double hitRateL3()
    {
        return pagesRequested == 0 ? 0.0 : (double)hitPagesL3 / pagesRequested;
    }

    /** @return requests per second over the whole run, warm-up included */
    public double requestsPerSecond()
    {
        return requests / seconds();
    }

    /** @return page payload bytes read and written per second over the whole run, warm-up included, in MB (10^6) */
    public double pageMegabytesPerSecond()
    {
        return (pagesVerified + pagesCorrupt + pagesWritten) * (double)pageSize / 1e6 / seconds();
    }

    /** @return the stretch the throughput figures come from: the steady state, or the whole run when the warm-up took all of it */
    public RunPhase measured()
    {
        return steady.isEmpty() ? new RunPhase(requests, pagesVerified + pagesCorrupt, pagesWritten, pageSize, elapsedNanos) : steady;
    }

    /** @return the clients' time in all steps, summed over clients */
    public long clientTotalNanos()
    {
        long total = 0;
        for (final long nanos : clientNanos.values())
        {
            total += nanos;
        }
        return total;
    }

    /**
     * @param step a step of a request
     * @return its share of the clients' time, 0 to 1
     */
    public double clientShare(final ClientStep step)
    {
        final long total = clientTotalNanos();
        return total == 0 ? 0.0 : clientNanos.getOrDefault(step, 0L) / (double)total;
    }

    private double seconds()
    {
        return Math.max(1e-9, elapsedNanos / 1e9);
    }

    /** @return a human-readable summary */
    public String toText()
    {
        return String.format(Locale.ROOT, """
            requests            %,d (%d clients)
            pages requested     %,d
              hit in pool (L2)  %,d (%.1f%%)
              hit in L3         %,d (%.1f%%)
            pages written       %,d
            pages read          %,d
            pages verified      %,d
            pages corrupt       %,d
            throughput          %,.0f requests/s, %,.1f MB/s of page data %s
            warm-up             %s
            latency             p50 %,d us, p99 %,d us, p99.9 %,d us, max %,d us
            elapsed             %.2f s
            client time         %s
            """,
            requests, clients, pagesRequested, hitPagesL2, 100 * hitRateL2(), hitPagesL3, 100 * hitRateL3(), pagesWritten,
            pagesVerified + pagesCorrupt, pagesVerified, pagesCorrupt, measured().requestsPerSecond(), measured().pageMegabytesPerSecond(),
            steady.isEmpty() ? "over the whole run (it ended within its warm-up)"
                : String.format(Locale.ROOT, "in the steady state (%,d requests in %.2f s%s)", steady.requests(), steady.elapsedNanos() / 1e9,
                    steady.compileText()),
            warmup.isEmpty() ? "none" : String.format(Locale.ROOT, "%,d requests in %.2f s%s, %,.1f MB/s of page data (not in the throughput above)",
                warmup.requests(), warmup.elapsedNanos() / 1e9, warmup.compileText(), warmup.pageMegabytesPerSecond()),
            latencyP50Micros, latencyP99Micros, latencyP999Micros, latencyMaxMicros, elapsedNanos / 1e9, clientTimeText());
    }

    private String clientTimeText()
    {
        final StringBuilder text = new StringBuilder();
        for (final ClientStep step : ClientStep.values())
        {
            if (!text.isEmpty())
            {
                text.append(", ");
            }
            text.append(String.format(Locale.ROOT, "%s %.1f%%", step.label(), 100 * clientShare(step)));
        }
        return text.append(String.format(Locale.ROOT, " of %.2f s", clientTotalNanos() / 1e9)).toString();
    }

    /**
     * Writes the report as one JSON object.
     *
     * @param json where to write
     * @param extra more fields to add at the top level, written by the caller
     * @throws IOException if writing fails
     */
    public void writeJson(final JsonGenerator json, final java.util.function.Consumer<JsonGenerator> extra) throws IOException
    {
        json.writeStartObject();
        json.writeNumberField("requests", requests);
        json.writeNumberField("clients", clients);
        json.writeNumberField("pages_requested", pagesRequested);
        json.writeNumberField("pages_hit_l2", hitPagesL2);
        json.writeNumberField("pages_hit_l3", hitPagesL3);
        json.writeNumberField("hit_rate_l2", round(hitRateL2()));
        json.writeNumberField("hit_rate_l3", round(hitRateL3()));
        json.writeNumberField("pages_written", pagesWritten);
        json.writeNumberField("pages_read", pagesVerified + pagesCorrupt);
        json.writeNumberField("pages_verified", pagesVerified);
        json.writeNumberField("pages_corrupt", pagesCorrupt);
        json.writeNumberField("pages_not_cached", pagesNotCached);
        json.writeNumberField("page_size_bytes", pageSize);
        // The throughput of the steady state; the warm-up's apart (steady_state says which requests are which).
        json.writeNumberField("throughput_requests_per_s", round(measured().requestsPerSecond()));
        json.writeNumberField("throughput_page_mb_per_s", round(measured().pageMegabytesPerSecond()));
        json.writeObjectFieldStart("warmup");
        warmup.writeFields(json);
        json.writeEndObject();
        json.writeObjectFieldStart("steady_state");
        measured().writeFields(json);
        json.writeEndObject();
        json.writeObjectFieldStart("latency_us");
        json.writeNumberField("p50", latencyP50Micros);
        json.writeNumberField("p99", latencyP99Micros);
        json.writeNumberField("p999", latencyP999Micros);
        json.writeNumberField("max", latencyMaxMicros);
        json.writeEndObject();
        json.writeNumberField("elapsed_s", round(elapsedNanos / 1e9));
        json.writeObjectFieldStart("engine");
        for (final Map.Entry<String, Long> counter : engineCounters.entrySet())
        {
            json.writeNumberField(counter.getKey(), counter.getValue());
        }
        json.writeEndObject();
        // Where the clients' time went, by step: total milliseconds over all clients, and the share of the total.
        json.writeObjectFieldStart("client_time_ms");
        for (final ClientStep step : ClientStep.values())
        {
            json.writeNumberField(step.label(), round(clientNanos.getOrDefault(step, 0L) / 1e6));
        }
        json.writeNumberField("total", round(clientTotalNanos() / 1e6));
        json.writeEndObject();
        json.writeObjectFieldStart("client_time_share");
        for (final ClientStep step : ClientStep.values())
        {
            json.writeNumberField(step.label(), round(clientShare(step)));
        }
        json.writeEndObject();
        if (extra != null)
        {
            extra.accept(json);
        }
        json.writeEndObject();
    }

    /** @return the report as a one-line JSON object */
    public String toJson()
    {
        final StringWriter out = new StringWriter();
        try (JsonGenerator json = new JsonFactory().createGenerator(out))
        {
            writeJson(json, null);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        return out.toString();
    }

    /**
     * @param value a figure
     * @return it to four decimals, as the JSON gives figures
     */
    static double round(final double value)
    {
        return Math.round(value * 10_000.0) / 10_000.0;
    }
}
