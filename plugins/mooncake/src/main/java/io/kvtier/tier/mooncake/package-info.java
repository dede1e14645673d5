/**
 * The {@code mooncake} storage tier: page frames as objects in a Mooncake Store cluster, moved
 * straight between the pool and the store through the store's C ABI (bindings in {@code bindings}).
 * {@link io.kvtier.tier.mooncake.MooncakeTierProvider} is the entry point.
 */
package io.kvtier.tier.mooncake;
