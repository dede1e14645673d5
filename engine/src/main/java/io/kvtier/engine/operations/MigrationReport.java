package io.kvtier.engine.operations;

import java.time.Instant;
import java.util.Map;

/**
 * A migration's progress: the engine's own (a tier past its trigger) or one an operator asked for.
 *
 * @param id         its id, unique while the engine runs
 * @param origin     {@code strategy} (the source tier's trigger) or {@code admin}
 * @param state      {@code running}, {@code done}, {@code dry-run} or {@code failed}
 * @param source     the source tier
 * @param target     the target tier
 * @param method     copy, mark or both
 * @param retention  move or keep-source
 * @param considered pages it considered
 * @param admitted   pages admission let through
 * @param copied     pages copied and recorded for the target
 * @param marked     pages marked for the target
 * @param failed     copies that failed (the page stays where it was)
 * @param bytes      bytes copied
 * @param refusals   pages refused, by {@link AdmissionReason#label()} (in shadow mode: counted, not refused)
 * @param started    when it started
 * @param ended      when it ended, or {@code null} while it runs
 * @param message    why it failed, or {@code null}
 */
public record MigrationReport(long id, String origin, String state, String source, String target, MigrationMethod method, Retention retention,
                              long considered, long admitted, long copied, long marked, long failed, long bytes, Map<String, Long> refusals,
                              Instant started, Instant ended, String message)
{
    /** Copies the refusals. */
    public MigrationReport
    {
        refusals = Map.copyOf(refusals);
    }
}
