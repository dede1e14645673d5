/**
 * The storage-tier conformance kit: the contract every {@link io.kvtier.spi.StorageTier} must keep,
 * as JUnit 5 tests a plugin runs by extending
 * {@link io.kvtier.tck.AbstractStorageTierContractTest} and filling in a few hooks.
 *
 * <p>The helpers ({@link io.kvtier.tck.RecordingTierBatch}, {@link io.kvtier.tck.PageArena},
 * {@link io.kvtier.tck.PageBytes}, {@link io.kvtier.tck.ContractTierContext}) are public so a
 * plugin's own tests can drive its tier the way the kit does.
 */
package io.kvtier.tck;
