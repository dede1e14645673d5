package io.kvtier.engine.operations;

/** How a migration moves pages to its target tier. */
public enum MigrationMethod
{
    /** Read each page from the source, verify it, write it to the target, then record it there. */
    COPY,
    /** Mark the pages for the target: their next backups go straight to it. */
    MARK,
    /** Copy, and mark every page whose copy was refused at admission or could not be submitted. */
    BOTH;

    /**
     * @param text {@code copy}, {@code mark} or {@code both}, any case
     * @return the method
     * @throws IllegalArgumentException naming the allowed values
     */
    public static MigrationMethod parse(final String text)
    {
        for (final MigrationMethod method : values())
        {
            if (method.name().equalsIgnoreCase(text))
            {
                return method;
            }
        }
        throw new IllegalArgumentException("expected one of copy, mark, both");
    }

    /** @return the name as configs and JSON spell it */
    public String label()
    {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
