package io.kvtier.engine.core;

import io.kvtier.engine.EngineClock;
import io.kvtier.engine.config.AdmissionMode;
import io.kvtier.engine.operations.AdmissionReason;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;

/**
 * Admission's verdicts: a page a backup or a migration considered is admitted, or named with the first
 * reason that refuses it, counted under that reason ({@code admission_reason_<reason>}) and logged at
 * most every 10 s per reason with the count since, so that an operator can tell why nothing moves. In
 * {@code admission.mode = shadow} the page is counted and logged the same and admitted anyway
 * ({@code admission_shadow_passed}). Engine thread only; allocates nothing but the log lines.
 */
final class Admission
{
    private static final System.Logger LOG = System.getLogger(Admission.class.getName());
    private static final long LOG_PERIOD_NS = 10_000_000_000L;
    private static final AdmissionReason[] REASONS = AdmissionReason.values();

    private final EngineCounters counters;
    private final EngineClock clock;
    private final boolean shadow;
    private final long[] lastLoggedNanos = new long[REASONS.length];
    private final long[] sinceLogged = new long[REASONS.length];
    private final boolean[] everLogged = new boolean[REASONS.length];

    /**
     * @param counters the engine's counters
     * @param clock    the engine clock
     * @param mode     enforce or shadow
     */
    Admission(final EngineCounters counters, final EngineClock clock, final AdmissionMode mode)
    {
        this.counters = counters;
        this.clock = clock;
        this.shadow = mode == AdmissionMode.SHADOW;
    }

    /** @return whether refusals are only counted */
    boolean shadow()
    {
        return shadow;
    }

    /** Counts a page admitted with no reason against it. */
    void admitted()
    {
        counters.increment(EngineCounter.ADMISSION_ADMITTED);
    }

    /**
     * Counts and logs a reason against a page, and says whether it is refused.
     *
     * @param reason what refuses it
     * @param what   what considered it, for the log: "backup to nvme", "migration 3 (nvme to shared)"
     * @return true when the page is refused, false in shadow mode (counted, let through)
     */
    boolean refuse(final AdmissionReason reason, final String what)
    {
        counters.increment(reason.counter());
        final int r = reason.ordinal();
        sinceLogged[r]++;
        final long now = clock.nanoTime();
        if (!everLogged[r] || now - lastLoggedNanos[r] >= LOG_PERIOD_NS)
        {
            LOG.log(System.Logger.Level.INFO, "admission{0}: {1} page(s) {2} for reason {3} since the last report (latest: {4}); counted in"
                + " admission_reason_{3}", shadow ? " (shadow mode: counted, not refused)" : "", sinceLogged[r], shadow ? "would be refused"
                : "refused", reason.label(), what);
            everLogged[r] = true;
            lastLoggedNanos[r] = now;
            sinceLogged[r] = 0;
        }
        if (shadow)
        {
            counters.increment(EngineCounter.ADMISSION_SHADOW_PASSED);
            return false;
        }
        return true;
    }
}
