package io.kvtier.bench.replay;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.Reader;
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
 * annotations still load. Blank lines are skipped.
 *
 * <p>Each line gets its own parser, so an error names the exact line and a line holding two objects,
 * or an object split over two lines, is rejected rather than silently re-joined. Not thread-safe.
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

    private static final JsonFactory JSON = new JsonFactory();

    private static final int SEEN_TIMESTAMP = 1;
    private static final int SEEN_INPUT_LENGTH = 2;
    private static final int SEEN_OUTPUT_LENGTH = 4;
    private static final int SEEN_HASH_IDS = 8;

    private final BufferedReader reader;
    private final String source;
    private long lineNumber;
    private long[] ids = new long[256];

    /**
     * @param reader the trace text; closed by {@link #close()}
     * @param source the trace's name for error messages, usually its path
     */
    public TraceReader(final Reader reader, final String source)
    {
        this.reader = reader instanceof final BufferedReader buffered ? buffered : new BufferedReader(reader, 1 << 16);
        this.source = source;
    }

    /**
     * @param trace a JSON-lines trace in UTF-8
     * @return a reader positioned at its first line
     * @throws IOException if the file cannot be opened
     */
    public static TraceReader open(final Path trace) throws IOException
    {
        return new TraceReader(Files.newBufferedReader(trace, StandardCharsets.UTF_8), trace.toString());
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
        String line;
        do
        {
            line = reader.readLine();
            if (line == null)
            {
                return null;
            }
            lineNumber++;
        }
        while (line.isBlank());

        try (JsonParser parser = JSON.createParser(line))
        {
            return parse(parser);
        }
        catch (final JsonProcessingException ex)
        {
            throw error(null, "malformed JSON at column " + ex.getLocation().getColumnNr() + ": " + ex.getOriginalMessage(), ex);
        }
    }

    private TraceRequest parse(final JsonParser parser) throws IOException
    {
        if (parser.nextToken() != JsonToken.START_OBJECT)
        {
            throw error(null, "expected a JSON object, found " + describe(parser.currentToken()), null);
        }
        int seen = 0;
        long timestamp = 0;
        long inputLength = 0;
        long outputLength = 0;
        int idCount = 0;
        for (JsonToken token = parser.nextToken(); token != JsonToken.END_OBJECT; token = parser.nextToken())
        {
            final String name = parser.currentName();
            final JsonToken value = parser.nextToken();
            final int bit = switch (name)
            {
                case TIMESTAMP -> SEEN_TIMESTAMP;
                case INPUT_LENGTH -> SEEN_INPUT_LENGTH;
                case OUTPUT_LENGTH -> SEEN_OUTPUT_LENGTH;
                case HASH_IDS -> SEEN_HASH_IDS;
                default -> 0;
            };
            if (bit == 0)
            {
                parser.skipChildren();
                continue;
            }
            if ((seen & bit) != 0)
            {
                // JSON leaves duplicates undefined; taking either copy could replay the wrong prefix.
                throw error(name, "appears twice", null);
            }
            seen |= bit;
            switch (bit)
            {
                case SEEN_TIMESTAMP -> timestamp = nonNegativeLong(parser, value, name);
                case SEEN_INPUT_LENGTH -> inputLength = nonNegativeLong(parser, value, name);
                case SEEN_OUTPUT_LENGTH -> outputLength = nonNegativeLong(parser, value, name);
                default -> idCount = hashIds(parser, value);
            }
        }
        if (parser.nextToken() != null)
        {
            throw error(null, "expected one object per line, found " + describe(parser.currentToken()) + " after it", null);
        }
        if (seen != (SEEN_TIMESTAMP | SEEN_INPUT_LENGTH | SEEN_OUTPUT_LENGTH | SEEN_HASH_IDS))
        {
            throw error(firstMissing(seen), "missing; every request needs " + TIMESTAMP + ", " + INPUT_LENGTH + ", " + OUTPUT_LENGTH + " and " + HASH_IDS, null);
        }
        return new TraceRequest(timestamp, inputLength, outputLength, Arrays.copyOf(ids, idCount));
    }

    private int hashIds(final JsonParser parser, final JsonToken value) throws IOException
    {
        if (value != JsonToken.START_ARRAY)
        {
            throw error(HASH_IDS, "expected an array of non-negative integers, found " + describe(value), null);
        }
        int count = 0;
        for (JsonToken token = parser.nextToken(); token != JsonToken.END_ARRAY; token = parser.nextToken())
        {
            if (count == ids.length)
            {
                ids = Arrays.copyOf(ids, count * 2);
            }
            ids[count] = nonNegativeLong(parser, token, HASH_IDS + "[" + count + "]");
            count++;
        }
        return count;
    }

    private long nonNegativeLong(final JsonParser parser, final JsonToken token, final String field) throws IOException
    {
        if (token != JsonToken.VALUE_NUMBER_INT)
        {
            final String found = token == JsonToken.VALUE_NUMBER_FLOAT ? "the non-integer " + parser.getText() : describe(token);
            throw error(field, "expected a non-negative integer, found " + found, null);
        }
        if (parser.getNumberType() == JsonParser.NumberType.BIG_INTEGER)
        {
            throw error(field, parser.getText() + " does not fit in 64 bits", null);
        }
        final long value = parser.getLongValue();
        if (value < 0)
        {
            throw error(field, value + " is negative; expected a non-negative integer", null);
        }
        return value;
    }

    private static String firstMissing(final int seen)
    {
        if ((seen & SEEN_HASH_IDS) == 0)
        {
            return HASH_IDS;
        }
        if ((seen & SEEN_TIMESTAMP) == 0)
        {
            return TIMESTAMP;
        }
        return (seen & SEEN_INPUT_LENGTH) == 0 ? INPUT_LENGTH : OUTPUT_LENGTH;
    }

    private static String describe(final JsonToken token)
    {
        if (token == null)
        {
            return "end of line";
        }
        return switch (token)
        {
            case START_OBJECT -> "an object";
            case START_ARRAY -> "an array";
            case VALUE_STRING -> "a string";
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> "a number";
            case VALUE_TRUE, VALUE_FALSE -> "a boolean";
            case VALUE_NULL -> "null";
            default -> token.asString() == null ? token.name() : "'" + token.asString() + "'";
        };
    }

    private TraceFormatException error(final String field, final String detail, final Throwable cause)
    {
        return new TraceFormatException(source, lineNumber, field, detail, cause);
    }

    /**
     * Closes the underlying reader.
     *
     * @throws IOException if closing fails
     */
    @Override
    public void close() throws IOException
    {
        reader.close();
    }
}
