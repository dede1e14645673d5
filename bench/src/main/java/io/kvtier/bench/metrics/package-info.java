/** What serving the engine's metrics costs the engine thread. */
package io.kvtier.bench.metrics;
