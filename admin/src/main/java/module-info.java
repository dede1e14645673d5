/**
 * The HTTP admin API: a running engine's operations (tiers, migrations, evictions, marks, health) served
 * as JSON on the JDK's HTTP server (docs/admin-api.md).
 */
module io.kvtier.admin
{
    requires io.kvtier.spi;
    requires io.kvtier.engine;
    requires com.fasterxml.jackson.core;
    requires com.fasterxml.jackson.databind;
    // AdminServer.Builder#route takes the JDK server's HttpHandler: whoever mounts a route reads it too.
    requires transitive jdk.httpserver;

    // AdminServer and how the engine's settings configure it: cli (serve starts it).
    exports io.kvtier.admin;

    // Jackson binds the request bodies to these records and writes the answers by reflection.
    opens io.kvtier.admin.json to com.fasterxml.jackson.databind;
}
