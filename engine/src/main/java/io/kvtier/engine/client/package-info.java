/**
 * What a client of the engine sees, whatever process it runs in: the request operations
 * ({@link io.kvtier.engine.client.RequestOp}), the outcome of a request and of each of its keys
 * ({@link io.kvtier.engine.client.RequestStatus}, {@link io.kvtier.engine.client.PageStatus}), and
 * {@link io.kvtier.engine.client.ClientPort}, the seam between a client's handle and the engine: the
 * in-process {@code Session} is one, and a shared-memory client's adapter will be another.
 */
package io.kvtier.engine.client;
