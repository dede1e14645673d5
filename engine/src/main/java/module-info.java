/**
 * The engine: pool, keys, index, pipeline, policies, sessions, the IPC server and the tier registry.
 * Only what kvtier's own front ends (cli, bench) drive is exported; core, index and ipc are internal.
 */
module io.kvtier.engine
{
    requires io.kvtier.spi;
    requires io.kvtier.collections;
    requires io.kvtier.nativeaccess;
    requires io.kvtier.client;
    requires io.kvtier.device;
    requires com.lmax.disruptor;

    // The tier registry finds providers on the module and class path by ServiceLoader; plugins.dir's
    // jars are loaded by a class loader of their own (engine.tier.PluginClassLoader).
    uses io.kvtier.spi.StorageTierProvider;

    // Engine, Session, the engine's errors: cli (serve, demo), bench.
    exports io.kvtier.engine;
    // The typed settings and their parsing: cli (--config, --set), bench.
    exports io.kvtier.engine.config;
    // Eviction policies by name: bench replay, cli.
    exports io.kvtier.engine.eviction;
    // The pool file's layout and counters: cli (stat), bench.
    exports io.kvtier.engine.pool;
    // What an operator asks of a running engine (tiers, migrations, evictions, marks, health): the admin API, cli.
    exports io.kvtier.engine.operations;
    // Engine status and health: cli (stat --check), bench.
    exports io.kvtier.engine.status;
    // The tier registry and its catalog: cli (demo --l3), bench tier.
    exports io.kvtier.engine.tier;
    // KV events: the ring the publisher (events module) reads, and what it needs to publish them.
    exports io.kvtier.engine.events;
    // Engine.ipc() answers its IPC server: cli serve prints the socket it listens on.
    exports io.kvtier.engine.ipc to io.kvtier.cli;
    // Engine.pipeline(): the JMH benchmark of batched lookups runs them on the engine thread through a duty of its own.
    exports io.kvtier.engine.core to io.kvtier.bench;
}
