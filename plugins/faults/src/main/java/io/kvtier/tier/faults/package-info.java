/**
 * The {@code faults} storage tier: a wrapper around a tier of any other type that injects the faults
 * a storage backend can have (EIO and ENOSPC, slow, stalled and blocked calls, short reads, torn
 * writes, bit flips and replaced objects at rest, writes into a read's memory after its key completed)
 * at configured rates, each decision drawn from a seeded {@link java.util.SplittableRandom} and
 * recorded in a fault log. {@link io.kvtier.tier.faults.FaultsTierProvider} is the entry point.
 */
package io.kvtier.tier.faults;
