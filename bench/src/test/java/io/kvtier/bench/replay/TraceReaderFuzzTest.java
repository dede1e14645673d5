package io.kvtier.bench.replay;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.kvtier.client.testing.FuzzTries;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

/**
 * Trace lines as a trace file might hold them: requests with their fields in any order, whitespace
 * anywhere JSON allows it, extra fields of every JSON shape, and the same lines with a byte changed,
 * inserted or cut off, and any bytes at all. The reader never throws anything but a
 * {@link TraceFormatException} naming the line, and for ASCII lines it agrees with a general JSON
 * parser (jackson-core, strict) line by line: it accepts exactly the lines that are one JSON object
 * with the four fields, each once, of the right type and range, and reads the same values.
 */
@AddLifecycleHook(FuzzTries.class)
class TraceReaderFuzzTest
{
    private static final JsonFactory JSON = new JsonFactory();
    private static final AtomicLong LINES = new AtomicLong();
    private static final AtomicLong ACCEPTED = new AtomicLong();
    private static final AtomicLong FILES = new AtomicLong();

    @Property(tries = 3_000)
    void eachAsciiLineIsReadExactlyAsAJsonParserReadsIt(@ForAll("lines") final byte[] line)
    {
        LINES.incrementAndGet();
        final TraceRequest expected = oracle(line);
        final TraceRequest actual;
        try (TraceReader reader = new TraceReader(new ByteArrayInputStream(line), "fuzz.jsonl"))
        {
            actual = reader.next();
            if (actual != null)
            {
                assertThat(reader.next()).isNull();
            }
        }
        catch (final TraceFormatException ex)
        {
            assertThat(ex.lineNumber()).isEqualTo(1);
            assertThat(ex.getMessage()).startsWith("fuzz.jsonl:1:");
            assertThat(expected).as("a line the JSON parser reads as a request, refused with: %s", ex.getMessage()).isNull();
            return;
        }
        catch (final IOException ex)
        {
            throw new AssertionError("the reader threw an I/O error on bytes in memory", ex);
        }
        if (actual == null)
        {
            // Only a line of nothing but whitespace is no request.
            assertThat(new String(line, StandardCharsets.US_ASCII)).isBlank();
            return;
        }
        ACCEPTED.incrementAndGet();
        assertThat(expected).as("a line the JSON parser refuses, read as %s", actual).isNotNull();
        assertThat(actual).isEqualTo(expected);
    }

    @Property(tries = 1_000)
    void anyBytesAreReadOrRefusedNamingTheLine(@ForAll("files") final byte[] file)
    {
        FILES.incrementAndGet();
        final long lines = 1 + countLineFeeds(file);
        try (TraceReader reader = new TraceReader(new ByteArrayInputStream(file), "fuzz.jsonl"))
        {
            while (reader.next() != null)
            {
                assertThat(reader.lineNumber()).isBetween(1L, lines);
            }
        }
        catch (final TraceFormatException ex)
        {
            assertThat(ex.lineNumber()).isBetween(1L, lines);
            assertThat(ex.byteOffset()).isBetween(0L, (long)file.length);
            assertThat(ex.getMessage()).startsWith("fuzz.jsonl:" + ex.lineNumber() + ":");
        }
        catch (final IOException ex)
        {
            throw new AssertionError("the reader threw an I/O error on bytes in memory", ex);
        }
    }

    /** Found by this test: a number with a leading zero in a field the reader skips was accepted, though JSON forbids it. */
    @Example
    void aLeadingZeroInASkippedFieldIsRefused()
    {
        final byte[] line = "{\"hash_ids\":[],\"{ash_ids\":[01],\"timestamp\":0,\"input_length\":0,\"output_length\":0}"
            .getBytes(StandardCharsets.US_ASCII);
        assertThatThrownBy(() ->
        {
            try (TraceReader reader = new TraceReader(new ByteArrayInputStream(line), "fuzz.jsonl"))
            {
                reader.next();
            }
        }).isInstanceOf(TraceFormatException.class).hasMessageStartingWith("fuzz.jsonl:1:28:")
            .hasMessageContaining("must not start with the digit 0 followed by more digits");
        assertThat(oracle(line)).isNull();
    }

    /** @return the request jackson-core reads from a line, or null when it is not one JSON object with the four fields right */
    private static TraceRequest oracle(final byte[] line)
    {
        for (final byte b : line)
        {
            if (b < 0 || b == '\n')
            {
                return null;
            }
        }
        try (JsonParser parser = JSON.createParser(line))
        {
            if (parser.nextToken() != JsonToken.START_OBJECT)
            {
                return null;
            }
            final Set<String> seen = new HashSet<>();
            long timestamp = 0;
            long input = 0;
            long output = 0;
            long[] ids = null;
            for (JsonToken token = parser.nextToken(); token != JsonToken.END_OBJECT; token = parser.nextToken())
            {
                final String name = parser.currentName();
                final JsonToken value = parser.nextToken();
                switch (name)
                {
                    case TraceReader.TIMESTAMP, TraceReader.INPUT_LENGTH, TraceReader.OUTPUT_LENGTH, TraceReader.HASH_IDS ->
                    {
                        if (!seen.add(name))
                        {
                            return null;
                        }
                        if (name.equals(TraceReader.HASH_IDS))
                        {
                            if (value != JsonToken.START_ARRAY)
                            {
                                return null;
                            }
                            final List<Long> list = new ArrayList<>();
                            for (JsonToken item = parser.nextToken(); item != JsonToken.END_ARRAY; item = parser.nextToken())
                            {
                                if (!nonNegativeLong(parser, item))
                                {
                                    return null;
                                }
                                list.add(parser.getLongValue());
                            }
                            ids = list.stream().mapToLong(Long::longValue).toArray();
                        }
                        else
                        {
                            if (!nonNegativeLong(parser, value))
                            {
                                return null;
                            }
                            final long number = parser.getLongValue();
                            switch (name)
                            {
                                case TraceReader.TIMESTAMP -> timestamp = number;
                                case TraceReader.INPUT_LENGTH -> input = number;
                                default -> output = number;
                            }
                        }
                    }
                    default -> parser.skipChildren();
                }
            }
            if (parser.nextToken() != null || seen.size() != 4)
            {
                return null;
            }
            return new TraceRequest(timestamp, input, output, ids);
        }
        catch (final IOException ex)
        {
            return null;
        }
    }

    private static boolean nonNegativeLong(final JsonParser parser, final JsonToken token) throws IOException
    {
        if (token != JsonToken.VALUE_NUMBER_INT)
        {
            return false;
        }
        final JsonParser.NumberType type = parser.getNumberType();
        // -0 is JSON for zero, which is not negative
        return (type == JsonParser.NumberType.INT || type == JsonParser.NumberType.LONG) && parser.getLongValue() >= 0;
    }

    private static long countLineFeeds(final byte[] bytes)
    {
        long count = 0;
        for (final byte b : bytes)
        {
            if (b == '\n')
            {
                count++;
            }
        }
        return count;
    }

    @Provide
    Arbitrary<byte[]> lines()
    {
        final Arbitrary<String> ws = Arbitraries.of("", "", "", " ", "\t", "  ", "\r", " \r ");
        final Arbitrary<String> number = Arbitraries.frequencyOf(Tuple.of(6, Arbitraries.longs().between(0, 1L << 40).map(String::valueOf)),
            Tuple.of(2, Arbitraries.of("0", "-0", "-1", "01", "1.0", "1e2", "1E2", "9223372036854775807", "9223372036854775808",
                "18446744073709551616", "00", "+1", "1.", ".5", "0x10", "true", "null", "\"1\"", "[]", "{}", "-")));
        final Arbitrary<String> ids = Combinators.combine(number.list().ofMaxSize(5), ws)
            .as((items, w) -> "[" + w + String.join(w + "," + w, items) + w + "]");
        final Arbitrary<String> other = Arbitraries.of("\"x\"", "\"\\u00e9\\\"\"", "\"a\\qb\"", "\"tab\there\"", "[1,[2,{\"a\":null}]]", "{\"t\":{}}", "true",
            "false", "null", "-1.5e-3", "[,]", "[1,]", "{\"a\":1,}", "\"\\ud800\"", "nul", "tru", "'x'", "\"unterminated");
        final Arbitrary<String> field = Arbitraries.frequencyOf(
            Tuple.of(3, Combinators.combine(Arbitraries.of(TraceReader.TIMESTAMP, TraceReader.INPUT_LENGTH, TraceReader.OUTPUT_LENGTH), number)
                .as((n, v) -> "\"" + n + "\":" + v)),
            Tuple.of(2, ids.map(v -> "\"" + TraceReader.HASH_IDS + "\":" + v)),
            Tuple.of(1, Combinators.combine(Arbitraries.of("extra", "hash_id", "timestamp ", "\\u0074imestamp", "", "ts"), other)
                .as((n, v) -> "\"" + n + "\":" + v)));
        final Arbitrary<String> cleanIds = Combinators.combine(Arbitraries.longs().between(0, Long.MAX_VALUE).map(String::valueOf).list().ofMaxSize(6), ws)
            .as((items, w) -> "[" + w + String.join(w + "," + w, items) + w + "]");
        final Arbitrary<String> cleanExtra = Combinators.combine(Arbitraries.of("extra", "hash_id", "timestamp ", "", "ts", "\\u0074imestamp"),
            Arbitraries.of("\"x\"", "\"\\u00e9\\\"\"", "[1,[2,{\"a\":null}]]", "{\"t\":{}}", "true", "false", "null", "-1.5e-3", "[]", "\"\\ud800\""))
            .as((n, v) -> "\"" + n + "\":" + v);
        final Arbitrary<String> request = Combinators.combine(
                Arbitraries.of(TraceReader.TIMESTAMP, TraceReader.INPUT_LENGTH, TraceReader.OUTPUT_LENGTH, TraceReader.HASH_IDS).list().ofSize(4)
                    .uniqueElements(),
                Arbitraries.longs().between(0, 1L << 40).list().ofSize(3), Arbitraries.oneOf(cleanIds, cleanIds, ids),
                Arbitraries.oneOf(cleanExtra.list().ofMaxSize(2), field.list().ofMaxSize(3)), ws)
            .as((order, numbers, hashIds, extra, w) ->
            {
                final List<String> fields = new ArrayList<>(extra);
                for (final String name : order)
                {
                    fields.add(switch (name)
                    {
                        case TraceReader.TIMESTAMP -> "\"timestamp\"" + w + ":" + w + numbers.get(0);
                        case TraceReader.INPUT_LENGTH -> "\"input_length\":" + numbers.get(1);
                        case TraceReader.OUTPUT_LENGTH -> "\"output_length\"" + w + ":" + numbers.get(2);
                        default -> "\"hash_ids\":" + hashIds;
                    });
                }
                java.util.Collections.rotate(fields, extra.size());
                return w + "{" + w + String.join(w + "," + w, fields) + w + "}" + w;
            });
        final Arbitrary<String> loose = field.list().ofMaxSize(6).map(fields -> "{" + String.join(",", fields) + "}");
        final Arbitrary<byte[]> text = Arbitraries.frequencyOf(Tuple.of(4, request), Tuple.of(2, loose),
                Tuple.of(1, Arbitraries.of("", " ", "{}", "[]", "{} {}", "{\"timestamp\":1}x", "\r")))
            .map(s -> s.getBytes(StandardCharsets.US_ASCII));
        final Arbitrary<byte[]> mutated = Combinators.combine(text, Arbitraries.integers().between(0, 1000),
                Arbitraries.of((byte)'{', (byte)'}', (byte)'[', (byte)']', (byte)',', (byte)':', (byte)'"', (byte)'\\', (byte)' ', (byte)'\t', (byte)'\r',
                    (byte)'0', (byte)'9', (byte)'-', (byte)'e', (byte)'.', (byte)'a', (byte)0, (byte)0x7F, (byte)0x1F),
                Arbitraries.integers().between(0, 2))
            .as((bytes, at, b, how) ->
            {
                if (bytes.length == 0)
                {
                    return bytes;
                }
                final int i = at % bytes.length;
                return switch (how)
                {
                    case 0 ->
                    {
                        bytes[i] = b;
                        yield bytes;
                    }
                    case 1 ->
                    {
                        final byte[] longer = new byte[bytes.length + 1];
                        System.arraycopy(bytes, 0, longer, 0, i);
                        longer[i] = b;
                        System.arraycopy(bytes, i, longer, i + 1, bytes.length - i);
                        yield longer;
                    }
                    default -> Arrays.copyOf(bytes, i);
                };
            });
        return Arbitraries.frequencyOf(Tuple.of(3, text), Tuple.of(3, mutated));
    }

    @Provide
    Arbitrary<byte[]> files()
    {
        final Arbitrary<byte[]> random = Arbitraries.bytes().array(byte[].class).ofMaxSize(300);
        final Arbitrary<byte[]> joined = lines().list().ofMaxSize(5).map(list ->
        {
            final java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            for (final byte[] l : list)
            {
                out.writeBytes(l);
                out.write('\n');
            }
            return out.toByteArray();
        });
        final Arbitrary<byte[]> withHighBytes = Combinators.combine(joined, Arbitraries.integers().between(0, 1000),
            Arbitraries.of((byte)0xEF, (byte)0xBB, (byte)0xBF, (byte)0xC0, (byte)0xC3, (byte)0xA9, (byte)0xED, (byte)0xA0, (byte)0xF4, (byte)0x90,
                (byte)0xFF, (byte)0x80)).as((bytes, at, b) ->
            {
                if (bytes.length > 0)
                {
                    bytes[at % bytes.length] = b;
                }
                return bytes;
            });
        return Arbitraries.frequencyOf(Tuple.of(1, random), Tuple.of(2, joined), Tuple.of(2, withHighBytes));
    }

    @AfterContainer
    static void report()
    {
        // The figures docs/RELIABILITY.md quotes: inputs run per target.
        System.out.println("TraceReaderFuzzTest: " + LINES.get() + " lines compared with jackson-core (" + ACCEPTED.get() + " requests read), "
            + FILES.get() + " files of any bytes run");
    }

    static
    {
        if (JSON.isEnabled(JsonParser.Feature.ALLOW_COMMENTS))
        {
            fail("the reference parser must be strict JSON");
        }
    }
}
