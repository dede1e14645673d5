/**
 * Allocation-free structures for millions of pages with bounded heap: {@link io.kvtier.collections.KeyTable},
 * an open-addressing table from 128-bit keys to slots that lives in any {@link java.lang.foreign.MemorySegment}
 * (so another process can map it), and {@link io.kvtier.collections.IntLruList}, an intrusive
 * recency list over dense ids.
 */
package io.kvtier.collections;
