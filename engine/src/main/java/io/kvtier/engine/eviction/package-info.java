/**
 * Eviction as a policy: the order in which the pool's pages leave it.
 *
 * <p>{@link io.kvtier.engine.eviction.EvictionPolicy} is the contract the pool-space part of the engine drives:
 * it reports insertions, hits and removals, each with the page's parent in its key chain, and walks candidates
 * in eviction order. {@link io.kvtier.engine.eviction.EvictionPolicies} builds one by name; the default is
 * {@link io.kvtier.engine.eviction.AdaptivePolicy}, which switches a chain-aware
 * {@link io.kvtier.engine.eviction.SegmentedPolicy} between recency, admission and frequency settings by
 * simulating each on a sample of the traffic. {@link io.kvtier.engine.eviction.LruPolicy} is plain LRU.
 *
 * <p>Every policy is confined to one thread, sizes its arrays at construction and allocates nothing afterwards;
 * every call is O(1) amortised. Work whose effect no caller sees yet (the adaptive policy's bookkeeping of each
 * insertion and hit, and its simulations) may be put off to the engine thread's idle time through
 * {@link io.kvtier.engine.eviction.EvictionPolicy#maintain}. {@code docs/PERFORMANCE.md} ("Eviction policies") has their hit rates on the
 * Mooncake trace and on synthetic traces.
 */
package io.kvtier.engine.eviction;
