/**
 * The owner's side of the shared-memory page pool (L2): creating, publishing, heart-beating and
 * deleting the pool file ({@link io.kvtier.engine.pool.PagePool}, {@link io.kvtier.engine.pool.PoolFile}),
 * writing page metadata, sealing and verifying frames, naming and writing counters, and taking back
 * the slots of client processes that died. The file's layout, the page state word and what another
 * process reads or pins live in the client module's {@link io.kvtier.client.pool} package.
 */
package io.kvtier.engine.pool;
