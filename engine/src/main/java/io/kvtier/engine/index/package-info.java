/**
 * The key index: for every key the engine knows, the pool page holding it (if any) and the L3 tiers
 * holding it, in a {@link io.kvtier.collections.KeyTable} inside the pool file.
 */
package io.kvtier.engine.index;
