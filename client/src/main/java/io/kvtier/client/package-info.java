/**
 * {@link io.kvtier.client.IpcConnection}: the low-level client of a running engine over the IPC
 * protocol (docs/ipc-protocol.md), on which higher-level clients build.
 */
package io.kvtier.client;
