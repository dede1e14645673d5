package io.kvtier.engine.operations;

import java.util.Map;

/**
 * What an eviction did.
 *
 * @param tier     the tier
 * @param removed  pages removed (for a dry run, pages that would be)
 * @param refusals pages not removed, by reason ({@code not_held}: the tier does not hold it;
 *                 {@code migrating}: a migration is copying it; {@code backing_up}: a backup is writing it)
 * @param dryRun   whether nothing changed
 */
public record EvictReport(String tier, long removed, Map<String, Long> refusals, boolean dryRun)
{
    /** Copies the refusals. */
    public EvictReport
    {
        refusals = Map.copyOf(refusals);
    }
}
