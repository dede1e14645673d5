package io.kvtier.admin.json;

import io.kvtier.engine.operations.EvictReport;
import io.kvtier.engine.operations.Health;
import io.kvtier.engine.operations.MarkReport;
import io.kvtier.engine.operations.MigrationReport;
import io.kvtier.engine.operations.TierReport;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The JSON the admin API answers, as Jackson writes it (snake_case; docs/admin-api.md). The engine's
 * reports are turned into these rather than written directly, so that the wire format spells enums,
 * instants, namespace tags and "no capacity" the documented way whatever the records hold.
 */
public final class Answers
{
    private Answers()
    {
    }

    /**
     * A refusal or a failure.
     *
     * @param error what was wrong and what is allowed
     * @param field the request's field that was wrong, or {@code null}
     */
    public record Error(String error, String field)
    {
    }

    /**
     * One L3 tier.
     *
     * @param name          its name
     * @param type          its plugin's type
     * @param state         in-service, stuck or out-of-service
     * @param usedBytes     bytes in use
     * @param capacityBytes its capacity, or {@code null} when it sets none
     * @param objects       objects it holds
     * @param evictHigh     the fill above which the tier evicts by itself, at which it is full for backups and
     *                      migrations; {@code null} when it does not evict by itself
     * @param evictLow      the fill it evicts down to, or {@code null}
     * @param fill          used bytes over capacity, 0 when the capacity is unknown
     * @param migration     its migration strategy in words, or {@code null}
     * @param counters      its counters by name, sorted
     */
    public record Tier(String name, String type, String state, long usedBytes, Long capacityBytes, long objects, Double evictHigh,
                      Double evictLow, double fill, String migration, Map<String, Long> counters)
    {
        static Tier of(final TierReport report)
        {
            return new Tier(report.name(), report.type(), report.state(), report.usedBytes(),
                report.capacityBytes() == Long.MAX_VALUE ? null : report.capacityBytes(), report.objects(), report.evictHigh(),
                report.evictLow(), report.fill(), report.migration(), new TreeMap<>(report.counters()));
        }
    }

    /**
     * {@code GET /v1/tiers}.
     *
     * @param tiers every L3 tier, in configuration order
     */
    public record Tiers(List<Tier> tiers)
    {
        /**
         * @param reports the engine's reports
         * @return the answer
         */
        public static Tiers of(final List<TierReport> reports)
        {
            return new Tiers(reports.stream().map(Tier::of).toList());
        }
    }

    /**
     * One migration's progress.
     *
     * @param id         its id
     * @param origin     strategy or admin
     * @param state      running, done, dry-run or failed
     * @param source     the source tier
     * @param target     the target tier
     * @param method     copy, mark or both
     * @param retention  move or keep-source
     * @param considered pages considered
     * @param admitted   pages admitted
     * @param copied     pages copied and recorded for the target
     * @param marked     pages marked for the target
     * @param failed     copies that failed
     * @param bytes      bytes copied
     * @param refusals   pages refused, by admission reason, sorted
     * @param started    when it started, ISO-8601
     * @param ended      when it ended, ISO-8601, or {@code null} while it runs
     * @param message    why it failed, or {@code null}
     */
    public record Migration(long id, String origin, String state, String source, String target, String method, String retention,
                           long considered, long admitted, long copied, long marked, long failed, long bytes, Map<String, Long> refusals,
                           String started, String ended, String message)
    {
        /**
         * @param report the engine's report
         * @return the answer
         */
        public static Migration of(final MigrationReport report)
        {
            return new Migration(report.id(), report.origin(), report.state(), report.source(), report.target(),
                report.method() == null ? null : report.method().label(), report.retention() == null ? null : report.retention().label(),
                report.considered(), report.admitted(), report.copied(), report.marked(), report.failed(), report.bytes(),
                new TreeMap<>(report.refusals()), text(report.started()), text(report.ended()), report.message());
        }
    }

    /**
     * {@code GET /v1/migrations}.
     *
     * @param migrations the migrations the engine remembers, the newest first
     */
    public record Migrations(List<Migration> migrations)
    {
        /**
         * @param reports the engine's reports
         * @return the answer
         */
        public static Migrations of(final List<MigrationReport> reports)
        {
            return new Migrations(reports.stream().map(Migration::of).toList());
        }
    }

    /**
     * {@code POST /v1/evict}.
     *
     * @param tier     the tier
     * @param removed  pages removed (for a dry run, that would be)
     * @param refusals pages not removed, by reason, sorted
     * @param dryRun   whether nothing changed
     */
    public record Evict(String tier, long removed, Map<String, Long> refusals, boolean dryRun)
    {
        /**
         * @param report the engine's report
         * @return the answer
         */
        public static Evict of(final EvictReport report)
        {
            return new Evict(report.tier(), report.removed(), new TreeMap<>(report.refusals()), report.dryRun());
        }
    }

    /**
     * A mark in force.
     *
     * @param id        its id
     * @param tier      the tier its pages' backups go to
     * @param pages     pages it names (0 for a namespace mark)
     * @param namespace the namespace tag it names, 16 hex digits, or {@code null}
     * @param origin    admin, or migration &lt;id&gt;
     * @param expires   when it expires, ISO-8601
     */
    public record Mark(long id, String tier, long pages, String namespace, String origin, String expires)
    {
        /**
         * @param report the engine's report
         * @return the answer
         */
        public static Mark of(final MarkReport report)
        {
            return new Mark(report.id(), report.tier(), report.pages(), report.namespace() == 0 ? null : Namespaces.tagText(report.namespace()),
                report.origin(), text(report.expires()));
        }
    }

    /**
     * {@code GET /v1/marks}.
     *
     * @param marks the marks in force
     */
    public record Marks(List<Mark> marks)
    {
        /**
         * @param reports the engine's reports
         * @return the answer
         */
        public static Marks of(final List<MarkReport> reports)
        {
            return new Marks(reports.stream().map(Mark::of).toList());
        }
    }

    /**
     * {@code DELETE /v1/marks/{id}}.
     *
     * @param id      the mark's id
     * @param removed true: it was in force and is dropped
     */
    public record Unmarked(long id, boolean removed)
    {
    }

    /**
     * {@code GET /health}.
     *
     * @param live   whether the engine thread runs
     * @param ready  whether the engine takes requests with every tier in service
     * @param reason why not, or {@code null}
     */
    public record HealthAnswer(boolean live, boolean ready, String reason)
    {
        /**
         * @param health the engine's answer
         * @return the answer
         */
        public static HealthAnswer of(final Health health)
        {
            return new HealthAnswer(health.live(), health.ready(), health.reason());
        }
    }

    private static String text(final Instant instant)
    {
        return instant == null ? null : instant.toString();
    }
}
