/**
 * The HTTP admin API: a running engine's operations (tiers, migrations, evictions, marks, health) served
 * as JSON on the JDK's HTTP server (docs/admin-api.md).
 */
module io.kvtier.admin
{
    requires io.kvtier.spi;
    requires io.kvtier.engine;
    requires jdk.httpserver;
    requires com.fasterxml.jackson.core;
    requires com.fasterxml.jackson.databind;

    // AdminServer and its settings: cli (serve starts it); its Builder#route takes the JDK server's
    // HttpHandler, so a caller that mounts a route reads jdk.httpserver through this module.
    exports io.kvtier.admin;
    requires transitive jdk.httpserver;

    // Jackson binds the request bodies to these records and writes the answers by reflection.
    opens io.kvtier.admin.json to com.fasterxml.jackson.databind;
}
