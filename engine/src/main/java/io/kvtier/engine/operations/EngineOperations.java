package io.kvtier.engine.operations;

import java.util.List;
import java.util.Optional;

/**
 * An operator's calls on a running engine. Every call is safe from any thread and waits for the engine
 * thread to carry it out (at most a few ticks); one that names something the engine does not know (a tier,
 * a key, a namespace) or breaks a rule throws {@link OperationException} naming the field, and changes
 * nothing.
 */
public interface EngineOperations
{
    /** @return every L3 tier, in configuration order, with its usage, water levels and counters */
    List<TierReport> tiers();

    /**
     * Starts a migration, or with {@link MigrateRequest#dryRun()} answers what it would admit and why not.
     *
     * @param request what to move, from where to where, and how
     * @return the migration's report (for a dry run, final at once)
     * @throws OperationException when the request names an unknown tier or breaks a rule
     */
    MigrationReport migrate(MigrateRequest request);

    /**
     * @param id a migration's id
     * @return its report, while the engine remembers it (the most recent migrations are kept)
     */
    Optional<MigrationReport> migration(long id);

    /** @return the migrations the engine remembers, the newest first */
    List<MigrationReport> migrations();

    /**
     * Removes pages from an L3 tier.
     *
     * @param request which pages from which tier
     * @return what was removed and what was not, by reason
     * @throws OperationException when the request names an unknown tier or breaks a rule
     */
    EvictReport evict(EvictRequest request);

    /**
     * Marks pages, chains or a namespace for a tier: their backups go straight to it until the mark expires.
     *
     * @param request what to mark, for which tier, for how long
     * @return the mark
     * @throws OperationException when the request names an unknown tier or breaks a rule
     */
    MarkReport mark(MarkRequest request);

    /** @return the marks in force */
    List<MarkReport> marks();

    /**
     * Drops a mark before it expires.
     *
     * @param id the mark's id
     * @return whether a mark of that id was in force
     */
    boolean unmark(long id);

    /** @return whether the engine is live and ready, with the reason when it is not */
    Health health();
}
