/**
 * The engine and its in-process client API.
 *
 * <p>{@link io.kvtier.engine.Engine} starts the pool, the tiers and the request pipeline: one LMAX
 * Disruptor ring whose events are small preallocated descriptors (an opcode, a session, a key range,
 * a batch reference), never payload bytes. One engine thread, an agent ({@code core.EngineConductor}
 * run by {@code core.AgentRunner}), owns the index, the free list, the eviction order and every
 * policy, so none of them needs a lock: each duty cycle polls the ring, runs the IPC duty, fires the
 * parts' timers and flushes tier I/O in batches, whose completions come back into the same ring.
 *
 * <p>{@link io.kvtier.engine.Session} is how code in the engine's process uses it: a key chain, per-key
 * results, one request at a time, waiting without allocating. A session's pins and reservations are
 * leased: an idle session loses them.
 */
package io.kvtier.engine;
