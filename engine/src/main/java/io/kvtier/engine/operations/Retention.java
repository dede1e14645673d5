package io.kvtier.engine.operations;

/** What a copy leaves in its source tier. */
public enum Retention
{
    /** The source's copy is removed once the target's is recorded. */
    MOVE,
    /** The source keeps its copy; the source's own eviction reclaims it later. */
    KEEP_SOURCE;

    /**
     * @param text {@code move} or {@code keep-source}, any case
     * @return the retention
     * @throws IllegalArgumentException naming the allowed values
     */
    public static Retention parse(final String text)
    {
        if ("move".equalsIgnoreCase(text))
        {
            return MOVE;
        }
        if ("keep-source".equalsIgnoreCase(text))
        {
            return KEEP_SOURCE;
        }
        throw new IllegalArgumentException("expected one of move, keep-source");
    }

    /** @return the name as configs and JSON spell it */
    public String label()
    {
        return this == MOVE ? "move" : "keep-source";
    }
}
