/**
 * The engine thread: one Disruptor ring, one handler ({@link io.kvtier.engine.core.EngineConductor}),
 * and the parts it dispatches to. Each part owns its state outright, and all of them run on the one
 * engine thread, so no field is shared and nothing takes a lock.
 *
 * <pre>
 *  clients (ClientPort) ─┐                       ┌─ SessionTable   open clients, their leases
 *  tier completions ─────┼─► Pipeline ring ─► EngineConductor ─┼─ Reservations   reserve, commit, abort, reservation deadlines
 *  ticker ───────────────┘                       ├─ Acquires       pin the longest prefix, release
 *                                                ├─ Lookups        how much is where; probes; prefetch; negative probes
 *                                                ├─ Loads          L3 to pool, and who waits for each load
 *                                                ├─ Backups        pool to L3, attempts, backlog, flush
 *                                                ├─ TierIo         batches per tier, in-flight bounds, tier timeouts
 *                                                ├─ PoolSpace      free list, eviction order, water levels, quarantine
 *                                                └─ PoolLiveness   heartbeat, dead direct clients' pins
 * </pre>
 *
 * <p>Parts reach one another only through narrow interfaces the conductor implements
 * ({@code PoolSpace.EvictionGate}, {@code PoolSpace.SpaceWaiterResumer}, {@code Loads.WaitOver},
 * {@code TierIoBatch.Sink}), so that each can be tested on its own. {@link io.kvtier.engine.core.Residency}
 * reads where a key's page is and owns nothing.
 */
package io.kvtier.engine.core;
