package io.kvtier.engine.operations;

import io.kvtier.spi.PageKey;

import java.time.Duration;
import java.util.List;

/**
 * A mark an operator asks for: the given pages (a chain is its pages' keys) or a whole namespace are
 * backed up straight to a tier until the mark expires. Exactly one of {@code keys} and {@code namespace}
 * is given.
 *
 * @param tier      the tier their backups go to
 * @param keys      the pages' keys, or empty for a namespace
 * @param namespace the namespace tag, or 0 when keys are given
 * @param ttl       how long the mark lasts, more than zero
 */
public record MarkRequest(String tier, List<PageKey> keys, long namespace, Duration ttl)
{
    /** Copies the keys. */
    public MarkRequest
    {
        keys = List.copyOf(keys);
    }
}
