/**
 * The shared-memory page pool (L2): one file, mapped by the engine and by co-located clients, holding
 * a header, counters, a per-page metadata table, the key index and the page frames. Every region's
 * layout is a {@code *Descriptor} class with a byte diagram; the page lifecycle
 * (FREE → WRITING → SERVING → FREE) is a CAS protocol on one 64-bit word per page, described in
 * {@link io.kvtier.client.pool.PageStateWord}.
 */
package io.kvtier.engine.pool;
