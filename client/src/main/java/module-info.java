/**
 * The IPC protocol both ends share and the Java client library. Depends on native only, never on the
 * engine.
 */
module io.kvtier.client
{
    requires io.kvtier.nativeaccess;

    // The Java client library (KvtierClient, keys, leases): third-party clients, bench's workload
    // clients, cli; the engine uses its key chain and connection types.
    exports io.kvtier.client;
    // The wire protocol (messages, error codes, layouts): the engine's IPC side, bench.
    exports io.kvtier.client.protocol;
}
