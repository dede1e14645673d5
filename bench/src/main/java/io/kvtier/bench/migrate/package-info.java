/**
 * {@code kvtier bench migrate}: a migration between two POSIX L3 tiers of a running engine, beside a
 * raw copy of as many files of the same size between the same directories in the same run, and a
 * client's request latency with and without a migration running.
 */
package io.kvtier.bench.migrate;
