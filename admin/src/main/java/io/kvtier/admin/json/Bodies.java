package io.kvtier.admin.json;

import java.util.List;

/**
 * The JSON bodies the admin API takes, as Jackson binds them (field names in snake_case, docs/admin-api.md).
 * Every field is boxed so that an absent one is {@code null} and gets its documented default; {@link Json}
 * turns them into the engine's requests, refusing what is malformed with the field named.
 */
public final class Bodies
{
    private Bodies()
    {
    }

    /**
     * {@code POST /v1/migrate}.
     *
     * @param source    the tier to move pages from (required)
     * @param target    the tier to move them to (required)
     * @param keys      explicit page keys, 32 hex digits each; absent or empty for the sampling rule
     * @param namespace the sampling rule's namespace: a root (32 hex digits) or a tag (16)
     * @param minAge    the sampling rule's minimum age, a duration such as 30s
     * @param fraction  the sampling rule's share of the matching pages, in (0, 1]
     * @param limit     the most pages to take, at least 1
     * @param method    copy, mark or both
     * @param retention move or keep-source
     * @param dryRun    answer what would be admitted and why not, and change nothing
     */
    public record Migrate(String source, String target, List<String> keys, String namespace, String minAge, Double fraction, Integer limit,
                          String method, String retention, Boolean dryRun)
    {
    }

    /**
     * {@code POST /v1/evict}.
     *
     * @param tier      the tier (required)
     * @param keys      explicit page keys; absent or empty to take the coldest
     * @param namespace the namespace the coldest pages must be stored under: a root or a tag
     * @param limit     the most pages to remove, at least 1
     * @param dryRun    answer what would be removed, and change nothing
     */
    public record Evict(String tier, List<String> keys, String namespace, Integer limit, Boolean dryRun)
    {
    }

    /**
     * {@code POST /v1/marks}: exactly one of {@code keys} and {@code namespace}.
     *
     * @param tier      the tier the pages' backups go to (required)
     * @param keys      the pages' keys
     * @param namespace a whole namespace: a root or a tag
     * @param ttl       how long the mark lasts, a duration above zero such as 1h (required)
     */
    public record Mark(String tier, List<String> keys, String namespace, String ttl)
    {
    }
}
