/**
 * The engine thread: one agent ({@link io.kvtier.engine.core.EngineConductor}) on a thread an
 * {@code AgentRunner} owns, and the parts it dispatches to. Each part owns its state outright, and all
 * of them run on the one engine thread, so no field is shared and nothing takes a lock.
 *
 * <pre>
 *  clients (ClientPort) ─┐                                   ┌─ SessionTable   open clients, their leases
 *  tier completions ─────┼─► ring ─┐                         ├─ Reservations   reserve, commit, abort, reservation deadlines
 *  re-verified pages ────┘         ├─► EngineConductor ──────┼─ Acquires       pin the longest prefix, release
 *  IPC clients' rings ─► IPC duty ─┘   (one duty cycle:      ├─ Lookups        how much is where; probes; prefetch; negative probes
 *                                       ring, IPC duty,      ├─ Loads          L3 to pool, and who waits for each load
 *                                       timers, tier I/O)    ├─ Backups        pool to L3, attempts, backlog, flush
 *                                                            ├─ TierIo         batches per tier, in-flight bounds, tier timeouts
 *                                                            ├─ PoolSpace      free list, eviction order, water levels, quarantine
 *                                                            └─ PoolLiveness   heartbeat, dead direct clients' pins
 * </pre>
 *
 * <p>One duty cycle polls the Disruptor ring ({@code EventPoller}), runs the IPC adapter's duty if one
 * is attached (its requests come straight in, no ring hop), gives the parts with deadlines the engine
 * clock's time every {@code pipeline.tick-interval}, and sends the tier batches the cycle filled. Its
 * work count drives the {@link io.kvtier.engine.core.IdleStrategy} ({@code engine.idle-strategy}); a
 * sleeping engine thread is woken by every publication on the ring and by the IPC clients' doorbell.
 *
 * <p>Parts meet only through narrow interfaces, each given to a part when it is made: what a part asks of
 * another's state is an interface that other part implements ({@link io.kvtier.engine.core.PageSpace},
 * {@link io.kvtier.engine.core.TierQueue}, {@link io.kvtier.engine.core.LoadTracker},
 * {@link io.kvtier.engine.core.Probes}, {@link io.kvtier.engine.core.BackupRequests},
 * {@link io.kvtier.engine.core.SessionRecords}, {@link io.kvtier.engine.core.Reverifier}); what would
 * make a cycle goes through the conductor, which implements it and hands each call to its owner
 * ({@link io.kvtier.engine.core.EngineSteps}, {@code PoolSpace.EvictionGate}, {@code PoolSpace.SpaceWaiterResumer},
 * {@code Loads.WaitOver}); and the tiers' answers reach {@code Loads}, {@code Backups} and {@code Lookups}
 * through the conductor too ({@code TierIo.Completions}), never by a part holding another. Only the
 * conductor holds the parts themselves, so each part can be made and tested on its own.
 * {@link io.kvtier.engine.core.Residency} reads where a key's page is and owns nothing.
 */
package io.kvtier.engine.core;
