/**
 * The engine and its in-process client API.
 *
 * <p>{@link io.kvtier.engine.Engine} starts the pool, the tiers and the request pipeline: one LMAX
 * Disruptor ring whose events are small preallocated descriptors (an opcode, a session, a key range,
 * a batch reference), never payload bytes. A single handler thread, {@code EngineCore}, owns the
 * index, the free list, the LRU and every policy, so none of them needs a lock; tier I/O leaves in
 * batches at {@code endOfBatch} and comes back into the same ring as completion events.
 *
 * <p>{@link io.kvtier.engine.Session} is how code in the engine's process uses it: a key chain, per-key
 * results, one request at a time, waiting without allocating. A session's pins and reservations are
 * leased: an idle session loses them.
 */
package io.kvtier.engine;
