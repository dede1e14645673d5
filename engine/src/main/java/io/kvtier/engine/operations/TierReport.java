package io.kvtier.engine.operations;

import java.util.Map;

/**
 * One L3 tier as an operator sees it.
 *
 * @param name          its name in the config
 * @param type          its plugin's type
 * @param state         {@code in-service}, {@code stuck} or {@code out-of-service}
 * @param usedBytes     bytes it reports in use
 * @param capacityBytes its capacity, or {@link Long#MAX_VALUE} when it sets none
 * @param objects       objects it reports holding
 * @param evictHigh     the fill above which the engine removes its coldest pages
 * @param evictLow      the fill the engine removes them down to
 * @param migration     its migration strategy in words, or {@code null} when it has none
 * @param counters      its counters by name: hits, misses, errors, bytes_read, bytes_written, evictions,
 *                      and pages_known (the keys the engine's index knows it holds)
 */
public record TierReport(String name, String type, String state, long usedBytes, long capacityBytes, long objects, double evictHigh,
                         double evictLow, String migration, Map<String, Long> counters)
{
    /** Copies the counters. */
    public TierReport
    {
        counters = Map.copyOf(counters);
    }
}
