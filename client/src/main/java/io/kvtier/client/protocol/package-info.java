/**
 * The IPC protocol of docs/ipc-protocol.md as code both ends share: the byte layouts
 * ({@code *Descriptor}), the operations and codes ({@link io.kvtier.client.protocol.MessageType},
 * {@link io.kvtier.client.protocol.ErrorCode}), the single-producer single-consumer record rings
 * ({@link io.kvtier.client.protocol.RingProducer}, {@link io.kvtier.client.protocol.RingConsumer}), the
 * request and response flyweights, the request validator, and waiting
 * ({@link io.kvtier.client.protocol.IdleStrategy} over a {@link io.kvtier.client.protocol.FutexWord}).
 * Everything on a hot path is allocation-free and lock-free; every ordered access says its ordering in
 * its name.
 */
package io.kvtier.client.protocol;
