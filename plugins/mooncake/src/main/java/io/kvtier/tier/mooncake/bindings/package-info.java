/**
 * Bindings of Mooncake Store's C ABI ({@code store_c.h}, all 19 functions), in the shape jextract
 * generates (plugins/mooncake/scripts/gen-bindings.py): {@code store_c_h} holds the functions, each
 * looked up on first use; one class per struct. Only {@link io.kvtier.tier.mooncake.MooncakeStore}
 * calls them: it binds the library first ({@link io.kvtier.tier.mooncake.MooncakeLibrary}) and turns
 * return codes into statuses and exceptions.
 */
package io.kvtier.tier.mooncake.bindings;
