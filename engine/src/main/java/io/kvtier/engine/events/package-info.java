/**
 * KV events for routers (docs/kv-events.md): {@link io.kvtier.engine.events.PageEvents}, the narrow interface
 * the engine thread calls where a page enters or leaves the pool or an L3 tier, and
 * {@link io.kvtier.engine.events.EventRing}, the off-heap single-producer ring it records them in, which the
 * publisher (the events module, on the kvtier-events thread) reads.
 */
package io.kvtier.engine.events;
