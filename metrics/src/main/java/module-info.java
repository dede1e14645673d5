/**
 * Prometheus metrics for kvtier: the pool's shared-memory counters and the engine's latency histograms as
 * metric families of the official Prometheus Java client, and the {@code GET /metrics} handler that serves
 * them in the Prometheus text format or OpenMetrics.
 */
module io.kvtier.metrics
{
    // MetricsEndpoint.of takes an Engine or a MappedPool.
    requires transitive io.kvtier.client;
    requires transitive io.kvtier.engine;
    // The Prometheus Java client 1.x: automatic modules, named by their jars' Automatic-Module-Name. None of
    // their types is part of this module's API, which hands out JDK types only (HttpHandler, OutputStream).
    requires io.prometheus.metrics.model;
    requires io.prometheus.metrics.core;
    requires io.prometheus.writer.text;
    requires io.prometheus.metrics.exporter.httpserver;
    // The handler is a com.sun.net.httpserver.HttpHandler, mounted on the JDK's HTTP server.
    requires transitive jdk.httpserver;

    // MetricsEndpoint: cli (kvtier serve mounts the handler on the admin server), the admin API, bench.
    exports io.kvtier.metrics;
}
