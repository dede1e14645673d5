/**
 * The publisher of KV events: {@link io.kvtier.events.EventPublisher} (the kvtier-events thread, the ZMQ
 * socket and its framing) and {@link io.kvtier.events.KvEventEncoder} (the msgpack form of a batch).
 */
package io.kvtier.events;
