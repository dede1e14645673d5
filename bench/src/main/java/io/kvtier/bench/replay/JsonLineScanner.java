package io.kvtier.bench.replay;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The JSON of one trace line, checked and skipped in place, byte by byte: a cursor over
 * {@code buffer[lineStart, lineEnd)} that reads the integers and field names {@link TraceReader} wants,
 * checks every other value it skips (RFC 8259 in UTF-8, RFC 3629: no overlong forms, no surrogates), and
 * words every error with the line, the byte column and the byte's offset in the file. It knows JSON, not
 * the trace's schema: which fields a request needs is {@link TraceReader}'s. Kept apart from the schema
 * because the checking is most of the code and none of it changes when the schema does. Reused for every
 * line, so scanning allocates nothing until an error is worded. Not thread-safe.
 */
final class JsonLineScanner
{
    /** The index of a value that is not an element of an array. */
    static final int NO_INDEX = -1;

    /** As deep as Jackson's default nesting limit, so a pathological skipped field cannot exhaust the stack. */
    private static final int MAX_DEPTH = 1000;

    private static final long MAX_TENTH = Long.MAX_VALUE / 10;
    private static final int MAX_LAST_DIGIT = (int)(Long.MAX_VALUE % 10);

    private final String source;
    private byte[] buffer;
    private long bufferOffset;
    private long lineNumber;
    private int lineStart;
    private int lineEnd;
    private int cursor;

    /**
     * @param source the trace's name for error messages, usually its path
     */
    JsonLineScanner(final String source)
    {
        this.source = source;
    }

    /**
     * Starts on a line, the cursor on its first byte.
     *
     * @param buffer       the bytes that hold it
     * @param lineStart    where it starts in {@code buffer}
     * @param lineEnd      where it ends, its line feed excluded
     * @param lineNumber   its 1-based number, for errors
     * @param bufferOffset the position in the file of {@code buffer}'s first byte, for errors
     */
    void line(final byte[] buffer, final int lineStart, final int lineEnd, final long lineNumber, final long bufferOffset)
    {
        this.buffer = buffer;
        this.lineStart = lineStart;
        this.lineEnd = lineEnd;
        this.lineNumber = lineNumber;
        this.bufferOffset = bufferOffset;
        cursor = lineStart;
    }

    /** @return where the cursor is in the buffer */
    int position()
    {
        return cursor;
    }

    /** Moves the cursor past the byte it is on, which the caller has looked at with {@link #peek()}. */
    void advance()
    {
        cursor++;
    }

    /** @return whether the cursor is past the line's last byte */
    boolean atEndOfLine()
    {
        return cursor >= lineEnd;
    }

    /**
     * Reads the field name at the cursor, which is on its opening quote, and says which of
     * {@code names} it spells; a name spelled with escapes is decoded first, so it matches as JSON says.
     *
     * @param names the names looked for, as ASCII bytes
     * @return the index of the name in {@code names}, or -1 for any other name
     * @throws TraceFormatException if the string is not valid JSON
     */
    int fieldName(final byte[][] names) throws TraceFormatException
    {
        final int start = cursor + 1;
        skipString();
        final int end = cursor - 1;
        for (int field = 0; field < names.length; field++)
        {
            if (Arrays.equals(buffer, start, end, names[field], 0, names[field].length))
            {
                return field;
            }
        }
        for (int i = start; i < end; i++)
        {
            if (buffer[i] == '\\')
            {
                // A name spelled with escapes is rare enough to decode the slow way.
                final String name = decodeString(start, end);
                for (int field = 0; field < names.length; field++)
                {
                    if (name.equals(new String(names[field], StandardCharsets.US_ASCII)))
                    {
                        return field;
                    }
                }
                return -1;
            }
        }
        return -1;
    }

    /**
     * Reads the non-negative integer at the cursor and moves past it.
     *
     * @param field the field it is the value of, for errors
     * @param index its index in that field's array, or {@link #NO_INDEX} when the field is not an array
     * @return the value
     * @throws TraceFormatException if it is not a non-negative integer that fits in 64 bits
     */
    long nonNegativeLong(final String field, final int index) throws TraceFormatException
    {
        final int start = cursor;
        int at = cursor;
        final boolean negative = at < lineEnd && buffer[at] == '-';
        if (negative)
        {
            at++;
        }
        if (at >= lineEnd || !isDigit(buffer[at]))
        {
            if (negative)
            {
                throw malformed(at, "expected a digit after '-', found " + found(at));
            }
            throw notExpected(name(field, index), "a non-negative integer");
        }
        long value = 0;
        boolean overflow = false;
        final int digits = at;
        while (at < lineEnd && isDigit(buffer[at]))
        {
            final int digit = buffer[at] - '0';
            if (value >= MAX_TENTH && (value > MAX_TENTH || digit > MAX_LAST_DIGIT))
            {
                overflow = true;
            }
            value = value * 10 + digit;
            at++;
        }
        if (buffer[digits] == '0' && at - digits > 1)
        {
            throw malformed(digits, "a number must not start with the digit 0 followed by more digits");
        }
        if (at < lineEnd && (buffer[at] == '.' || buffer[at] == 'e' || buffer[at] == 'E'))
        {
            cursor = start;
            skipNumber();
            throw error(start, name(field, index), "expected a non-negative integer, found the non-integer " + text(start, cursor));
        }
        cursor = at;
        if (overflow)
        {
            throw error(start, name(field, index), text(start, at) + " does not fit in 64 bits");
        }
        if (negative && value != 0)
        {
            throw error(start, name(field, index), "-" + value + " is negative; expected a non-negative integer");
        }
        return value;
    }

    /** @return how an error names the value: the field, or the field and the element's index */
    private static String name(final String field, final int index)
    {
        return index == NO_INDEX ? field : field + "[" + index + "]";
    }

    /** @return whether {@code b} is an ASCII digit */
    private static boolean isDigit(final byte b)
    {
        return b >= '0' && b <= '9';
    }

    /** Moves the cursor past spaces, tabs and carriage returns (a CRLF line's CR is whitespace before its end). */
    void skipWhitespace()
    {
        while (cursor < lineEnd)
        {
            final byte b = buffer[cursor];
            if (b != ' ' && b != '\t' && b != '\r')
            {
                return;
            }
            cursor++;
        }
    }

    /** @return the byte at the cursor, or -1 at the end of the line */
    int peek()
    {
        return cursor < lineEnd ? buffer[cursor] & 0xFF : -1;
    }

    /**
     * Skips any JSON value at the cursor, checking it.
     *
     * @param depth how deeply the value is nested, so a pathological one fails instead of exhausting the stack
     * @throws TraceFormatException if it is not valid JSON
     */
    void skipValue(final int depth) throws TraceFormatException
    {
        if (depth > MAX_DEPTH)
        {
            throw malformed(cursor, "values nested more than " + MAX_DEPTH + " deep");
        }
        final int c = peek();
        switch (c)
        {
            case '"' -> skipString();
            case '{' -> skipContainer(depth, '}', true);
            case '[' -> skipContainer(depth, ']', false);
            case 't' -> skipLiteral("true");
            case 'f' -> skipLiteral("false");
            case 'n' -> skipLiteral("null");
            default ->
            {
                if (c == '-' || (c >= '0' && c <= '9'))
                {
                    skipNumber();
                }
                else
                {
                    throw malformed(cursor, "expected a value, found " + found(cursor));
                }
            }
        }
    }

    /** Skips the object or array at the cursor, checking each member; {@code close} is the bracket that ends it. */
    private void skipContainer(final int depth, final char close, final boolean object) throws TraceFormatException
    {
        cursor++;
        skipWhitespace();
        if (peek() == close)
        {
            cursor++;
            return;
        }
        while (true)
        {
            skipWhitespace();
            if (object)
            {
                if (peek() != '"')
                {
                    throw malformed(cursor, "expected a field name in double quotes, found " + found(cursor));
                }
                skipString();
                skipWhitespace();
                if (peek() != ':')
                {
                    throw malformed(cursor, "expected ':' after the field name, found " + found(cursor));
                }
                cursor++;
                skipWhitespace();
            }
            skipValue(depth + 1);
            skipWhitespace();
            final int separator = peek();
            if (separator == close)
            {
                cursor++;
                return;
            }
            if (separator != ',')
            {
                throw malformed(cursor, "expected ',' or '" + close + "', found " + found(cursor));
            }
            cursor++;
        }
    }

    /** Skips {@code true}, {@code false} or {@code null} at the cursor, checking every byte of it. */
    private void skipLiteral(final String literal) throws TraceFormatException
    {
        for (int i = 0; i < literal.length(); i++)
        {
            if (cursor + i >= lineEnd || buffer[cursor + i] != literal.charAt(i))
            {
                throw malformed(cursor + i, "expected the literal " + literal + ", found " + found(cursor + i));
            }
        }
        cursor += literal.length();
    }

    /** Skips a number of any JSON form at the cursor. */
    private void skipNumber() throws TraceFormatException
    {
        int at = cursor;
        if (buffer[at] == '-')
        {
            at++;
        }
        final int integer = at;
        at = digits(at, "'-'");
        // The same rule as for the fields read: a skipped field's number is checked as strictly.
        if (buffer[integer] == '0' && at - integer > 1)
        {
            throw malformed(integer, "a number must not start with the digit 0 followed by more digits");
        }
        if (at < lineEnd && buffer[at] == '.')
        {
            at = digits(at + 1, "'.'");
        }
        if (at < lineEnd && (buffer[at] == 'e' || buffer[at] == 'E'))
        {
            at++;
            if (at < lineEnd && (buffer[at] == '+' || buffer[at] == '-'))
            {
                at++;
            }
            at = digits(at, "the exponent mark");
        }
        cursor = at;
    }

    /** @return the position after the digits at {@code from}, at least one of which must be there after {@code after} */
    private int digits(final int from, final String after) throws TraceFormatException
    {
        int at = from;
        while (at < lineEnd && isDigit(buffer[at]))
        {
            at++;
        }
        if (at == from)
        {
            throw malformed(at, "expected a digit after " + after + ", found " + found(at));
        }
        return at;
    }

    /** Skips a string at the cursor, which is on its opening quote, checking escapes and UTF-8. */
    private void skipString() throws TraceFormatException
    {
        int at = cursor + 1;
        while (true)
        {
            if (at >= lineEnd)
            {
                throw malformed(at, "the line ends inside a string that starts at column " + column(cursor));
            }
            final int b = buffer[at] & 0xFF;
            if (b == '"')
            {
                cursor = at + 1;
                return;
            }
            if (b == '\\')
            {
                at = escape(at);
            }
            else if (b < 0x20)
            {
                throw malformed(at, String.format("control character 0x%02x must be escaped inside a string", b));
            }
            else if (b < 0x80)
            {
                at++;
            }
            else
            {
                at += utf8Length(at);
            }
        }
    }

    /** @return the position after the escape sequence at {@code at} */
    private int escape(final int at) throws TraceFormatException
    {
        if (at + 1 >= lineEnd)
        {
            throw malformed(at, "the line ends inside an escape sequence");
        }
        switch (buffer[at + 1])
        {
            case '"', '\\', '/', 'b', 'f', 'n', 'r', 't' ->
            {
                return at + 2;
            }
            case 'u' ->
            {
                for (int i = at + 2; i < at + 6; i++)
                {
                    if (i >= lineEnd || Character.digit(buffer[i], 16) < 0)
                    {
                        throw malformed(i, "expected four hexadecimal digits after \\u, found " + found(i));
                    }
                }
                return at + 6;
            }
            default -> throw malformed(at + 1, "invalid escape sequence \\" + found(at + 1));
        }
    }

    /**
     * Checks the UTF-8 sequence that starts at {@code at} (RFC 3629: no overlong forms, no surrogates,
     * nothing above U+10FFFF).
     *
     * @return its length in bytes
     */
    private int utf8Length(final int at) throws TraceFormatException
    {
        final int lead = buffer[at] & 0xFF;
        final int length;
        int low = 0x80;
        int high = 0xBF;
        if (lead >= 0xC2 && lead <= 0xDF)
        {
            length = 2;
        }
        else if (lead >= 0xE0 && lead <= 0xEF)
        {
            length = 3;
            low = lead == 0xE0 ? 0xA0 : 0x80;
            high = lead == 0xED ? 0x9F : 0xBF;
        }
        else if (lead >= 0xF0 && lead <= 0xF4)
        {
            length = 4;
            low = lead == 0xF0 ? 0x90 : 0x80;
            high = lead == 0xF4 ? 0x8F : 0xBF;
        }
        else
        {
            throw invalidUtf8(at, String.format("invalid UTF-8 byte 0x%02x: no character starts with it", lead));
        }
        for (int i = 1; i < length; i++)
        {
            if (at + i >= lineEnd)
            {
                throw invalidUtf8(at + i, String.format("invalid UTF-8: the line ends inside the %d-byte sequence that starts with byte 0x%02x at column %d",
                    length, lead, column(at)));
            }
            final int next = buffer[at + i] & 0xFF;
            if (next < low || next > high)
            {
                throw invalidUtf8(at + i, String.format("invalid UTF-8 byte 0x%02x: the %d-byte sequence that starts with byte 0x%02x at column %d " +
                    "needs a byte from 0x%02x to 0x%02x here", next, length, lead, column(at), low, high));
            }
            low = 0x80;
            high = 0xBF;
        }
        return length;
    }

    /** @return an error for invalid UTF-8, which also gives the byte's offset in the file, since editors do not show such bytes */
    private TraceFormatException invalidUtf8(final int at, final String detail)
    {
        return error(at, null, detail + " (byte offset " + (bufferOffset + at) + " in the file)");
    }

    /** Decodes a checked string's contents, escapes included. */
    private String decodeString(final int start, final int end)
    {
        final StringBuilder decoded = new StringBuilder(end - start);
        int at = start;
        while (at < end)
        {
            if (buffer[at] != '\\')
            {
                final int from = at;
                while (at < end && buffer[at] != '\\')
                {
                    at++;
                }
                decoded.append(new String(buffer, from, at - from, StandardCharsets.UTF_8));
                continue;
            }
            final byte kind = buffer[at + 1];
            switch (kind)
            {
                case 'b' -> decoded.append('\b');
                case 'f' -> decoded.append('\f');
                case 'n' -> decoded.append('\n');
                case 'r' -> decoded.append('\r');
                case 't' -> decoded.append('\t');
                case 'u' -> decoded.append((char)Integer.parseInt(new String(buffer, at + 2, 4, StandardCharsets.US_ASCII), 16));
                default -> decoded.append((char)kind);
            }
            at += kind == 'u' ? 6 : 2;
        }
        return decoded.toString();
    }

    /**
     * @return a description of the JSON value that starts at {@code at}, or {@code null} if none does
     */
    String describeValue(final int at)
    {
        final int c = at < lineEnd ? buffer[at] & 0xFF : -1;
        return switch (c)
        {
            case '{' -> "an object";
            case '[' -> "an array";
            case '"' -> "a string";
            case 't', 'f' -> startsWith(at, c == 't' ? "true" : "false") ? "a boolean" : null;
            case 'n' -> startsWith(at, "null") ? "null" : null;
            default -> c == '-' || (c >= '0' && c <= '9') ? "a number" : null;
        };
    }

    /** @return whether the line holds {@code literal} at {@code at} */
    private boolean startsWith(final int at, final String literal)
    {
        if (at + literal.length() > lineEnd)
        {
            return false;
        }
        for (int i = 0; i < literal.length(); i++)
        {
            if (buffer[at + i] != literal.charAt(i))
            {
                return false;
            }
        }
        return true;
    }

    /**
     * The byte at the cursor is not what the grammar allows there: malformed JSON, saying what was expected.
     *
     * @param expected what the grammar allows, as "expected ..., found" words it
     * @return the error to throw
     * @throws TraceFormatException for invalid UTF-8 at the cursor, which is reported as such first
     */
    TraceFormatException unexpected(final String expected) throws TraceFormatException
    {
        return malformed(cursor, "expected " + expected + ", found " + found(cursor));
    }

    /**
     * The value at the cursor is not the kind the field needs: says what it is, or that it is not JSON.
     *
     * @param field    the field, or {@code null} when the value is the line itself
     * @param expected what the field needs, as "expected ..." words it
     * @return the error to throw
     * @throws TraceFormatException for invalid UTF-8 at the cursor, which is reported as such first
     */
    TraceFormatException notExpected(final String field, final String expected) throws TraceFormatException
    {
        final String what = describeValue(cursor);
        if (what == null)
        {
            return malformed(cursor, "expected " + expected + ", found " + found(cursor));
        }
        return error(cursor, field, "expected " + expected + ", found " + what);
    }

    /** @return the byte at {@code at} for a message, quoted, or "the end of the line" */
    String found(final int at) throws TraceFormatException
    {
        if (at >= lineEnd)
        {
            return "the end of the line";
        }
        final int b = buffer[at] & 0xFF;
        if (b >= 0x80)
        {
            final int length = utf8Length(at);
            return "'" + new String(buffer, at, length, StandardCharsets.UTF_8) + "'";
        }
        return b < 0x20 || b == 0x7F ? String.format("the control character 0x%02x", b) : "'" + (char)b + "'";
    }

    /** @return the line's bytes from {@code from} to {@code to}, decoded, for a message */
    private String text(final int from, final int to)
    {
        return new String(buffer, from, to - from, StandardCharsets.UTF_8);
    }

    /** @return the 1-based byte column of {@code at} in the line */
    long column(final int at)
    {
        return at - lineStart + 1L;
    }

    /** @return an error for a line that is not JSON at all, whatever the schema */
    private TraceFormatException malformed(final int at, final String detail)
    {
        return error(at, null, "malformed JSON: " + detail);
    }

    /**
     * @param at     where in the buffer the problem is
     * @param field  the field at fault, or {@code null} when the line as a whole is
     * @param detail what is wrong
     * @return the error, naming the source, the line, the column and the byte's offset in the file
     */
    TraceFormatException error(final int at, final String field, final String detail)
    {
        return new TraceFormatException(source, lineNumber, column(at), bufferOffset + at, field, detail);
    }

}
