/**
 * The storage-tier SPI: what an L3 backend implements so the engine can keep KV pages in it.
 *
 * <p>A plugin ships a {@link io.kvtier.spi.StorageTierProvider} registered under
 * {@code META-INF/services/io.kvtier.spi.StorageTierProvider}. The engine finds it by
 * {@link java.util.ServiceLoader}, hands it the tier's validated {@link io.kvtier.spi.TierConfig},
 * and then drives the {@link io.kvtier.spi.StorageTier} with asynchronous batches whose
 * {@link java.lang.foreign.MemorySegment} slices point straight into the shared page pool, so no
 * payload byte is copied on the way in or out.
 *
 * <p>This package depends on the JDK only, and new capabilities arrive as default methods so
 * plugins built against an older SPI keep working; {@link io.kvtier.spi.SpiVersion} says which SPI a
 * plugin was built for, and the engine refuses one it cannot run. A third-party plugin needs this
 * package and the conformance kit, nothing else of kvtier; the engine loads it from its plugin
 * directory with a class loader that shares only this package with the engine. The {@code kvtier-tck} module holds the
 * conformance kit that every plugin runs by extending one class.
 */
package io.kvtier.spi;
