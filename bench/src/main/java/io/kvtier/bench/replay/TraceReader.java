package io.kvtier.bench.replay;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Streams a Mooncake-format trace: one JSON object per line with the integer fields {@code timestamp},
 * {@code input_length}, {@code output_length} (all non-negative) and {@code hash_ids} (an array of
 * non-negative integers). All four are required; other fields are ignored so that traces with extra
 * annotations still load. Lines end with LF or CRLF; lines holding only spaces and tabs are skipped; a
 * UTF-8 byte order mark at the start of the file is skipped.
 *
 * <p>The reader scans bytes for this one schema rather than running a general JSON parser: a trace is
 * millions of small integers, and decoding it to characters and tokens first cost more than the replay
 * itself. It still accepts exactly JSON (RFC 8259) in UTF-8: every byte of a line is checked, including
 * those of fields it skips, so an error names the line, the byte column and what is wrong (invalid
 * UTF-8, malformed JSON, a missing or repeated field, a value of the wrong type or range), and a line
 * holding two objects, or an object split over two lines, is rejected rather than silently re-joined.
 * Not thread-safe.
 */
public final class TraceReader implements AutoCloseable
{
    /** Field name of the arrival time. */
    public static final String TIMESTAMP = "timestamp";
    /** Field name of the prompt length. */
    public static final String INPUT_LENGTH = "input_length";
    /** Field name of the generated length. */
    public static final String OUTPUT_LENGTH = "output_length";
    /** Field name of the block hash ids. */
    public static final String HASH_IDS = "hash_ids";

    private static final byte[][] NAMES = {
        TIMESTAMP.getBytes(StandardCharsets.US_ASCII),
        INPUT_LENGTH.getBytes(StandardCharsets.US_ASCII),
        OUTPUT_LENGTH.getBytes(StandardCharsets.US_ASCII),
        HASH_IDS.getBytes(StandardCharsets.US_ASCII)};

    private static final int SEEN_TIMESTAMP = 1;
    private static final int SEEN_INPUT_LENGTH = 2;
    private static final int SEEN_OUTPUT_LENGTH = 4;
    private static final int SEEN_HASH_IDS = 8;
    private static final int SEEN_ALL = SEEN_TIMESTAMP | SEEN_INPUT_LENGTH | SEEN_OUTPUT_LENGTH | SEEN_HASH_IDS;

    /** As deep as Jackson's default nesting limit, so a pathological skipped field cannot exhaust the stack. */
    private static final int MAX_DEPTH = 1000;

    private static final int NO_INDEX = -1;

    private static final long MAX_TENTH = Long.MAX_VALUE / 10;
    private static final int MAX_LAST_DIGIT = (int)(Long.MAX_VALUE % 10);

    private final InputStream in;
    private final String source;
    private byte[] buffer = new byte[1 << 16];
    private long bufferOffset;
    private int position;
    private int limit;
    private boolean endOfInput;
    private boolean started;
    private long lineNumber;
    private long[] ids = new long[256];

    // The line being parsed: buffer[lineStart, lineEnd), without its line feed.
    private int lineStart;
    private int lineEnd;
    private int cursor;

    /**
     * @param in     the trace's bytes, UTF-8; closed by {@link #close()}
     * @param source the trace's name for error messages, usually its path
     */
    public TraceReader(final InputStream in, final String source)
    {
        this.in = in;
        this.source = source;
    }

    /**
     * @param trace a JSON-lines trace in UTF-8
     * @return a reader positioned at its first line
     * @throws IOException if the file cannot be opened
     */
    public static TraceReader open(final Path trace) throws IOException
    {
        return new TraceReader(Files.newInputStream(trace), trace.toString());
    }

    /**
     * Reads a whole trace into memory, as an offline policy needs.
     *
     * @param trace a JSON-lines trace in UTF-8
     * @return its requests in order
     * @throws IOException          if the file cannot be read
     * @throws TraceFormatException if a line is not a valid request
     */
    public static List<TraceRequest> readAll(final Path trace) throws IOException
    {
        try (TraceReader in = open(trace))
        {
            final List<TraceRequest> requests = new ArrayList<>();
            for (TraceRequest request = in.next(); request != null; request = in.next())
            {
                requests.add(request);
            }
            return requests;
        }
    }

    /** @return the number of the line last read, 1-based; 0 before the first */
    public long lineNumber()
    {
        return lineNumber;
    }

    /**
     * @return the next request, or {@code null} at the end of the trace
     * @throws IOException          if the trace cannot be read
     * @throws TraceFormatException if the line is not a valid request
     */
    public TraceRequest next() throws IOException
    {
        while (nextLine())
        {
            skipWhitespace();
            if (cursor < lineEnd)
            {
                return parseLine();
            }
        }
        return null;
    }

    /** Makes the next line current; false at the end of input. */
    private boolean nextLine() throws IOException
    {
        if (!started)
        {
            started = true;
            fill(3);
            if (limit - position >= 3 && (buffer[position] & 0xFF) == 0xEF && (buffer[position + 1] & 0xFF) == 0xBB &&
                (buffer[position + 2] & 0xFF) == 0xBF)
            {
                position += 3;
            }
        }
        int scanned = position;
        while (true)
        {
            for (int i = scanned; i < limit; i++)
            {
                if (buffer[i] == '\n')
                {
                    startLine(i);
                    position = i + 1;
                    return true;
                }
            }
            if (endOfInput)
            {
                if (position == limit)
                {
                    return false;
                }
                startLine(limit);
                position = limit;
                return true;
            }
            final int kept = limit - position;
            fill(kept + 1);
            scanned = position + kept;
        }
    }

    private void startLine(final int end)
    {
        lineNumber++;
        lineStart = position;
        lineEnd = end;
        cursor = position;
    }

    /**
     * Reads until at least {@code wanted} unconsumed bytes are buffered or the input ends, moving the
     * unconsumed bytes to the front and growing the buffer for a long line.
     */
    private void fill(final int wanted) throws IOException
    {
        if (position > 0)
        {
            System.arraycopy(buffer, position, buffer, 0, limit - position);
            bufferOffset += position;
            limit -= position;
            position = 0;
        }
        if (wanted > buffer.length)
        {
            buffer = Arrays.copyOf(buffer, Math.max(wanted, 2 * buffer.length));
        }
        while (!endOfInput && limit < wanted)
        {
            final int read = in.read(buffer, limit, buffer.length - limit);
            if (read < 0)
            {
                endOfInput = true;
            }
            else
            {
                limit += read;
            }
        }
    }

    private TraceRequest parseLine() throws TraceFormatException
    {
        if (buffer[cursor] != '{')
        {
            throw notExpected(null, "a JSON object");
        }
        final int open = cursor;
        cursor++;
        int seen = 0;
        long timestamp = 0;
        long inputLength = 0;
        long outputLength = 0;
        int idCount = 0;
        skipWhitespace();
        if (peek() == '}')
        {
            cursor++;
        }
        else
        {
            while (true)
            {
                skipWhitespace();
                final int nameAt = cursor;
                if (peek() != '"')
                {
                    throw malformed(cursor, "expected a field name in double quotes, found " + found(cursor));
                }
                final int field = fieldName();
                skipWhitespace();
                if (peek() != ':')
                {
                    throw malformed(cursor, "expected ':' after the field name, found " + found(cursor));
                }
                cursor++;
                skipWhitespace();
                if (field < 0)
                {
                    skipValue(0);
                }
                else
                {
                    final int bit = 1 << field;
                    if ((seen & bit) != 0)
                    {
                        // JSON leaves duplicates undefined; taking either copy could replay the wrong prefix.
                        throw error(nameAt, fieldName(field), "appears twice");
                    }
                    seen |= bit;
                    switch (bit)
                    {
                        case SEEN_TIMESTAMP -> timestamp = nonNegativeLong(field, NO_INDEX);
                        case SEEN_INPUT_LENGTH -> inputLength = nonNegativeLong(field, NO_INDEX);
                        case SEEN_OUTPUT_LENGTH -> outputLength = nonNegativeLong(field, NO_INDEX);
                        default -> idCount = hashIds();
                    }
                }
                skipWhitespace();
                final int separator = peek();
                cursor++;
                if (separator == '}')
                {
                    break;
                }
                if (separator != ',')
                {
                    cursor--;
                    throw malformed(cursor, "expected ',' or '}' after a field, found " + found(cursor));
                }
            }
        }
        final int close = cursor - 1;
        skipWhitespace();
        if (cursor < lineEnd)
        {
            final String what = describeValue(cursor);
            throw error(cursor, null, "expected one object per line, found " + (what == null ? found(cursor) : what) + " after it");
        }
        if (seen != SEEN_ALL)
        {
            throw error(close, fieldName(firstMissing(seen)), "missing from the object that starts at column " + column(open) +
                "; every request needs " + TIMESTAMP + ", " + INPUT_LENGTH + ", " + OUTPUT_LENGTH + " and " + HASH_IDS);
        }
        return new TraceRequest(timestamp, inputLength, outputLength, Arrays.copyOf(ids, idCount));
    }

    /**
     * Reads a field name at the cursor, which is on its opening quote.
     *
     * @return the index of a known field in {@link #NAMES}, or -1
     */
    private int fieldName() throws TraceFormatException
    {
        final int start = cursor + 1;
        skipString();
        final int end = cursor - 1;
        for (int field = 0; field < NAMES.length; field++)
        {
            if (Arrays.equals(buffer, start, end, NAMES[field], 0, NAMES[field].length))
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
                for (int field = 0; field < NAMES.length; field++)
                {
                    if (name.equals(fieldName(field)))
                    {
                        return field;
                    }
                }
                return -1;
            }
        }
        return -1;
    }

    private static String fieldName(final int field)
    {
        return switch (field)
        {
            case 0 -> TIMESTAMP;
            case 1 -> INPUT_LENGTH;
            case 2 -> OUTPUT_LENGTH;
            default -> HASH_IDS;
        };
    }

    private int hashIds() throws TraceFormatException
    {
        if (peek() != '[')
        {
            throw notExpected(HASH_IDS, "an array of non-negative integers");
        }
        cursor++;
        int count = 0;
        skipWhitespace();
        if (peek() == ']')
        {
            cursor++;
            return 0;
        }
        while (true)
        {
            skipWhitespace();
            if (count == ids.length)
            {
                ids = Arrays.copyOf(ids, count * 2);
            }
            ids[count] = nonNegativeLong(3, count);
            count++;
            skipWhitespace();
            final int separator = peek();
            cursor++;
            if (separator == ']')
            {
                return count;
            }
            if (separator != ',')
            {
                cursor--;
                throw malformed(cursor, "expected ',' or ']' in the " + HASH_IDS + " array, found " + found(cursor));
            }
        }
    }

    /**
     * Reads a non-negative integer for a field, or one element of {@code hash_ids} when {@code index} is
     * not {@link #NO_INDEX}.
     */
    private long nonNegativeLong(final int field, final int index) throws TraceFormatException
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

    private static String name(final int field, final int index)
    {
        return index == NO_INDEX ? fieldName(field) : HASH_IDS + "[" + index + "]";
    }

    private static boolean isDigit(final byte b)
    {
        return b >= '0' && b <= '9';
    }

    private void skipWhitespace()
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
    private int peek()
    {
        return cursor < lineEnd ? buffer[cursor] & 0xFF : -1;
    }

    /** Skips any JSON value at the cursor, checking it. */
    private void skipValue(final int depth) throws TraceFormatException
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
        at = digits(at, "'-'");
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
    private String describeValue(final int at)
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
     * The value at the cursor is not the kind the field needs: says what it is, or that it is not JSON.
     *
     * @throws TraceFormatException for invalid UTF-8 at the cursor, which is reported as such first
     */
    private TraceFormatException notExpected(final String field, final String expected) throws TraceFormatException
    {
        final String what = describeValue(cursor);
        if (what == null)
        {
            return malformed(cursor, "expected " + expected + ", found " + found(cursor));
        }
        return error(cursor, field, "expected " + expected + ", found " + what);
    }

    /** @return the byte at {@code at} for a message, quoted, or "the end of the line" */
    private String found(final int at) throws TraceFormatException
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

    private String text(final int from, final int to)
    {
        return new String(buffer, from, to - from, StandardCharsets.UTF_8);
    }

    private long column(final int at)
    {
        return at - lineStart + 1L;
    }

    private static int firstMissing(final int seen)
    {
        if ((seen & SEEN_HASH_IDS) == 0)
        {
            return 3;
        }
        if ((seen & SEEN_TIMESTAMP) == 0)
        {
            return 0;
        }
        return (seen & SEEN_INPUT_LENGTH) == 0 ? 1 : 2;
    }

    private TraceFormatException malformed(final int at, final String detail)
    {
        return error(at, null, "malformed JSON: " + detail);
    }

    private TraceFormatException error(final int at, final String field, final String detail)
    {
        return new TraceFormatException(source, lineNumber, column(at), bufferOffset + at, field, detail);
    }

    /**
     * Closes the underlying stream.
     *
     * @throws IOException if closing fails
     */
    @Override
    public void close() throws IOException
    {
        in.close();
    }
}
