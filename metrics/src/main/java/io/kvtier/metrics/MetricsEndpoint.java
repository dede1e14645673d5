package io.kvtier.metrics;

import com.sun.net.httpserver.HttpHandler;
import io.kvtier.client.pool.MappedPool;
import io.kvtier.engine.Engine;
import io.prometheus.metrics.exporter.httpserver.MetricsHandler;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

import java.io.IOException;
import java.io.OutputStream;

/**
 * {@code GET /metrics}: a registry of its own holding one {@link PoolMetrics}, served by the Prometheus
 * client's handler for the JDK's HTTP server, which writes the Prometheus text format, or OpenMetrics when
 * the request's Accept header asks for it ({@code application/openmetrics-text}). The admin server mounts
 * {@link #handler()} at {@link #PATH}.
 */
public final class MetricsEndpoint
{
    /** Where the handler is mounted. */
    public static final String PATH = "/metrics";

    private static final PrometheusTextFormatWriter TEXT = PrometheusTextFormatWriter.create();

    private final PrometheusRegistry registry;
    private final HttpHandler handler;

    /**
     * @param engine an engine running in this process
     * @return an endpoint serving its counters and its latency histograms
     */
    public static MetricsEndpoint of(final Engine engine)
    {
        return new MetricsEndpoint(PoolMetrics.of(engine));
    }

    /**
     * @param pool a running engine's pool, mapped from another process
     * @return an endpoint serving its counters (the histograms live in the engine's process, not in the pool)
     */
    public static MetricsEndpoint of(final MappedPool pool)
    {
        return new MetricsEndpoint(PoolMetrics.of(pool));
    }

    /**
     * @param metrics what to serve
     */
    MetricsEndpoint(final PoolMetrics metrics)
    {
        // A registry of its own, never the client's default one: two engines in one process (tests, trust
        // domains) would otherwise register the same names twice.
        this.registry = new PrometheusRegistry();
        registry.register(metrics);
        this.handler = new MetricsHandler(registry);
    }

    /**
     * Scrapes once and writes the Prometheus text format, as {@code GET /metrics} answers without an Accept
     * header: for a scrape without HTTP (a benchmark, a command that prints the metrics).
     *
     * @param out where to write
     * @throws IOException if writing fails
     */
    public void writeText(final OutputStream out) throws IOException
    {
        TEXT.write(out, registry.scrape());
    }

    /** @return the handler to mount at {@link #PATH} */
    public HttpHandler handler()
    {
        return handler;
    }
}
