package io.kvtier.bench.replay;

import java.io.IOException;

/**
 * A trace line that is not a valid Mooncake request. The message reads
 * {@code source:line: field "name": what is wrong}, like a compiler diagnostic, so a user can jump to it.
 */
public final class TraceFormatException extends IOException
{
    private static final long serialVersionUID = 1L;

    private final String source;
    private final long lineNumber;
    private final String field;

    /**
     * @param source     the trace's name, usually its path
     * @param lineNumber the 1-based line
     * @param field      the offending field, or {@code null} when the line as a whole is bad
     * @param detail     what is wrong
     * @param cause      the parser's exception, or {@code null}
     */
    public TraceFormatException(final String source, final long lineNumber, final String field, final String detail, final Throwable cause)
    {
        super(source + ":" + lineNumber + ": " + (field == null ? "" : "field \"" + field + "\": ") + detail, cause);
        this.source = source;
        this.lineNumber = lineNumber;
        this.field = field;
    }

    /** @return the trace's name */
    public String source()
    {
        return source;
    }

    /** @return the 1-based line number */
    public long lineNumber()
    {
        return lineNumber;
    }

    /** @return the offending field, or {@code null} when the line as a whole is bad */
    public String field()
    {
        return field;
    }
}
