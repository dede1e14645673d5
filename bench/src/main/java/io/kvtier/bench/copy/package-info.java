/**
 * {@code kvtier bench copy}: page copies inside the shared pool through the engine's own copy path
 * ({@link java.lang.foreign.MemorySegment#copy} on the pool's payload slices), against the C
 * library's {@code memcpy} on the same buffers, interleaved in one run.
 */
package io.kvtier.bench.copy;
