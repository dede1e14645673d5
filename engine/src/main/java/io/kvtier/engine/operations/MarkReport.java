package io.kvtier.engine.operations;

import java.time.Instant;

/**
 * A mark in force.
 *
 * @param id        its id, for {@link EngineOperations#unmark}
 * @param tier      the tier its pages' backups go to
 * @param pages     pages it names (0 for a namespace mark)
 * @param namespace the namespace tag it names, or 0
 * @param origin    {@code admin}, or {@code migration <id>} for the pages a migration marked
 * @param expires   when it expires
 */
public record MarkReport(long id, String tier, long pages, long namespace, String origin, Instant expires)
{
}
