/**
 * Engine settings: each declared once, typed, in {@link io.kvtier.engine.config.EngineSettings} (key,
 * default or derived default, allowed range, meaning), from which parsing, validation messages naming
 * the key, the value and what is allowed, and the table of {@code docs/config.md} all come; the
 * {@code key = value} file format; and {@link io.kvtier.engine.config.EngineConfig}, the validated whole.
 */
package io.kvtier.engine.config;
