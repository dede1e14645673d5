package io.kvtier.engine.operations;

import io.kvtier.engine.status.EngineCounter;

/**
 * Why a page a migration or a backup considered was not admitted to a tier. Each has a counter; in
 * {@code admission.mode = shadow} a page is counted under its reason and let through.
 */
public enum AdmissionReason
{
    /** A migration of the page is already running. */
    ALREADY_MIGRATING(EngineCounter.ADMISSION_ALREADY_MIGRATING),
    /** The target tier already holds the page. */
    TARGET_HOLDS(EngineCounter.ADMISSION_TARGET_HOLDS),
    /** A write of the page to the target tier is in flight. */
    TARGET_WRITING(EngineCounter.ADMISSION_TARGET_WRITING),
    /** The source tier no longer holds the page. */
    SOURCE_MISSING(EngineCounter.ADMISSION_SOURCE_MISSING),
    /** The page is pinned or being written in the pool. */
    POOL_BUSY(EngineCounter.ADMISSION_POOL_BUSY),
    /** The target tier is at its high water level. */
    TARGET_FULL(EngineCounter.ADMISSION_TARGET_FULL),
    /** The migration's rate limit is spent for now. */
    RATE_LIMITED(EngineCounter.ADMISSION_RATE_LIMITED),
    /** The target tier's write budget is spent for now. */
    WRITE_BUDGET_SPENT(EngineCounter.ADMISSION_WRITE_BUDGET_SPENT),
    /** The page was used more recently than the migration's minimum age. */
    TOO_YOUNG(EngineCounter.ADMISSION_TOO_YOUNG),
    /** The target tier is out of service. */
    TARGET_OUT_OF_SERVICE(EngineCounter.ADMISSION_TARGET_OUT_OF_SERVICE);

    private final EngineCounter counter;

    AdmissionReason(final EngineCounter counter)
    {
        this.counter = counter;
    }

    /** @return the counter of pages refused (or passed in shadow mode) for this reason */
    public EngineCounter counter()
    {
        return counter;
    }

    /** @return the name as JSON, logs and metric labels spell it */
    public String label()
    {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
