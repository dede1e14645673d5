/**
 * Trace replay, the demo workload, the bench commands' drivers and the JMH benchmarks. The JMH
 * benchmarks run from the shaded target/benchmarks.jar on the class path, so JMH is needed to compile
 * them only ({@code requires static}), and kvtier's module path (cli) runs without it.
 */
module io.kvtier.bench
{
    requires io.kvtier.spi;
    requires io.kvtier.collections;
    requires io.kvtier.nativeaccess;
    requires io.kvtier.client;
    requires io.kvtier.device;
    requires io.kvtier.engine;
    // ScrapeCost scrapes the engine's metrics.
    requires io.kvtier.metrics;
    // ScrapeCost reads the engine thread's CPU time.
    requires java.management;
    requires com.fasterxml.jackson.core;
    // The chaos campaign reads the served engine's tier counters from its admin API.
    requires java.net.http;
    // HdrHistogram has no module descriptor and no Automatic-Module-Name: its name comes from its jar's.
    requires HdrHistogram;
    requires static jmh.core;

    // bench tier and the JMH tier benchmark find tier providers as the engine does.
    uses io.kvtier.spi.StorageTierProvider;

    // The drivers of kvtier's bench and demo commands, each run by cli.
    exports io.kvtier.bench.chaos;
    exports io.kvtier.bench.copy;
    exports io.kvtier.bench.device;
    exports io.kvtier.bench.ipc;
    exports io.kvtier.bench.migrate;
    exports io.kvtier.bench.replay;
    exports io.kvtier.bench.requests;
    exports io.kvtier.bench.tier;
    exports io.kvtier.bench.workload;
    exports io.kvtier.bench.warm;
    // ScrapeCost, run by its main (docs/PERFORMANCE.md).
    exports io.kvtier.bench.metrics;

    // JMH's runner creates the benchmarks, their state and its generated harness by reflection, when
    // they run in this module (BenchmarksRunOnceTest; benchmarks.jar runs them on the class path).
    opens io.kvtier.bench.jmh to jmh.core;
    opens io.kvtier.bench.jmh.jmh_generated to jmh.core;
}
