/**
 * The {@code posix} storage tier: each page a file under a directory, written crash-safely
 * (temp file, optional fsync, atomic rename), read whole or reported CORRUPT, with its own LRU
 * capacity management. {@link io.kvtier.tier.posix.PosixTierProvider} is the entry point.
 */
package io.kvtier.tier.posix;
