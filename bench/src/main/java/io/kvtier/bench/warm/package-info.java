/**
 * {@code kvtier bench restart}: the pool hit rate of the first minute after an engine is killed, with a warm
 * restart (the new engine adopts the dead engine's pages) against a cold one, from the same dead pool in the
 * same run.
 */
package io.kvtier.bench.warm;
