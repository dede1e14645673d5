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
 *
 * <p>This class holds the schema (which fields a request has and what each must be);
 * {@link TraceLines} cuts the bytes into lines and {@link JsonLineScanner} checks the JSON of a line
 * and words its errors.
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

    private final TraceLines lines;
    private final JsonLineScanner json;
    private long[] ids = new long[256];

    /**
     * @param in     the trace's bytes, UTF-8; closed by {@link #close()}
     * @param source the trace's name for error messages, usually its path
     */
    public TraceReader(final InputStream in, final String source)
    {
        this.lines = new TraceLines(in);
        this.json = new JsonLineScanner(source);
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
        return lines.lineNumber();
    }

    /**
     * @return the next request, or {@code null} at the end of the trace
     * @throws IOException          if the trace cannot be read
     * @throws TraceFormatException if the line is not a valid request
     */
    public TraceRequest next() throws IOException
    {
        while (lines.next())
        {
            json.line(lines.buffer(), lines.lineStart(), lines.lineEnd(), lines.lineNumber(), lines.bufferOffset());
            json.skipWhitespace();
            if (!json.atEndOfLine())
            {
                return parseLine();
            }
        }
        return null;
    }

    /** @return the request on the current line, whose first byte that is not whitespace is at the cursor */
    private TraceRequest parseLine() throws TraceFormatException
    {
        if (json.peek() != '{')
        {
            throw json.notExpected(null, "a JSON object");
        }
        final int open = json.position();
        json.advance();
        int seen = 0;
        long timestamp = 0;
        long inputLength = 0;
        long outputLength = 0;
        int idCount = 0;
        json.skipWhitespace();
        if (json.peek() == '}')
        {
            json.advance();
        }
        else
        {
            while (true)
            {
                json.skipWhitespace();
                final int nameAt = json.position();
                if (json.peek() != '"')
                {
                    throw json.unexpected("a field name in double quotes");
                }
                final int field = json.fieldName(NAMES);
                json.skipWhitespace();
                if (json.peek() != ':')
                {
                    throw json.unexpected("':' after the field name");
                }
                json.advance();
                json.skipWhitespace();
                if (field < 0)
                {
                    json.skipValue(0);
                }
                else
                {
                    final int bit = 1 << field;
                    if ((seen & bit) != 0)
                    {
                        // JSON leaves duplicates undefined; taking either copy could replay the wrong prefix.
                        throw json.error(nameAt, fieldName(field), "appears twice");
                    }
                    seen |= bit;
                    switch (bit)
                    {
                        case SEEN_TIMESTAMP -> timestamp = json.nonNegativeLong(TIMESTAMP, JsonLineScanner.NO_INDEX);
                        case SEEN_INPUT_LENGTH -> inputLength = json.nonNegativeLong(INPUT_LENGTH, JsonLineScanner.NO_INDEX);
                        case SEEN_OUTPUT_LENGTH -> outputLength = json.nonNegativeLong(OUTPUT_LENGTH, JsonLineScanner.NO_INDEX);
                        default -> idCount = hashIds();
                    }
                }
                json.skipWhitespace();
                final int separator = json.peek();
                if (separator == '}')
                {
                    json.advance();
                    break;
                }
                if (separator != ',')
                {
                    throw json.unexpected("',' or '}' after a field");
                }
                json.advance();
            }
        }
        final int close = json.position() - 1;
        json.skipWhitespace();
        if (!json.atEndOfLine())
        {
            final int at = json.position();
            final String what = json.describeValue(at);
            throw json.error(at, null, "expected one object per line, found " + (what == null ? json.found(at) : what) + " after it");
        }
        if (seen != SEEN_ALL)
        {
            throw json.error(close, fieldName(firstMissing(seen)), "missing from the object that starts at column " + json.column(open) +
                "; every request needs " + TIMESTAMP + ", " + INPUT_LENGTH + ", " + OUTPUT_LENGTH + " and " + HASH_IDS);
        }
        return new TraceRequest(timestamp, inputLength, outputLength, Arrays.copyOf(ids, idCount));
    }

    /** @return the name of field {@code field}, its index in {@link #NAMES} */
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

    /** Reads the {@code hash_ids} array at the cursor into {@link #ids}, growing it for a long prompt; @return how many */
    private int hashIds() throws TraceFormatException
    {
        if (json.peek() != '[')
        {
            throw json.notExpected(HASH_IDS, "an array of non-negative integers");
        }
        json.advance();
        int count = 0;
        json.skipWhitespace();
        if (json.peek() == ']')
        {
            json.advance();
            return 0;
        }
        while (true)
        {
            json.skipWhitespace();
            if (count == ids.length)
            {
                ids = Arrays.copyOf(ids, count * 2);
            }
            ids[count] = json.nonNegativeLong(HASH_IDS, count);
            count++;
            json.skipWhitespace();
            final int separator = json.peek();
            if (separator == ']')
            {
                json.advance();
                return count;
            }
            if (separator != ',')
            {
                throw json.unexpected("',' or ']' in the " + HASH_IDS + " array");
            }
            json.advance();
        }
    }

    /** @return the index in {@link #NAMES} of the field to name as missing: hash_ids first, as the one a trace most likely lacks */
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

    /**
     * Closes the underlying stream.
     *
     * @throws IOException if closing fails
     */
    @Override
    public void close() throws IOException
    {
        lines.close();
    }
}
