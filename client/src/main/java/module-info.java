/**
 * The IPC protocol both ends share and the Java client library. Depends on native and collections, never on
 * the engine.
 */
module io.kvtier.client
{
    requires io.kvtier.nativeaccess;
    // The pool's key index is a KeyTable laid out in the mapped file.
    requires io.kvtier.collections;

    // The Java client library (KvtierClient, keys, leases): third-party clients, bench's workload
    // clients, cli; the engine uses its key chain and connection types.
    exports io.kvtier.client;
    // The wire protocol (messages, error codes, layouts): the engine's IPC side, bench.
    exports io.kvtier.client.protocol;
    // The pool file as every process that maps it sees it (descriptors, page state word, read sides,
    // MappedPool, PoolClient): the engine's owner side, kvtier stat, bench.
    exports io.kvtier.client.pool;
    // Which python3 runs the Python package's engine adapters: cli's engine drivers, and the engine's adapter tests
    // (which compile patched into the engine's module).
    exports io.kvtier.client.python to io.kvtier.engine, io.kvtier.cli;
}
