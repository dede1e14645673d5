/**
 * The kvtier command. The launcher runs it on the module path
 * ({@code java --module-path ... -m io.kvtier.cli/io.kvtier.cli.Main}); nothing is exported.
 */
module io.kvtier.cli
{
    requires io.kvtier.spi;
    // stat reads the pool's key table.
    requires io.kvtier.collections;
    requires io.kvtier.nativeaccess;
    requires io.kvtier.client;
    requires io.kvtier.device;
    requires io.kvtier.engine;
    requires io.kvtier.bench;
    // serve starts the admin API (admin.listen); kvtier admin calls it with java.net.http and reads its JSON.
    requires io.kvtier.admin;
    // serve mounts GET /metrics on the admin API.
    requires io.kvtier.metrics;
    // serve publishes KV events for routers (events.enabled).
    requires io.kvtier.events;
    requires java.net.http;
    requires com.fasterxml.jackson.core;
    requires com.fasterxml.jackson.databind;
    requires info.picocli;
    // The log format of kvtier -v (java.util.logging) and SIGINT/SIGTERM handling (sun.misc.Signal).
    requires java.logging;
    requires jdk.unsupported;

    // picocli reads and sets the commands' annotated fields and methods by reflection.
    opens io.kvtier.cli to info.picocli;
}
