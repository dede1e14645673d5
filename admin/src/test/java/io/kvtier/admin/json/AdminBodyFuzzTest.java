package io.kvtier.admin.json;

import io.kvtier.client.testing.FuzzTries;
import io.kvtier.spi.PageKey;
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

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The admin API's JSON bodies as a client might send them: any bytes, and objects made of the bodies'
 * own fields and unknown ones, with values of every JSON shape (page keys, namespaces and durations
 * right, wrong and extreme), fields repeated, bodies cut short or with a byte changed. Binding and
 * checking either make the engine's request or refuse with a 400 {@link RequestException} whose
 * message names the field it blames; nothing else escapes (the server would answer it as a 500), and
 * an accepted request holds exactly the keys the body gave.
 */
@AddLifecycleHook(FuzzTries.class)
class AdminBodyFuzzTest
{
    private static final AtomicLong RUNS = new AtomicLong();
    private static final AtomicLong ACCEPTED = new AtomicLong();

    private static final List<String> FIELDS = List.of("source", "target", "keys", "namespace", "min_age", "fraction", "limit", "method", "retention",
        "dry_run", "tier", "ttl", "minAge", "dryRun", "other", "", "keys[0]");

    private static final List<String> STRINGS = List.of("nvme", "a", "", " ", "00112233445566778899aabbccddeeff", "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF",
        "+0112233445566778899aabbccddeeff", "0011223344556677", "0000000000000000", "00000000000000000000000000000000", "g0112233445566778899aabbccddeef",
        "0x112233445566778899aabbccddeeff", "00112233445566778899aabbccddeef", "001122334455667", "\u0661\u0662", "30s", "0s", "-1s", "1h", "0", "1.5ms",
        "9999999999999999999h", "106751h", "1e3s", ".s", "1..2s", "\u0661s", "copy", "mark", "both", "move", "keep-source", "MOVE", "Copy", "x".repeat(200),
        "\u0000", "\\u0000", "\uD83D\uDE00");

    @Property(tries = 2_000)
    void anyBodyIsARequestOrRefusedNamingTheField(@ForAll("routes") final Route route, @ForAll("bodies") final byte[] body)
    {
        RUNS.incrementAndGet();
        final Object request;
        try
        {
            request = route.check.apply(body);
        }
        catch (final RequestException ex)
        {
            assertThat(ex.status()).isEqualTo(400);
            assertThat(ex.getMessage()).isNotBlank();
            if (ex.field() != null)
            {
                assertThat(ex.getMessage()).as("a refusal names the field it blames").contains(ex.field());
            }
            return;
        }
        ACCEPTED.incrementAndGet();
        assertThat(request).isNotNull();
        final String text = new String(body, StandardCharsets.UTF_8).toLowerCase(Locale.ROOT);
        final List<PageKey> keys = switch (request)
        {
            case io.kvtier.engine.operations.MigrateRequest m -> m.keys();
            case io.kvtier.engine.operations.EvictRequest e -> e.keys();
            case io.kvtier.engine.operations.MarkRequest k -> k.keys();
            default -> throw new AssertionError("unexpected request " + request);
        };
        for (final PageKey key : keys)
        {
            assertThat(text).as("an accepted key is one the body gave").contains(key.toHex().toLowerCase(Locale.ROOT));
        }
    }

    @Property(tries = 1_000)
    void anyPathSegmentIsAnIdOrRefused(@ForAll("segments") final String segment)
    {
        RUNS.incrementAndGet();
        try
        {
            final long id = Json.id(segment, "id");
            assertThat(segment).as("an id accepted").matches("[0-9]+");
            assertThat(new java.math.BigInteger(segment)).isEqualTo(java.math.BigInteger.valueOf(id));
        }
        catch (final RequestException ex)
        {
            assertThat(ex.status()).isEqualTo(400);
            assertThat(ex.field()).isEqualTo("id");
            assertThat(segment.matches("[0-9]+") && new java.math.BigInteger(segment).bitLength() < 64).as("a refused id: %s", segment).isFalse();
        }
    }

    /** Found by this test: a field named twice inside an array's object was blamed by its path, which the message did not name. */
    @Example
    void aFieldNamedTwiceInsideAnArrayIsNamedByItsPathInTheMessage()
    {
        final byte[] body = "{\"source\":[{\"source\":\"nvme\",\"source\":\"nvme\"}]}".getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> Json.read(body, Bodies.Migrate.class))
            .isInstanceOfSatisfying(RequestException.class, ex ->
            {
                assertThat(ex.field()).isEqualTo("source[0].source");
                assertThat(ex.getMessage()).contains("source[0].source").contains("Duplicate field");
            });
    }

    /** Found by this test: ids with a sign or digits other than ASCII's were read as numbers ("-0" as 0, "+7" and "\u0667" as 7). */
    @Example
    void anIdIsAsciiDigitsOnly()
    {
        for (final String id : List.of("-0", "+7", "\u0667", "\u0661\u0662", " 7", "7 "))
        {
            assertThatThrownBy(() -> Json.id(id, "id")).as(id)
                .isInstanceOfSatisfying(RequestException.class, ex -> assertThat(ex.field()).isEqualTo("id"));
        }
        assertThat(Json.id("7", "id")).isEqualTo(7);
        assertThat(Json.id("007", "id")).isEqualTo(7);
        assertThat(Json.id("9223372036854775807", "id")).isEqualTo(Long.MAX_VALUE);
        assertThatThrownBy(() -> Json.id("9223372036854775808", "id")).isInstanceOf(RequestException.class);
    }

    /** A route that takes a body, and the checks it runs on it. */
    record Route(String name, Function<byte[], Object> check)
    {
        @Override
        public String toString()
        {
            return name;
        }
    }

    @Provide
    Arbitrary<Route> routes()
    {
        return Arbitraries.of(
            new Route("POST /v1/migrate", body -> Json.migrate(Json.read(body, Bodies.Migrate.class))),
            new Route("POST /v1/evict", body -> Json.evict(Json.read(body, Bodies.Evict.class))),
            new Route("POST /v1/marks", body -> Json.mark(Json.read(body, Bodies.Mark.class))));
    }

    @Provide
    Arbitrary<String> segments()
    {
        return Arbitraries.oneOf(Arbitraries.strings().ofMaxLength(25), Arbitraries.longs().map(String::valueOf),
            Arbitraries.of("", "0", "+1", "-0", "00", "9223372036854775807", "9223372036854775808", "1 ", "\u0661"),
            Arbitraries.strings().withChars("0123456789").ofMinLength(1).ofMaxLength(20));
    }

    @Provide
    Arbitrary<byte[]> bodies()
    {
        final Arbitrary<byte[]> random = Arbitraries.bytes().array(byte[].class).ofMaxSize(200);
        final Arbitrary<String> object = Combinators.combine(Arbitraries.of(FIELDS), value(2)).as((field, value) -> quote(field) + ":" + value)
            .list().ofMaxSize(6).map(fields -> "{" + String.join(",", fields) + "}");
        final Arbitrary<String> other = Arbitraries.of("", " ", "null", "[]", "{}", "{", "}", "\"x\"", "1", "{}{}", "{} x", "{\"tier\":\"a\"}//",
            "{\"tier\":\"a\",}", "{'tier':'a'}", "\uFEFF{}");
        final Arbitrary<byte[]> text = Arbitraries.frequencyOf(Tuple.of(3, object), Tuple.of(4, wellTyped()), Tuple.of(1, other))
            .map(s -> s.getBytes(StandardCharsets.UTF_8));
        final Arbitrary<byte[]> mutated = Combinators.combine(text, Arbitraries.integers().between(0, 1000), Arbitraries.integers().between(0, 255),
            Arbitraries.integers().between(0, 2)).as((bytes, at, to, how) ->
            {
                if (bytes.length == 0)
                {
                    return bytes;
                }
                if (how == 0)
                {
                    bytes[at % bytes.length] = (byte)(int)to;
                    return bytes;
                }
                return java.util.Arrays.copyOf(bytes, at % bytes.length);
            });
        return Arbitraries.frequencyOf(Tuple.of(1, random), Tuple.of(6, text), Tuple.of(2, mutated));
    }

    /** Objects of one route's fields, each present or not, with values mostly of the right type and often right. */
    private static Arbitrary<String> wellTyped()
    {
        final Arbitrary<String> tier = Arbitraries.of("\"nvme\"", "\"shared\"", "\"\"", "1");
        final Arbitrary<String> keys = Arbitraries.strings().withChars("0123456789abcdefABCDEF").ofLength(32)
            .map(AdminBodyFuzzTest::quote).list().ofMaxSize(3).map(items -> "[" + String.join(",", items) + "]");
        final Arbitrary<String> namespace = Arbitraries.of("\"00112233445566778899aabbccddeeff\"", "\"0011223344556677\"",
            "\"00000000000000000000000000000000\"", "\"0000000000000000\"", "\"001122\"", "null");
        final Arbitrary<String> duration = Arbitraries.of("\"30s\"", "\"0s\"", "\"1h\"", "\"1.5ms\"", "\"-1s\"", "\"9999999999999999999h\"",
            "\"106752d\"", "\"106751h\"", "\"\u0661s\"", "\"1 s\"", "\"s\"", "5");
        final Arbitrary<String> fraction = Arbitraries.of("0.5", "1", "1.0", "0", "-0.5", "1.5", "1e-300", "0.1e1", "\"0.5\"");
        final Arbitrary<String> limit = Arbitraries.of("1", "1000", "0", "-1", "2147483647", "2147483648", "1.0", "\"5\"");
        final Arbitrary<String> method = Arbitraries.of("\"copy\"", "\"mark\"", "\"both\"", "\"COPY\"", "\"move\"");
        final Arbitrary<String> retention = Arbitraries.of("\"move\"", "\"keep-source\"", "\"keep_source\"", "\"copy\"");
        final Arbitrary<String> flag = Arbitraries.of("true", "false", "null", "1", "\"true\"");
        final Arbitrary<List<String>> migrate = Combinators.combine(List.of(field("source", tier), field("target", tier), field("keys", keys),
            field("namespace", namespace), field("min_age", duration), field("fraction", fraction), field("limit", limit), field("method", method),
            field("retention", retention), field("dry_run", flag))).as(fields -> fields);
        final Arbitrary<List<String>> evict = Combinators.combine(List.of(field("tier", tier), field("keys", keys), field("namespace", namespace),
            field("limit", limit), field("dry_run", flag))).as(fields -> fields);
        final Arbitrary<List<String>> mark = Combinators.combine(List.of(field("tier", tier), field("keys", keys), field("namespace", namespace),
            field("ttl", duration))).as(fields -> fields);
        return Arbitraries.oneOf(migrate, evict, mark)
            .map(fields -> "{" + String.join(",", fields.stream().filter(f -> !f.isEmpty()).toList()) + "}");
    }

    /** @return the field with a value, or nothing (an empty string) a third of the time */
    private static Arbitrary<String> field(final String name, final Arbitrary<String> value)
    {
        return Arbitraries.frequencyOf(Tuple.of(2, value.map(v -> quote(name) + ":" + v)), Tuple.of(1, Arbitraries.just("")));
    }

    private static Arbitrary<String> value(final int depth)
    {
        final Arbitrary<String> scalar = Arbitraries.frequencyOf(
            Tuple.of(6, Arbitraries.of(STRINGS).map(AdminBodyFuzzTest::quote)),
            Tuple.of(1, Arbitraries.strings().ofMaxLength(20).map(AdminBodyFuzzTest::quote)),
            Tuple.of(2, Arbitraries.of("0", "1", "-1", "0.5", "1.0", "1e0", "1e400", "-0", "2147483647", "2147483648", "9223372036854775808",
                "1.0000000001", "0.0000001", "true", "false", "null", "NaN", "01", ".5", "1.", "-")),
            Tuple.of(1, Arbitraries.longs().map(String::valueOf)),
            Tuple.of(1, Arbitraries.doubles().map(String::valueOf)));
        if (depth == 0)
        {
            return scalar;
        }
        final Arbitrary<String> array = value(depth - 1).list().ofMaxSize(4).map(items -> "[" + String.join(",", items) + "]");
        final Arbitrary<String> keys = Arbitraries.strings().withChars("0123456789abcdefABCDEF").ofLength(32).map(AdminBodyFuzzTest::quote)
            .list().ofMaxSize(4).map(items -> "[" + String.join(",", items) + "]");
        final Arbitrary<String> object = Combinators.combine(Arbitraries.of(FIELDS), value(depth - 1)).as((f, v) -> quote(f) + ":" + v)
            .list().ofMaxSize(3).map(fields -> "{" + String.join(",", fields) + "}");
        return Arbitraries.frequencyOf(Tuple.of(6, scalar), Tuple.of(2, keys), Tuple.of(1, array), Tuple.of(1, object));
    }

    private static String quote(final String text)
    {
        final StringBuilder quoted = new StringBuilder("\"");
        for (final char c : text.toCharArray())
        {
            if (c == '"' || c == '\\')
            {
                quoted.append('\\').append(c);
            }
            else if (c < 0x20)
            {
                quoted.append(String.format("\\u%04x", (int)c));
            }
            else
            {
                quoted.append(c);
            }
        }
        return quoted.append('"').toString();
    }

    @AfterContainer
    static void report()
    {
        // The figures docs/RELIABILITY.md quotes: inputs run per target.
        System.out.println("AdminBodyFuzzTest: " + RUNS.get() + " bodies and path segments run, " + ACCEPTED.get()
            + " bodies accepted, the rest refused naming the field");
    }
}
