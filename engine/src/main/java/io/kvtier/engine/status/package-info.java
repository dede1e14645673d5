/**
 * Engine counters, kept in the pool file's counters region so any process that maps the pool can
 * read them, and a snapshot type for reports.
 */
package io.kvtier.engine.status;
