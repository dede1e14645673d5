package io.kvtier.bench.replay;

import java.io.IOException;

/**
 * A trace line that is not a valid Mooncake request. The message reads
 * {@code source:line:column: field "name": what is wrong}, like a compiler diagnostic, so a user can jump
 * to it; the column counts bytes from 1, and {@link #byteOffset()} locates the same byte in the file for
 * tools such as {@code xxd}.
 */
public final class TraceFormatException extends IOException
{
    private static final long serialVersionUID = 1L;

    private final String source;
    private final long lineNumber;
    private final long column;
    private final long byteOffset;
    private final String field;

    /**
     * @param source     the trace's name, usually its path
     * @param lineNumber the 1-based line
     * @param column     the 1-based byte position within the line where the problem is
     * @param byteOffset the 0-based position of that byte in the file
     * @param field      the offending field, or {@code null} when the line as a whole is bad
     * @param detail     what is wrong
     */
    public TraceFormatException(final String source, final long lineNumber, final long column, final long byteOffset, final String field,
        final String detail)
    {
        super(source + ":" + lineNumber + ":" + column + ": " + (field == null ? "" : "field \"" + field + "\": ") + detail);
        this.source = source;
        this.lineNumber = lineNumber;
        this.column = column;
        this.byteOffset = byteOffset;
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

    /** @return the 1-based byte position within the line */
    public long column()
    {
        return column;
    }

    /** @return the 0-based position of the offending byte in the file */
    public long byteOffset()
    {
        return byteOffset;
    }

    /** @return the offending field, or {@code null} when the line as a whole is bad */
    public String field()
    {
        return field;
    }
}
