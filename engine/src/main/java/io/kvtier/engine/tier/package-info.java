/**
 * Finding and starting L3 tiers: {@link java.util.ServiceLoader} providers matched to the
 * {@code tier.<name>.type} settings, in configuration order.
 */
package io.kvtier.engine.tier;
