package io.kvtier.metrics;

import io.kvtier.client.pool.CountersDescriptor;
import io.kvtier.client.pool.CountersReader;
import io.kvtier.client.pool.MappedPool;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.engine.Engine;
import io.kvtier.engine.operations.AdmissionReason;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineHistograms;
import io.kvtier.engine.status.LatencyHistogram;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.Unit;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The pool's shared-memory counters, and the engine's latency histograms when it runs in this process, as
 * Prometheus metric families: registered in a {@code PrometheusRegistry}, it reads them afresh on each
 * scrape. It only reads memory (the counters region, load-opaque; the histograms, load-opaque): a scrape
 * never sends the engine thread anything, never waits for it, and works while it is busy or after it
 * stopped, as long as the region stays mapped.
 *
 * <p>Every allocated record of the region becomes a metric (docs/metrics.md lists them):
 * <ul>
 * <li>an engine counter (ids below {@link CountersDescriptor#FIRST_REQUEST_TYPE_ID}, and from
 *     {@link CountersDescriptor#SECOND_ENGINE_BLOCK_ID} below {@link CountersDescriptor#FIRST_THREAD_ID}) becomes
 *     {@code kvtier_<name>_total} when its type is a counter and {@code kvtier_<name>} when it is a gauge,
 *     with its record's description as help; a few are renamed so that their unit ends the name
 *     ({@link #RENAMED});</li>
 * <li>the admission reasons' counters become one family, {@code kvtier_admission_refusals_total{reason}};</li>
 * <li>the per-type request counters become {@code kvtier_requests_by_type_total{type}};</li>
 * <li>each tier's block becomes families with a {@code tier} label ({@code kvtier_tier_hits_total{tier}},
 *     ...), and its info record's value the gauge {@code kvtier_tier_state{tier}};</li>
 * <li>each watched thread's gauge becomes {@code kvtier_thread_state{thread}}.</li>
 * </ul>
 * Labels come from the ids: a tier's name is its info record's name past {@code tier_}, a thread's its
 * record's name past {@code thread_}, a message type's from {@link MessageType#name}, a reason's from
 * {@link AdmissionReason}; no label is parsed out of a counter's name.
 */
final class PoolMetrics implements MultiCollector
{
    /** Prefix of every metric. */
    static final String PREFIX = "kvtier_";

    /**
     * Engine counters whose record name lacks its unit at the end, by id, and the name they take instead
     * (before {@code _total}): Prometheus names end in their unit.
     */
    static final Map<Integer, String> RENAMED = Map.of(
        EngineCounter.L3_BYTES_READ.id(), "l3_read_bytes",
        EngineCounter.L3_BYTES_WRITTEN.id(), "l3_written_bytes");

    /** The per-tier families, by offset in a tier's block: name (before {@code _total} for counters) and help. */
    private static final String[][] TIER_FAMILIES = {
        {"tier_hits", "Reads from the tier that were verified and served."},
        {"tier_misses", "Reads from the tier that found nothing."},
        {"tier_errors", "Reads, writes and probes of the tier that failed, timed out, or read corrupt bytes."},
        {"tier_read_bytes", "Payload bytes of verified reads from the tier."},
        {"tier_written_bytes", "Payload bytes of completed writes to the tier: backups and migrations."},
        {"tier_used_bytes", "Bytes the tier reports in use."},
        {"tier_capacity_bytes", "The tier's capacity in bytes; +Inf when it sets none."},
        {"tier_objects", "Objects the tier reports holding."},
        {"tier_evictions", "Pages the engine removed from the tier."},
    };

    private static final String TIER_STATE = "tier_state";
    private static final String THREAD_STATE = "thread_state";
    private static final String ADMISSION_REFUSALS = "admission_refusals";
    private static final String REQUESTS_BY_TYPE = "requests_by_type";

    private final CountersReader counters;
    private final EngineHistograms histograms;

    /**
     * @param counters   a reader of the pool's counters region
     * @param histograms the engine's histograms when it runs in this process; null when it does not (another
     *                   process's pool has none to read)
     */
    PoolMetrics(final CountersReader counters, final EngineHistograms histograms)
    {
        this.counters = java.util.Objects.requireNonNull(counters, "counters");
        this.histograms = histograms;
    }

    /**
     * @param engine an engine running in this process
     * @return its counters and its histograms
     */
    static PoolMetrics of(final Engine engine)
    {
        return new PoolMetrics(new CountersReader(engine.pool().counters()), engine.histograms());
    }

    /**
     * @param pool a running engine's pool, mapped from another process
     * @return its counters (the histograms live in the engine's process and are not there)
     */
    static PoolMetrics of(final MappedPool pool)
    {
        return new PoolMetrics(new CountersReader(pool.counters()), null);
    }

    @Override
    public MetricSnapshots collect()
    {
        final Records records = Records.read(counters);
        final List<MetricSnapshot> families = new ArrayList<>();
        engineCounters(records, families);
        admissionRefusals(records, families);
        requestsByType(records, families);
        tiers(records, families);
        threads(records, families);
        if (histograms != null)
        {
            latencies(records, families);
        }
        return new MetricSnapshots(families);
    }

    private static void engineCounters(final Records records, final List<MetricSnapshot> families)
    {
        for (int id = 0; id < CountersDescriptor.FIRST_REQUEST_TYPE_ID; id++)
        {
            engineCounter(records, families, id);
        }
        for (int id = CountersDescriptor.SECOND_ENGINE_BLOCK_ID; id < CountersDescriptor.FIRST_THREAD_ID; id++)
        {
            engineCounter(records, families, id);
        }
    }

    private static void engineCounter(final Records records, final List<MetricSnapshot> families, final int id)
    {
        if (!records.allocated(id) || isReason(id))
        {
            return;
        }
        final String name = PREFIX + RENAMED.getOrDefault(id, sanitize(records.name(id)));
        final double value = records.value(id);
        switch (records.type(id))
        {
            case CountersDescriptor.TYPE_COUNTER -> families.add(CounterSnapshot.builder().name(name).help(records.description(id)).unit(unitOf(name))
                .dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().value(value).build()).build());
            case CountersDescriptor.TYPE_GAUGE -> families.add(GaugeSnapshot.builder().name(name).help(records.description(id)).unit(unitOf(name))
                .dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().value(value).build()).build());
            default ->
            {
                // an info record among the engine counters has no number to report
            }
        }
    }

    private static boolean isReason(final int id)
    {
        for (final AdmissionReason reason : AdmissionReason.values())
        {
            if (reason.counter().id() == id)
            {
                return true;
            }
        }
        return false;
    }

    private static void admissionRefusals(final Records records, final List<MetricSnapshot> families)
    {
        final CounterSnapshot.Builder family = CounterSnapshot.builder().name(PREFIX + ADMISSION_REFUSALS)
            .help("Pages a backup or a migration considered and did not admit, by reason. Under admission.mode = shadow nothing is refused:"
                + " these count the pages a reason would have refused, which were let through (kvtier_admission_shadow_passed_total).");
        for (final AdmissionReason reason : AdmissionReason.values())
        {
            final int id = reason.counter().id();
            if (records.allocated(id))
            {
                family.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().labels(Labels.of("reason", reason.label())).value(records.value(id)).build());
            }
        }
        families.add(family.build());
    }

    private static void requestsByType(final Records records, final List<MetricSnapshot> families)
    {
        final CounterSnapshot.Builder family = CounterSnapshot.builder().name(PREFIX + REQUESTS_BY_TYPE)
            .help("Requests the engine took, by message type (from in-process sessions and IPC clients alike).");
        for (int type = 0; type < CountersDescriptor.REQUEST_TYPES; type++)
        {
            final int id = CountersDescriptor.FIRST_REQUEST_TYPE_ID + type;
            if (records.allocated(id))
            {
                family.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().labels(Labels.of("type", typeLabel(type))).value(records.value(id)).build());
            }
        }
        families.add(family.build());
    }

    private static String typeLabel(final int type)
    {
        return MessageType.name(type).toLowerCase(Locale.ROOT);
    }

    private static void tiers(final Records records, final List<MetricSnapshot> families)
    {
        final List<Integer> tiers = new ArrayList<>();
        final List<String> names = new ArrayList<>();
        for (int t = 0; t < EngineHistograms.MAX_TIERS; t++)
        {
            final int info = CountersDescriptor.FIRST_TIER_INFO_ID + t;
            if (records.allocated(info))
            {
                tiers.add(t);
                names.add(suffix(records.name(info), "tier_"));
            }
        }
        for (int c = 0; c < CountersDescriptor.TIER_COUNTER_STRIDE; c++)
        {
            final String name = PREFIX + TIER_FAMILIES[c][0];
            final String help = TIER_FAMILIES[c][1];
            final boolean gauge = c == CountersDescriptor.TIER_USED_BYTES || c == CountersDescriptor.TIER_CAPACITY_BYTES || c == CountersDescriptor.TIER_OBJECTS;
            final CounterSnapshot.Builder counterFamily = CounterSnapshot.builder().name(name).help(help).unit(unitOf(name));
            final GaugeSnapshot.Builder gaugeFamily = GaugeSnapshot.builder().name(name).help(help).unit(unitOf(name));
            for (int i = 0; i < tiers.size(); i++)
            {
                final int id = CountersDescriptor.tierCounterId(tiers.get(i), c);
                if (!records.allocated(id))
                {
                    continue;
                }
                final Labels labels = Labels.of("tier", names.get(i));
                final long raw = records.raw(id);
                if (gauge)
                {
                    final double value = c == CountersDescriptor.TIER_CAPACITY_BYTES && raw == Long.MAX_VALUE ? Double.POSITIVE_INFINITY : raw;
                    gaugeFamily.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().labels(labels).value(value).build());
                }
                else
                {
                    counterFamily.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().labels(labels).value(raw).build());
                }
            }
            families.add(gauge ? gaugeFamily.build() : counterFamily.build());
        }
        final GaugeSnapshot.Builder state = GaugeSnapshot.builder().name(PREFIX + TIER_STATE)
            .help("The tier's state: 0 in service, 1 stuck (a call or a batch outlived l3.io-timeout), 2 out of service until restart"
                + " (caught writing into pages after their load).");
        for (int i = 0; i < tiers.size(); i++)
        {
            state.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().labels(Labels.of("tier", names.get(i)))
                .value(records.value(CountersDescriptor.FIRST_TIER_INFO_ID + tiers.get(i))).build());
        }
        families.add(state.build());
    }

    private static void threads(final Records records, final List<MetricSnapshot> families)
    {
        final GaugeSnapshot.Builder family = GaugeSnapshot.builder().name(PREFIX + THREAD_STATE)
            .help("A watched engine thread's state: 0 runs, 1 stuck (busy with one piece of work past health.stuck-after), 2 dead.");
        for (int id = CountersDescriptor.FIRST_THREAD_ID; id < CountersDescriptor.FIRST_TIER_INFO_ID; id++)
        {
            if (records.allocated(id))
            {
                family.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().labels(Labels.of("thread", suffix(records.name(id), "thread_")))
                    .value(records.value(id)).build());
            }
        }
        families.add(family.build());
    }

    private void latencies(final Records records, final List<MetricSnapshot> families)
    {
        final long[] counts = new long[LatencyHistogram.BUCKETS];
        final HistogramSnapshot.Builder reads = HistogramSnapshot.builder().name(PREFIX + "tier_read_seconds").unit(Unit.SECONDS)
            .help("How long the tier's read batches took, from submission to completion.");
        final HistogramSnapshot.Builder writes = HistogramSnapshot.builder().name(PREFIX + "tier_write_seconds").unit(Unit.SECONDS)
            .help("How long the tier's write batches (backups, migrations) took, from submission to completion.");
        for (int t = 0; t < EngineHistograms.MAX_TIERS; t++)
        {
            final int info = CountersDescriptor.FIRST_TIER_INFO_ID + t;
            if (records.allocated(info))
            {
                final Labels labels = Labels.of("tier", suffix(records.name(info), "tier_"));
                reads.dataPoint(point(histograms.tierRead(t), labels, counts));
                writes.dataPoint(point(histograms.tierWrite(t), labels, counts));
            }
        }
        families.add(reads.build());
        families.add(writes.build());
        final HistogramSnapshot.Builder requests = HistogramSnapshot.builder().name(PREFIX + "request_seconds").unit(Unit.SECONDS)
            .help("How long a request took, from the moment the engine took it until it answered, by message type.");
        for (int type = 0; type < CountersDescriptor.REQUEST_TYPES; type++)
        {
            if (records.allocated(CountersDescriptor.FIRST_REQUEST_TYPE_ID + type))
            {
                requests.dataPoint(point(histograms.request(type), Labels.of("type", typeLabel(type)), counts));
            }
        }
        families.add(requests.build());
    }

    private static HistogramSnapshot.HistogramDataPointSnapshot point(final LatencyHistogram histogram, final Labels labels, final long[] counts)
    {
        final double[] bounds = new double[LatencyHistogram.BUCKETS];
        for (int i = 0; i < LatencyHistogram.UPPER_BOUNDS_NANOS.length; i++)
        {
            bounds[i] = Unit.nanosToSeconds(LatencyHistogram.UPPER_BOUNDS_NANOS[i]);
        }
        bounds[LatencyHistogram.BUCKETS - 1] = Double.POSITIVE_INFINITY;
        // The sum is read after the buckets: it may include a record the buckets missed, never the reverse by more than one.
        histogram.countsOpaque(counts);
        final double sum = Unit.nanosToSeconds(histogram.sumNanosOpaque());
        return HistogramSnapshot.HistogramDataPointSnapshot.builder().labels(labels).classicHistogramBuckets(ClassicHistogramBuckets.of(bounds, counts.clone()))
            .sum(sum).build();
    }

    private static Unit unitOf(final String name)
    {
        if (name.endsWith("_bytes"))
        {
            return Unit.BYTES;
        }
        return name.endsWith("_seconds") ? Unit.SECONDS : null;
    }

    private static String suffix(final String name, final String prefix)
    {
        return name.startsWith(prefix) ? name.substring(prefix.length()) : name;
    }

    /** A record's name as a metric name: anything but [a-zA-Z0-9_] becomes '_' (the engine's names need nothing). */
    static String sanitize(final String name)
    {
        final StringBuilder out = new StringBuilder(name.length());
        for (int i = 0; i < name.length(); i++)
        {
            final char c = name.charAt(i);
            out.append(c < 128 && (Character.isLetterOrDigit(c) || c == '_') ? c : '_');
        }
        return out.toString();
    }

    /** One scrape's read of the region's records. */
    private static final class Records
    {
        private final int[] types = new int[CountersDescriptor.MAX_COUNTERS];
        private final String[] names = new String[CountersDescriptor.MAX_COUNTERS];
        private final String[] descriptions = new String[CountersDescriptor.MAX_COUNTERS];
        private final long[] values = new long[CountersDescriptor.MAX_COUNTERS];

        static Records read(final CountersReader reader)
        {
            final Records records = new Records();
            reader.forEach((id, typeId, name, description, value) ->
            {
                records.types[id] = typeId;
                records.names[id] = name;
                records.descriptions[id] = description;
                records.values[id] = value;
            });
            return records;
        }

        boolean allocated(final int id)
        {
            return names[id] != null;
        }

        int type(final int id)
        {
            return types[id];
        }

        String name(final int id)
        {
            return names[id];
        }

        String description(final int id)
        {
            return descriptions[id];
        }

        long raw(final int id)
        {
            return values[id];
        }

        double value(final int id)
        {
            return values[id];
        }
    }
}
