/**
 * Engine settings: the {@code key = value} file format of {@code docs/config.md}, every setting's
 * default and allowed range, and validation that names the key, the value and what is allowed.
 */
package io.kvtier.engine.config;
