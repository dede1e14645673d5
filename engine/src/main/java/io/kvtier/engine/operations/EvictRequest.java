package io.kvtier.engine.operations;

import io.kvtier.spi.PageKey;

import java.util.List;

/**
 * Pages an operator wants out of an L3 tier: explicit keys, or the coldest pages the engine knows the
 * tier holds (of one namespace, or any).
 *
 * @param tier      the tier
 * @param keys      explicit keys (empty to take the coldest)
 * @param namespace the namespace tag the coldest pages must be stored under, or 0 for any
 * @param limit     the most pages to remove, at least 1
 * @param dryRun    answer what would be removed, and change nothing
 */
public record EvictRequest(String tier, List<PageKey> keys, long namespace, int limit, boolean dryRun)
{
    /** Copies the keys. */
    public EvictRequest
    {
        keys = List.copyOf(keys);
    }
}
