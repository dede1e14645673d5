package io.kvtier.metrics;

import io.kvtier.client.pool.CountersDescriptor;
import io.kvtier.client.pool.CountersReader;
import io.kvtier.client.pool.MappedPool;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.engine.Session;
import io.kvtier.engine.operations.AdmissionReason;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.LatencyHistogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * GET /metrics over real HTTP against a real engine with two POSIX tiers: every counter of the pool's region
 * appears under its Prometheus name with its value, per-tier families carry the tier's name, the admission
 * reasons their reason, the request histograms count the requests made; OpenMetrics when asked; and a
 * scrape reads shared memory only, so it still answers once the engine thread has stopped.
 */
class MetricsEndpointTest
{
    private static final int WRITES = 3;
    private static final int PAGES = 4;

    /** Drives sessions: WRITES rounds of reserve and commit of PAGES keys, a flush, then lookups and acquires. */
    private static void drive(final MetricsFixture fixture)
    {
        try (Session session = fixture.engine.openSession())
        {
            for (int round = 0; round < WRITES; round++)
            {
                MetricsFixture.keys(session, 100 + round, PAGES);
                assertThat(MetricsFixture.write(session, 0, PAGES)).isEqualTo(PAGES);
            }
            session.flush();
            for (int round = 0; round < WRITES; round++)
            {
                MetricsFixture.keys(session, 100 + round, PAGES);
                assertThat(session.lookup(0, PAGES)).isEqualTo(PAGES);
                assertThat(session.acquire(0, PAGES)).isEqualTo(PAGES);
                session.release();
            }
        }
    }

    /** Every allocated record of the region, read the way a reader in any process reads it. */
    private static Map<Integer, Long> values(final CountersReader reader)
    {
        final Map<Integer, Long> values = new HashMap<>();
        reader.forEach((id, type, name, description, value) -> values.put(id, value));
        return values;
    }

    @Test
    void shouldServeEveryCounterOfTheRegionWithItsValueTierAndReasonLabelsAndRequestHistograms(@TempDir final Path nvme, @TempDir final Path shared)
        throws Exception
    {
        try (MetricsFixture fixture = MetricsFixture.start(nvme, shared))
        {
            drive(fixture);
            final CountersReader reader = new CountersReader(fixture.engine.pool().counters());
            final Map<Integer, Long> before = values(reader);
            final HttpResponse<String> response = fixture.get(null);
            final Map<Integer, Long> after = values(reader);

            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.headers().firstValue("Content-Type").orElseThrow()).startsWith("text/plain; version=0.0.4");
            final Map<String, PrometheusText.Family> families = PrometheusText.parse(response.body());
            assertThat(families.keySet()).allMatch(name -> name.startsWith("kvtier_"));

            // Every engine counter, under its name, with its value (between the reads before and after the scrape).
            for (final EngineCounter counter : EngineCounter.values())
            {
                if (isReason(counter.id()))
                {
                    continue;
                }
                final String base = "kvtier_" + PoolMetrics.RENAMED.getOrDefault(counter.id(), counter.label());
                final String name = counter.type() == EngineCounter.Type.COUNTER ? base + "_total" : base;
                final PrometheusText.Family family = families.get(name);
                assertThat(family).as(counter + " as " + name).isNotNull();
                assertThat(family.type).isEqualTo(counter.type() == EngineCounter.Type.COUNTER ? "counter" : "gauge");
                assertThat(family.help).isEqualTo(counter.description());
                assertThat(family.samples).hasSize(1);
                assertThat(family.samples.getFirst().value()).as(name)
                    .isBetween((double)Math.min(before.get(counter.id()), after.get(counter.id())), (double)Math.max(before.get(counter.id()), after.get(counter.id())));
            }
            assertThat(value(families, "kvtier_pages_committed_total", Map.of())).isEqualTo((double)(WRITES * PAGES));
            assertThat(value(families, "kvtier_pages_reserved_total", Map.of())).isEqualTo((double)(WRITES * PAGES));

            // The admission reasons: one family, one series per reason, labelled from the reason's id.
            for (final AdmissionReason reason : AdmissionReason.values())
            {
                assertThat(value(families, "kvtier_admission_refusals_total", Map.of("reason", reason.label())))
                    .isEqualTo((double)after.get(reason.counter().id()));
            }
            assertThat(families.get("kvtier_admission_refusals_total").samples).hasSize(AdmissionReason.values().length);

            // Requests by type, and the request latency histograms counting exactly the requests made.
            final Map<String, Integer> made = Map.of("reserve", WRITES, "commit", WRITES, "lookup", WRITES, "acquire", WRITES, "release", WRITES,
                "flush", 1);
            for (final Map.Entry<String, Integer> entry : made.entrySet())
            {
                assertThat(value(families, "kvtier_requests_by_type_total", Map.of("type", entry.getKey()))).as(entry.getKey())
                    .isEqualTo((double)entry.getValue());
                assertThat(value(families, "kvtier_request_seconds_count", Map.of("type", entry.getKey()))).as(entry.getKey())
                    .isEqualTo((double)entry.getValue());
                final List<PrometheusText.Sample> buckets = families.get("kvtier_request_seconds").samples("kvtier_request_seconds_bucket",
                    Map.of("type", entry.getKey()));
                assertThat(buckets).hasSize(LatencyHistogram.BUCKETS);
                assertThat(buckets.getLast().labels().get("le")).isEqualTo("+Inf");
                assertThat(buckets.getLast().value()).isEqualTo((double)entry.getValue());
                assertThat(value(families, "kvtier_request_seconds_sum", Map.of("type", entry.getKey()))).isPositive();
            }
            assertThat(families.get("kvtier_request_seconds").type).isEqualTo("histogram");
            for (int type = 0; type < CountersDescriptor.REQUEST_TYPES; type++)
            {
                if (MessageType.isOperation(type))
                {
                    assertThat(value(families, "kvtier_requests_by_type_total", Map.of("type", MessageType.name(type).toLowerCase(java.util.Locale.ROOT))))
                        .isEqualTo((double)after.get(CountersDescriptor.FIRST_REQUEST_TYPE_ID + type));
                    // Each request taken was answered, and its latency recorded once.
                    assertThat(value(families, "kvtier_request_seconds_count", Map.of("type", MessageType.name(type).toLowerCase(java.util.Locale.ROOT))))
                        .isEqualTo((double)after.get(CountersDescriptor.FIRST_REQUEST_TYPE_ID + type));
                }
            }

            // Every tier's block under the tier's own name, in both tiers; their state and latency histograms.
            final List<String> tiers = List.of("nvme", "shared");
            for (int t = 0; t < tiers.size(); t++)
            {
                final Map<String, String> tier = Map.of("tier", tiers.get(t));
                final String[] names = {"kvtier_tier_hits_total", "kvtier_tier_misses_total", "kvtier_tier_errors_total", "kvtier_tier_read_bytes_total",
                    "kvtier_tier_written_bytes_total", "kvtier_tier_used_bytes", "kvtier_tier_capacity_bytes", "kvtier_tier_objects",
                    "kvtier_tier_evictions_total"};
                for (int c = 0; c < CountersDescriptor.TIER_COUNTER_STRIDE; c++)
                {
                    final long raw = after.get(CountersDescriptor.tierCounterId(t, c));
                    final double expected = c == CountersDescriptor.TIER_CAPACITY_BYTES && raw == Long.MAX_VALUE ? Double.POSITIVE_INFINITY : raw;
                    if (c == CountersDescriptor.TIER_USED_BYTES || c == CountersDescriptor.TIER_OBJECTS)
                    {
                        // The tier's call thread refreshes its usage gauges five times a second: the scrape saw one of the values between.
                        final long was = before.get(CountersDescriptor.tierCounterId(t, c));
                        assertThat(value(families, names[c], tier)).as(names[c] + tier).isBetween((double)Math.min(was, raw), (double)Math.max(was, raw));
                        continue;
                    }
                    assertThat(value(families, names[c], tier)).as(names[c] + tier).isEqualTo(expected);
                }
                assertThat(value(families, "kvtier_tier_state", tier)).isEqualTo((double)CountersDescriptor.TIER_IN_SERVICE);
                assertThat(value(families, "kvtier_tier_read_seconds_count", tier)).isNotNegative();
                assertThat(value(families, "kvtier_tier_write_seconds_count", tier)).isNotNegative();
            }
            assertThat(families.get("kvtier_tier_hits_total").samples).hasSize(2);

            // Threads and clients.
            assertThat(families.get("kvtier_thread_state").samples).isNotEmpty();
            assertThat(families.get("kvtier_thread_state").samples).allMatch(s -> s.value() == 0 && !s.labels().get("thread").startsWith("thread_"));
            assertThat(families.get("kvtier_clients_attached").type).isEqualTo("gauge");
        }
    }

    @Test
    void shouldCountEveryRecordOfTheRegionInSomeMetric(@TempDir final Path nvme, @TempDir final Path shared) throws Exception
    {
        try (MetricsFixture fixture = MetricsFixture.start(nvme, shared))
        {
            final Map<String, PrometheusText.Family> families = PrometheusText.parse(fixture.get(null).body());
            int samples = 0;
            for (final PrometheusText.Family family : families.values())
            {
                if (!family.type.equals("histogram"))
                {
                    samples += family.samples.size();
                }
            }
            final int[] records = new int[1];
            new CountersReader(fixture.engine.pool().counters()).forEach((id, type, name, description, value) -> records[0]++);
            // Each record is one sample, but a tier's info record gives its state and also names the tier's block.
            assertThat(samples).isEqualTo(records[0]);
        }
    }

    @Test
    void shouldAnswerOpenMetricsWhenTheAcceptHeaderAsksForIt(@TempDir final Path nvme, @TempDir final Path shared) throws Exception
    {
        try (MetricsFixture fixture = MetricsFixture.start(nvme, shared))
        {
            drive(fixture);
            final HttpResponse<String> response = fixture.get("application/openmetrics-text; version=1.0.0; charset=utf-8");
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.headers().firstValue("Content-Type").orElseThrow()).startsWith("application/openmetrics-text");
            assertThat(response.body()).endsWith("# EOF\n");
            // OpenMetrics names a counter's family without _total, and declares the units the names end in.
            assertThat(response.body()).contains("# TYPE kvtier_pages_committed counter\n").contains("\nkvtier_pages_committed_total ")
                .contains("# UNIT kvtier_request_seconds seconds\n").contains("# UNIT kvtier_tier_used_bytes bytes\n");
            final HttpResponse<String> text = fixture.get(null);
            assertThat(text.body()).doesNotContain("# EOF");
        }
    }

    @Test
    void shouldScrapeSharedMemoryOnlySoItAnswersAfterTheEngineThreadStopped(@TempDir final Path nvme, @TempDir final Path shared) throws Exception
    {
        final MetricsFixture fixture = MetricsFixture.start(nvme, shared);
        final Path poolPath = fixture.engine.config().poolPath();
        try (MappedPool mapped = MappedPool.attach(poolPath))
        {
            try
            {
                drive(fixture);
                final double requests = value(PrometheusText.parse(fixture.get(null).body()), "kvtier_requests_total", Map.of());
                // A scrape sends the engine no request: the count of requests it took does not move.
                assertThat(value(PrometheusText.parse(fixture.get(null).body()), "kvtier_requests_total", Map.of())).isEqualTo(requests);
            }
            finally
            {
                fixture.close();
            }
            // The engine has stopped, its thread ended and its file is gone; the mapping this process holds still reads.
            final MetricsEndpoint endpoint = MetricsEndpoint.of(mapped);
            final com.sun.net.httpserver.HttpServer server = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 0);
            server.createContext(MetricsEndpoint.PATH, endpoint.handler());
            server.start();
            try
            {
                final java.net.URI uri = java.net.URI.create("http://" + server.getAddress().getHostString() + ":" + server.getAddress().getPort() + "/metrics");
                final HttpResponse<String> response = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(uri).build(),
                    HttpResponse.BodyHandlers.ofString());
                assertThat(response.statusCode()).isEqualTo(200);
                final Map<String, PrometheusText.Family> families = PrometheusText.parse(response.body());
                assertThat(value(families, "kvtier_pages_committed_total", Map.of())).isEqualTo((double)(WRITES * PAGES));
                assertThat(value(families, "kvtier_tier_hits_total", Map.of("tier", "shared"))).isNotNegative();
                // From another process's mapping there are no histograms: they live in the engine's heap.
                assertThat(families).doesNotContainKey("kvtier_request_seconds");
            }
            finally
            {
                server.stop(0);
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

    /** The one sample named {@code name} (its family found by the name) whose labels include {@code labels}. */
    static double value(final Map<String, PrometheusText.Family> families, final String name, final Map<String, String> labels)
    {
        for (final PrometheusText.Family family : families.values())
        {
            final List<PrometheusText.Sample> found = family.samples(name, labels);
            if (!found.isEmpty())
            {
                assertThat(found).as(name + labels).hasSize(1);
                return found.getFirst().value();
            }
        }
        throw new AssertionError("no sample " + name + labels);
    }
}
