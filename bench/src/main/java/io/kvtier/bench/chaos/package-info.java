/**
 * {@code kvtier chaos}: a campaign that runs a served engine and client processes under faults drawn from
 * a seed, checks every byte read and every page acknowledged as backed up, and reports figures
 * (docs/chaos.md).
 */
package io.kvtier.bench.chaos;
