/**
 * KV events for routers (docs/kv-events.md): reads the engine's event ring on the kvtier-events thread and
 * publishes vLLM's KV event batches (BlockStored, BlockRemoved, AllBlocksCleared) in msgpack over a ZMQ PUB
 * socket, one topic per namespace. kvtier serve starts it when events.enabled is set.
 */
module io.kvtier.events
{
    requires transitive io.kvtier.engine;
    // ZMQ in pure Java: a named module of its own (its CURVE support, jnacl, is optional and unused here).
    requires org.zeromq.jeromq;
    // msgpack's core packer: an automatic module, named after its jar.
    requires msgpack.core;

    // EventPublisher: cli (serve).
    exports io.kvtier.events;
}
