/**
 * The shared-memory page pool's file as every process that maps it sees it: one file, created by the
 * engine and mapped by co-located clients, holding a header, counters, client slots, a per-page
 * metadata table, a pin table, the key index and the page frames. Every region's layout is a
 * {@code *Descriptor} class with a byte diagram; the page lifecycle (FREE → WRITING → SERVING → FREE)
 * is a CAS protocol on one 64-bit word per page, described in {@link io.kvtier.client.pool.PageStateWord}.
 * {@link io.kvtier.client.pool.MappedPool} maps a running engine's pool, and
 * {@link io.kvtier.client.pool.PoolClient} pins its pages from another process. The engine's own side
 * (creating the file, writing metadata and counters) extends the readers here.
 */
package io.kvtier.client.pool;
