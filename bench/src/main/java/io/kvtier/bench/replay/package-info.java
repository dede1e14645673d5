/**
 * Index-level replay of a Mooncake-format request trace: how many prefix blocks a cache of a given
 * capacity would have served, under a given eviction policy.
 *
 * <p>{@link io.kvtier.bench.replay.TraceReader} streams a JSON-lines trace into
 * {@link io.kvtier.bench.replay.TraceRequest}s; {@link io.kvtier.bench.replay.TraceReplay} replays them
 * through a {@link io.kvtier.bench.replay.ReplayPolicy} and returns a
 * {@link io.kvtier.bench.replay.ReplayResult}.
 *
 * <h2>Semantics</h2>
 * Blocks of {@value io.kvtier.bench.replay.TraceReplay#BLOCK_TOKENS} tokens; the capacity is
 * {@code floor(capacityTokens / 512)} blocks. A request's hits are the leading run of its blocks that are
 * cached when it arrives (a cached block after the first miss does not count, as a prefix cache cannot
 * use it). Then its blocks are touched or inserted in order, first to last, each insertion into a full
 * cache evicting one block chosen by the policy. Hit rate is total hit blocks over total blocks. An engine
 * policy hears each block with its parent, the block touched or inserted just before it in the same request
 * (none for the request's first block), and with its hash id as the key hash.
 *
 * <h2>Keys</h2>
 * The replay runs on the engine's own index structures: a {@link io.kvtier.collections.KeyTable} in an
 * off-heap segment maps each resident block's 128-bit key to a dense entry id, and the engine's
 * {@link io.kvtier.engine.eviction.EvictionPolicy}, built by
 * {@link io.kvtier.engine.eviction.EvictionPolicies#forName}, orders eviction over those ids as over pool
 * pages. A trace hash id {@code h}
 * (a non-negative 64-bit integer) becomes the key {@code (high, low) = (0x6D6F6F6E63616B65, h)}: the high
 * half is the ASCII of {@code "mooncake"}, a fixed namespace that makes replay keys recognisable in a
 * dump, and the low half is the id itself, so the mapping is injective and reversible. The table mixes
 * both halves with a seeded SplitMix64 finaliser, so dense sequential ids spread as well as real
 * content hashes do.
 */
package io.kvtier.bench.replay;
