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
 * @param evictHigh     the fill above which the tier evicts by itself, the level at which it is full for backups and
 *                      migrations; {@code null} when it does not evict by itself
 * @param evictLow      the fill it evicts down to, or {@code null}
 * @param fill          used bytes over capacity, 0 when the capacity is unknown
 * @param migration     its migration strategy in words, or {@code null} when it has none
 * @param counters      its counters by name: hits, misses, errors, bytes_read, bytes_written, evictions, and
 *                      write_budget_available_bytes when it has a write budget
 */
public record TierReport(String name, String type, String state, long usedBytes, long capacityBytes, long objects, Double evictHigh,
                         Double evictLow, double fill, String migration, Map<String, Long> counters)
{
    /** Copies the counters. */
    public TierReport
    {
        counters = Map.copyOf(counters);
    }
}
