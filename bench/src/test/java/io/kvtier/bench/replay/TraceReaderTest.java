package io.kvtier.bench.replay;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TraceReaderTest
{
    private static final String GOOD = "{\"timestamp\": 0, \"input_length\": 1100, \"output_length\": 3, \"hash_ids\": [0, 1, 2]}";

    private static List<TraceRequest> read(final String text) throws IOException
    {
        try (TraceReader reader = new TraceReader(new StringReader(text), "t.jsonl"))
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
        try (TraceReader reader = new TraceReader(new StringReader(text), "t.jsonl"))
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
        # what                  | third line                                                                                  | field         | message contains
        truncated JSON          | {"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1, 2             |               | malformed JSON
        not JSON                | hash_ids: [1, 2]                                                                           |               | malformed JSON
        an array                | [1, 2]                                                                                     |               | expected a JSON object, found an array
        two objects             | {"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1]} {}               |               | one object per line
        missing hash_ids        | {"timestamp": 0, "input_length": 1, "output_length": 1}                                   | hash_ids      | missing
        missing timestamp       | {"input_length": 1, "output_length": 1, "hash_ids": [1]}                                  | timestamp     | missing
        hash_ids not an array   | {"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": "1,2"}                | hash_ids      | expected an array of non-negative integers, found a string
        hash_ids null           | {"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": null}                 | hash_ids      | found null
        negative id             | {"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [4, -5]}              | hash_ids[1]   | -5 is negative
        fractional id           | {"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [4.5]}                | hash_ids[0]   | non-integer 4.5
        string id               | {"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": ["4"]}                | hash_ids[0]   | found a string
        id beyond 64 bits       | {"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [99999999999999999999]} | hash_ids[0] | does not fit in 64 bits
        negative length         | {"timestamp": 0, "input_length": -1, "output_length": 1, "hash_ids": [1]}                 | input_length  | -1 is negative
        string timestamp        | {"timestamp": "0", "input_length": 1, "output_length": 1, "hash_ids": [1]}                | timestamp     | found a string
        duplicate field         | {"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1], "hash_ids": [2]} | hash_ids      | appears twice
        """)
    void shouldNameTheLineAndFieldOfMalformedInput(final String what, final String line, final String field, final String message) throws IOException
    {
        try (TraceReader reader = new TraceReader(new StringReader(GOOD + "\n" + GOOD + "\n" + line + "\n" + GOOD + "\n"), "t.jsonl"))
        {
            reader.next();
            reader.next();
            assertThatThrownBy(reader::next)
                .as(what)
                .isInstanceOfSatisfying(TraceFormatException.class, ex ->
                {
                    assertThat(ex.lineNumber()).isEqualTo(3);
                    assertThat(ex.field()).isEqualTo(field);
                    assertThat(ex.getMessage())
                        .startsWith("t.jsonl:3: " + (field == null ? "" : "field \"" + field + "\": "))
                        .contains(message);
                });
        }
    }
}
