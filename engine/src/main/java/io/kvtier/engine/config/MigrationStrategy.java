package io.kvtier.engine.config;

import io.kvtier.engine.operations.MigrationMethod;
import io.kvtier.engine.operations.Retention;

import java.time.Duration;

/**
 * A source tier's migration strategy, from its {@code migration.<source>.*} settings: when the source's
 * fill passes {@code trigger}, its coldest pages older than {@code minAge} move to {@code target}.
 *
 * @param source      the source tier
 * @param target      the target tier
 * @param trigger     the source's fill above which the migration runs, below the source's eviction level
 * @param method      copy, mark or both
 * @param retention   move or keep-source
 * @param batch       pages chosen at a time
 * @param minAge      least time since a page was last used before it may move
 * @param rateBytes   most bytes copied per second
 * @param concurrency most copies in flight at once
 * @param markTtl     how long a mark lasts, more than zero
 */
public record MigrationStrategy(String source, String target, double trigger, MigrationMethod method, Retention retention, int batch,
                                Duration minAge, long rateBytes, int concurrency, Duration markTtl)
{
    /** @return the strategy in one line, for logs and the admin API */
    public String describe()
    {
        return method.label() + " to " + target + " above " + Math.round(trigger * 100) + "% (" + retention.label() + ", batch " + batch
            + ", min-age " + minAge.toMillis() + "ms, rate " + io.kvtier.spi.ConfigValues.formatSize(rateBytes) + "/s, concurrency "
            + concurrency + ", mark-ttl " + markTtl.toMillis() + "ms)";
    }
}
