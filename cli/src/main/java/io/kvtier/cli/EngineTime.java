package io.kvtier.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import io.kvtier.client.pool.CountersDescriptor;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.engine.Engine;
import io.kvtier.engine.status.EngineHistograms;
import io.kvtier.engine.status.LatencyHistogram;
import io.kvtier.engine.tier.TierHandle;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The engine's own time over a demo's whole run (warm-up included), from its latency histograms: per request type,
 * from the moment the engine thread took a request until it answered, and per L3 tier, its read and write batches
 * from submission to completion. Beside the clients' time per step it tells apart what a request waited for inside
 * the engine (an L3 load, say) from what it waited for on its way in and out (a hand-off, a wake-up, a core).
 *
 * @param requests   each request type the run made, with its count and mean
 * @param tierReads  each tier with read batches
 * @param tierWrites each tier with write batches (backups, migrations)
 */
record EngineTime(List<Entry> requests, List<Entry> tierReads, List<Entry> tierWrites)
{
    /**
     * @param name      the request type (lower case, as in the metrics) or the tier
     * @param count     how many
     * @param meanNanos their mean duration
     */
    record Entry(String name, long count, long meanNanos)
    {
        /** @return "NAME WHAT COUNT x MEAN us" */
        String text(final String what)
        {
            return name + what + String.format(Locale.ROOT, " %,d x %,d us", count, Math.round(meanNanos / 1e3));
        }

        private static Entry of(final String name, final LatencyHistogram histogram)
        {
            final long count = histogram.countsOpaque(new long[LatencyHistogram.BUCKETS]);
            return new Entry(name, count, count == 0 ? 0 : histogram.sumNanosOpaque() / count);
        }
    }

    /**
     * @param engine a running engine, after the run
     * @return its times; request types and tiers with nothing recorded are left out
     */
    static EngineTime of(final Engine engine)
    {
        final EngineHistograms histograms = engine.histograms();
        final List<Entry> requests = new ArrayList<>();
        for (int type = 0; type < CountersDescriptor.REQUEST_TYPES; type++)
        {
            final Entry entry = Entry.of(MessageType.name(type).toLowerCase(Locale.ROOT), histograms.request(type));
            if (entry.count() > 0)
            {
                requests.add(entry);
            }
        }
        final List<Entry> reads = new ArrayList<>();
        final List<Entry> writes = new ArrayList<>();
        for (final TierHandle tier : engine.tiers())
        {
            final Entry read = Entry.of(tier.name(), histograms.tierRead(tier.index()));
            final Entry write = Entry.of(tier.name(), histograms.tierWrite(tier.index()));
            if (read.count() > 0)
            {
                reads.add(read);
            }
            if (write.count() > 0)
            {
                writes.add(write);
            }
        }
        return new EngineTime(List.copyOf(requests), List.copyOf(reads), List.copyOf(writes));
    }

    /** @return one line for the demo's text summary */
    String toText()
    {
        final String batches = java.util.stream.Stream.concat(tierReads.stream().map(e -> e.text(" reads")),
            tierWrites.stream().map(e -> e.text(" writes"))).collect(java.util.stream.Collectors.joining(", "));
        return "engine time         taken to answered, mean (whole run): "
            + requests.stream().map(e -> e.text("")).collect(java.util.stream.Collectors.joining(", "))
            + (batches.isEmpty() ? "" : "; L3 batches, submitted to done: " + batches);
    }

    /**
     * Writes {@code "engine_time_us": {"requests": {TYPE: {"count": N, "mean": US}, ...}, "tier_reads": {...}, "tier_writes": {...}}}.
     *
     * @param g the generator, inside an object
     * @throws IOException as the generator does
     */
    void writeJson(final JsonGenerator g) throws IOException
    {
        g.writeObjectFieldStart("engine_time_us");
        writeEntries(g, "requests", requests);
        writeEntries(g, "tier_reads", tierReads);
        writeEntries(g, "tier_writes", tierWrites);
        g.writeEndObject();
    }

    private static void writeEntries(final JsonGenerator g, final String field, final List<Entry> entries) throws IOException
    {
        g.writeObjectFieldStart(field);
        for (final Entry entry : entries)
        {
            g.writeObjectFieldStart(entry.name());
            g.writeNumberField("count", entry.count());
            g.writeNumberField("mean", Math.round(entry.meanNanos() / 10.0) / 100.0);
            g.writeEndObject();
        }
        g.writeEndObject();
    }
}
