/**
 * Synthetic workloads driven through a real engine, with every page's bytes derived from its key so
 * that each byte read back can be checked: the multi-turn chat workload behind {@code kvtier demo}.
 */
package io.kvtier.bench.workload;
