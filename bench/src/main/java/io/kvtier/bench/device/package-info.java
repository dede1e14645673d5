/**
 * {@code kvtier bench device}: the engine's device operations (DEVICE_LOAD into a client's KV buffers)
 * against the client copying the same pinned pages itself, in one run.
 */
package io.kvtier.bench.device;
