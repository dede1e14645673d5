/**
 * {@code kvtier bench ipc}: round trips between two processes over shared memory, through the IPC
 * protocol's rings and, as the baseline, through a bare ping-pong of two sequence words.
 */
package io.kvtier.bench.ipc;
