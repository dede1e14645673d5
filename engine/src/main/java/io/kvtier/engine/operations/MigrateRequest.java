package io.kvtier.engine.operations;

import io.kvtier.spi.PageKey;

import java.time.Duration;
import java.util.List;

/**
 * A migration an operator asks for: either explicit page keys, or a sampling rule over the keys the
 * engine knows its source tier holds (a namespace, a minimum age, a fraction, a limit).
 *
 * @param source    the tier to move pages from
 * @param target    the tier to move them to
 * @param keys      explicit keys (empty for the sampling rule)
 * @param namespace the namespace tag the sampled pages must be stored under, or 0 for any
 * @param minAge    the least time since a sampled page was last used
 * @param fraction  the share of the matching pages to take, in (0, 1]
 * @param limit     the most pages to take, at least 1
 * @param method    copy, mark or both
 * @param retention move or keep-source (copy and both only)
 * @param dryRun    answer what would be admitted and why not, and change nothing
 */
public record MigrateRequest(String source, String target, List<PageKey> keys, long namespace, Duration minAge, double fraction, int limit,
                             MigrationMethod method, Retention retention, boolean dryRun)
{
    /** Copies the keys. */
    public MigrateRequest
    {
        keys = List.copyOf(keys);
    }
}
