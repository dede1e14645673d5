/**
 * {@code kvtier bench tier}: page writes and reads through a storage tier's SPI, batched as the
 * engine batches them, at a chosen queue depth, beside fio doing the same sizes and depths with
 * io_uring and direct I/O in the same run.
 */
package io.kvtier.bench.tier;
