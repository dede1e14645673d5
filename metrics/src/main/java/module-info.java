/**
 * Prometheus metrics for kvtier: the pool's shared-memory counters and the engine's latency histograms as
 * metric families of the official Prometheus Java client, and the {@code GET /metrics} handler that serves
 * them in the Prometheus text format or OpenMetrics.
 */
module io.kvtier.metrics
{
    requires io.kvtier.client;
    requires io.kvtier.engine;
    // The Prometheus Java client 1.x: automatic modules, named by their jars' Automatic-Module-Name.
    requires io.prometheus.metrics.model;
    requires io.prometheus.metrics.core;
    requires io.prometheus.writer.text;
    requires transitive io.prometheus.metrics.exporter.httpserver;
    // The handler is a com.sun.net.httpserver.HttpHandler, mounted on the JDK's HTTP server.
    requires transitive jdk.httpserver;

    // PoolMetrics and MetricsEndpoint: cli (kvtier serve mounts the handler on the admin server), the admin API, bench.
    exports io.kvtier.metrics;
}
