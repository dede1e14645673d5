/**
 * Allocation-free structures for millions of pages with bounded heap: {@link io.kvtier.collections.KeyTable},
 * an open-addressing table from 128-bit keys to slots that lives in any {@link java.lang.foreign.MemorySegment}
 * (so another process can map it), {@link io.kvtier.collections.IntLruList}, an intrusive
 * recency list over dense ids, and {@link io.kvtier.collections.ParkingQueue}, a bounded
 * multi-producer, multi-consumer hand-off queue whose idle consumers park without allocating.
 */
package io.kvtier.collections;
