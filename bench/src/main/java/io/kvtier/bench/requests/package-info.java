/**
 * {@code kvtier bench requests}: one inference request's round trips to the engine, the five fine-grained
 * requests against protocol 1.3's two combined ones, interleaved in one run, in process and over IPC.
 */
package io.kvtier.bench.requests;
