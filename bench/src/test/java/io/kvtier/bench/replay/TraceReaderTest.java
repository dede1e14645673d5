package io.kvtier.bench.replay;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TraceReaderTest
{
    private static final String GOOD = "{\"timestamp\": 0, \"input_length\": 1100, \"output_length\": 3, \"hash_ids\": [0, 1, 2]}";

    private static TraceReader reader(final String text)
    {
        return new TraceReader(new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)), "t.jsonl");
    }

    private static List<TraceRequest> read(final String text) throws IOException
    {
        try (TraceReader reader = reader(text))
        {
            final List<TraceRequest> requests = new ArrayList<>();
            for (TraceRequest request = reader.next(); request != null; request = reader.next())
            {
                requests.add(request);
            }
            return requests;
        }
    }

    @Test
    void shouldReadEveryFieldOfEachLine() throws IOException
    {
        final List<TraceRequest> requests = read(GOOD + "\n" +
            "{\"hash_ids\": [7], \"output_length\": 9, \"extra\": {\"nested\": [1, {\"x\": 2}]}, \"input_length\": 400, \"timestamp\": 12}\n");

        assertThat(requests).containsExactly(
            new TraceRequest(0, 1100, 3, new long[] {0, 1, 2}),
            new TraceRequest(12, 400, 9, new long[] {7}));
    }

    @Test
    void shouldSkipBlankLinesButCountThemInLineNumbers() throws IOException
    {
        final String text = "\n" + GOOD + "\n   \n" + GOOD.replace("[0, 1, 2]", "[]") + "\n\n";
        try (TraceReader reader = reader(text))
        {
            assertThat(reader.next().blocks()).isEqualTo(3);
            assertThat(reader.lineNumber()).isEqualTo(2);
            assertThat(reader.next().blocks()).isZero();
            assertThat(reader.lineNumber()).isEqualTo(4);
            assertThat(reader.next()).isNull();
        }
    }

    @Test
    void shouldAcceptIdsUpToSixtyFourBits() throws IOException
    {
        final List<TraceRequest> requests = read(GOOD.replace("[0, 1, 2]", "[" + Long.MAX_VALUE + "]"));

        assertThat(requests.getFirst().hashIds()).containsExactly(Long.MAX_VALUE);
    }

    @Test
    void shouldReadAFile(@TempDir final Path dir) throws IOException
    {
        final Path trace = Files.writeString(dir.resolve("trace.jsonl"), GOOD + "\n" + GOOD + "\n");

        assertThat(TraceReader.readAll(trace)).hasSize(2);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
        # what                  | third line                                                                                  | field         | column | message contains
        truncated JSON          | {"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1, 2                   |               |     74 | malformed JSON
        not JSON                | hash_ids: [1, 2]                                                                            |               |      1 | malformed JSON
        an array                | [1, 2]                                                                                      |               |      1 | expected a JSON object, found an array
        two objects             | {"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1]} {}                 |               |     74 | one object per line
        missing hash_ids        | {"timestamp": 0, "input_length": 1, "output_length": 1}                                     | hash_ids      |     55 | missing
        missing timestamp       | {"input_length": 1, "output_length": 1, "hash_ids": [1]}                                    | timestamp     |     56 | missing
        hash_ids not an array   | {"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": "1,2"}                  | hash_ids      |     69 | expected an array of non-negative integers, found a string
        hash_ids null           | {"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": null}                   | hash_ids      |     69 | found null
        negative id             | {"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [4, -5]}                | hash_ids[1]   |     73 | -5 is negative
        fractional id           | {"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [4.5]}                  | hash_ids[0]   |     70 | non-integer 4.5
        exponent id             | {"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1e3]}                  | hash_ids[0]   |     70 | non-integer 1e3
        string id               | {"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": ["4"]}                  | hash_ids[0]   |     70 | found a string
        id beyond 64 bits       | {"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [99999999999999999999]} | hash_ids[0]   |     70 | does not fit in 64 bits
        leading zero            | {"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [07]}                   |               |     70 | must not start with the digit 0
        trailing comma          | {"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1,]}                   |               |     72 | malformed JSON
        negative length         | {"timestamp": 0, "input_length": -1, "output_length": 1, "hash_ids": [1]}                   | input_length  |     34 | -1 is negative
        string timestamp        | {"timestamp": "0", "input_length": 1, "output_length": 1, "hash_ids": [1]}                  | timestamp     |     15 | found a string
        duplicate field         | {"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1], "hash_ids": [2]}   | hash_ids      |     74 | appears twice
        bad skipped field       | {"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1], "x": [tru]}        |               |     83 | expected the literal true
        bad escape              | {"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1], "x": "a\\qb"}      |               |     82 | invalid escape sequence
        """)
    void shouldNameTheLineColumnAndFieldOfMalformedInput(final String what, final String line, final String field, final long column, final String message)
        throws IOException
    {
        try (TraceReader reader = reader(GOOD + "\n" + GOOD + "\n" + line + "\n" + GOOD + "\n"))
        {
            reader.next();
            reader.next();
            assertThatThrownBy(reader::next)
                .as(what)
                .isInstanceOfSatisfying(TraceFormatException.class, ex ->
                {
                    assertThat(ex.lineNumber()).isEqualTo(3);
                    assertThat(ex.column()).isEqualTo(column);
                    assertThat(ex.byteOffset()).isEqualTo(2L * (GOOD.length() + 1) + column - 1);
                    assertThat(ex.field()).isEqualTo(field);
                    assertThat(ex.getMessage())
                        .startsWith("t.jsonl:3:" + column + ": " + (field == null ? "" : "field \"" + field + "\": "))
                        .contains(message);
                });
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
        # what                             | bytes of the second line, hex; 0x22 is a double quote                      | column | message contains
        a byte no character starts with    | 7b 22 6e 6f 74 65 22 3a 22 61 ff 62 22 7d                                | 11     | invalid UTF-8 byte 0xff: no character starts with it
        a lead byte without continuation   | 7b 22 6e 6f 74 65 22 3a 22 c3 28 22 7d                                   | 11     | invalid UTF-8 byte 0x28: the 2-byte sequence that starts with byte 0xc3 at column 10
        an overlong slash                  | 7b 22 6e 6f 74 65 22 3a 22 c0 af 22 7d                                   | 10     | invalid UTF-8 byte 0xc0
        an encoded surrogate               | 7b 22 6e 6f 74 65 22 3a 22 ed a0 80 22 7d                                | 11     | invalid UTF-8 byte 0xa0: the 3-byte sequence that starts with byte 0xed at column 10 needs a byte from 0x80 to 0x9f
        beyond U+10FFFF                    | 7b 22 6e 6f 74 65 22 3a 22 f4 90 80 80 22 7d                             | 11     | invalid UTF-8 byte 0x90
        a Latin-1 byte outside a string    | 7b 22 74 69 6d 65 73 74 61 6d 70 22 3a e9 30 7d                          | 15     | invalid UTF-8 byte 0x30: the 3-byte sequence that starts with byte 0xe9 at column 14
        a sequence cut by the line end     | 7b 22 6e 6f 74 65 22 3a 22 e2 82                                         | 12     | invalid UTF-8: the line ends inside the 3-byte sequence that starts with byte 0xe2 at column 10
        """)
    void shouldNameTheFileLineColumnAndByteOfInvalidUtf8(final String what, final String hex, final long column, final String message, @TempDir final Path dir)
        throws IOException
    {
        final byte[] first = (GOOD + "\n").getBytes(StandardCharsets.UTF_8);
        final byte[] bad = HexFormat.ofDelimiter(" ").parseHex(hex);
        final Path trace = dir.resolve("bad.jsonl");
        try (OutputStream out = Files.newOutputStream(trace))
        {
            out.write(first);
            out.write(bad);
            out.write('\n');
            out.write(first);
        }

        assertThatThrownBy(() -> TraceReader.readAll(trace))
            .as(what)
            .isInstanceOfSatisfying(TraceFormatException.class, ex ->
            {
                assertThat(ex.source()).isEqualTo(trace.toString());
                assertThat(ex.lineNumber()).isEqualTo(2);
                assertThat(ex.column()).isEqualTo(column);
                assertThat(ex.byteOffset()).isEqualTo(first.length + column - 1);
                assertThat(ex.getMessage())
                    .startsWith(trace + ":2:" + column + ": ")
                    .contains(message)
                    .contains("(byte offset " + (first.length + column - 1) + " in the file)");
            });
    }

    @Test
    void shouldAcceptValidUtf8AnEscapedNameAndAByteOrderMark(@TempDir final Path dir) throws IOException
    {
        final String line = "{\"note\": \"caf\u00e9 \u20ac \\u00e9 \ud83d\ude00\", \"tim\\u0065stamp\": 5, \"input_length\": 1, \"output_length\": 1, " +
            "\"hash_ids\": [3], \"more\": {\"a\": [true, false, null, -1.5e-3, {}]}}\r\n";
        final Path trace = dir.resolve("utf8.jsonl");
        try (OutputStream out = Files.newOutputStream(trace))
        {
            out.write(new byte[] {(byte)0xEF, (byte)0xBB, (byte)0xBF});
            out.write(line.getBytes(StandardCharsets.UTF_8));
        }

        assertThat(TraceReader.readAll(trace)).containsExactly(new TraceRequest(5, 1, 1, new long[] {3}));
    }

    @Test
    void shouldReadALineLongerThanItsBuffer() throws IOException
    {
        final long[] ids = new long[100_000];
        Arrays.setAll(ids, i -> i * 1_000_003L);
        final String line = "{\"timestamp\": 1, \"input_length\": 2, \"output_length\": 3, \"hash_ids\": " + Arrays.toString(ids) + "}";

        assertThat(read(GOOD + "\n" + line + "\n" + GOOD)).containsExactly(
            new TraceRequest(0, 1100, 3, new long[] {0, 1, 2}),
            new TraceRequest(1, 2, 3, ids),
            new TraceRequest(0, 1100, 3, new long[] {0, 1, 2}));
    }
}
