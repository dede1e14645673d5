/**
 * Deterministic page keys: the chained SHA-256 hash specified in {@code docs/keys.md}, namespaced by
 * model, KV layout, tensor-parallel rank and tenant salt, so the same tokens give the same keys in
 * every process, on every node, in every run.
 */
package io.kvtier.engine.key;
