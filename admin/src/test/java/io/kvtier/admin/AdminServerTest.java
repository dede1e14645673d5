package io.kvtier.admin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpHandler;
import io.kvtier.engine.operations.EvictRequest;
import io.kvtier.engine.operations.Health;
import io.kvtier.engine.operations.MarkRequest;
import io.kvtier.engine.operations.MigrateRequest;
import io.kvtier.engine.operations.MigrationMethod;
import io.kvtier.engine.operations.OperationException;
import io.kvtier.engine.operations.Retention;
import io.kvtier.spi.PageKey;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The admin API over real HTTP (the JDK's client against the server on a free loopback port) with a test
 * double of the engine's operations: every route, and every refusal, each of which must leave the double
 * untouched.
 */
class AdminServerTest
{
    static final String TOKEN = "test-token-0123456789abcdef";
    private static final String KEY_A = "a306ce302f3ed8d29a2b9b308d8a004e";
    private static final String KEY_B = "00000000000000000000000000000001";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long MAX_BODY = 4096;

    private final RecordingOperations operations = new RecordingOperations();
    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private AdminServer server;

    @BeforeEach
    void start() throws IOException
    {
        server = AdminServer.builder().token(TOKEN.getBytes(StandardCharsets.UTF_8)).maxBody(MAX_BODY).maxConcurrent(2).start(operations);
    }

    @AfterEach
    void stop()
    {
        operations.hold = false;
        operations.release.release(1000);
        server.close();
        client.close();
    }

    private URI uri(final String path)
    {
        return server.uri().resolve(path);
    }

    private HttpResponse<String> get(final String path) throws Exception
    {
        return client.send(HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(30)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> send(final String method, final String path, final String body, final String token) throws Exception
    {
        final HttpRequest.Builder request = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(30))
            .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
            .header("Content-Type", "application/json");
        if (token != null)
        {
            request.header("Authorization", "Bearer " + token);
        }
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> post(final String path, final String body) throws Exception
    {
        return send("POST", path, body, TOKEN);
    }

    private static JsonNode json(final HttpResponse<String> response) throws IOException
    {
        assertThat(response.headers().firstValue("Content-Type")).as(response.body()).hasValue("application/json; charset=utf-8");
        return JSON.readTree(response.body());
    }

    /** Asserts a refusal: its status, the field it names (or none), words of its message, and that nothing reached the engine. */
    private void assertRefused(final HttpResponse<String> response, final int status, final String field, final String... words) throws IOException
    {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
        final JsonNode body = json(response);
        assertThat(body.path("field").isNull() ? null : body.path("field").asText()).as(response.body()).isEqualTo(field);
        if (words.length > 0)
        {
            assertThat(body.path("error").asText()).contains(words);
        }
        assertThat(operations.calls).as("a refused request must not reach the engine").isEmpty();
    }

    @Test
    void shouldListTheTiers() throws Exception
    {
        final HttpResponse<String> response = get("/v1/tiers");
        assertThat(response.statusCode()).isEqualTo(200);
        final JsonNode tiers = json(response).path("tiers");
        assertThat(tiers).hasSize(2);
        assertThat(tiers.get(0).path("name").asText()).isEqualTo("nvme");
        assertThat(tiers.get(0).path("used_bytes").asLong()).isEqualTo(3L << 30);
        assertThat(tiers.get(0).path("capacity_bytes").asLong()).isEqualTo(4L << 30);
        assertThat(tiers.get(0).path("evict_high").asDouble()).isEqualTo(0.9);
        assertThat(tiers.get(0).path("counters").path("hits").asLong()).isEqualTo(5);
        assertThat(tiers.get(1).path("capacity_bytes").isNull()).as("no capacity is null, not Long.MAX_VALUE").isTrue();
        assertThat(operations.calls).containsExactly(new RecordingOperations.Call("tiers", null));
    }

    @Test
    void shouldStartAMigrationOfExplicitKeysWithTheToken() throws Exception
    {
        final HttpResponse<String> response = post("/v1/migrate",
            "{\"source\":\"nvme\",\"target\":\"shared\",\"keys\":[\"" + KEY_A + "\",\"" + KEY_B.toUpperCase() + "\"],\"method\":\"both\","
                + "\"retention\":\"keep-source\"}");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(202);
        assertThat(response.headers().firstValue("Location")).hasValue("/v1/migrations/41");
        final JsonNode report = json(response);
        assertThat(report.path("id").asLong()).isEqualTo(41);
        assertThat(report.path("method").asText()).isEqualTo("both");
        assertThat(report.path("retention").asText()).isEqualTo("keep-source");
        assertThat(report.path("refusals").path("too_young").asLong()).isEqualTo(2);
        assertThat(report.path("started").asText()).isEqualTo("2026-11-27T10:00:00Z");
        assertThat(operations.calls).containsExactly(new RecordingOperations.Call("migrate", new MigrateRequest("nvme", "shared",
            List.of(PageKey.fromHex(KEY_A), PageKey.fromHex(KEY_B)), 0, Duration.ZERO, 1.0, 2, MigrationMethod.BOTH, Retention.KEEP_SOURCE, false)));
    }

    @Test
    void shouldPassTheSamplingRuleAndAnswerADryRunWithOk() throws Exception
    {
        final HttpResponse<String> response = post("/v1/migrate",
            "{\"source\":\"nvme\",\"target\":\"shared\",\"namespace\":\"0d8d5b6bec68e56e0123456789abcdef\",\"min_age\":\"10m\","
                + "\"fraction\":0.25,\"limit\":50,\"dry_run\":true}");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        assertThat(json(response).path("state").asText()).isEqualTo("dry-run");
        assertThat(operations.calls).containsExactly(new RecordingOperations.Call("migrate", new MigrateRequest("nvme", "shared", List.of(),
            0x0d8d5b6bec68e56eL, Duration.ofMinutes(10), 0.25, 50, MigrationMethod.COPY, Retention.MOVE, true)));
    }

    @Test
    void shouldTakeANamespaceTagAndTheRootOfAZeroTagAsOne() throws Exception
    {
        assertThat(post("/v1/evict", "{\"tier\":\"nvme\",\"namespace\":\"0d8d5b6bec68e56e\"}").statusCode()).isEqualTo(200);
        assertThat(post("/v1/evict", "{\"tier\":\"nvme\",\"namespace\":\"0000000000000000ffffffffffffffff\"}").statusCode()).isEqualTo(200);
        assertThat(operations.calls).extracting(call -> ((EvictRequest) call.argument()).namespace()).containsExactly(0x0d8d5b6bec68e56eL, 1L);
    }

    @Test
    void shouldShowMigrationsAndOneByIdAndAnswer404ForAnUnknownOne() throws Exception
    {
        final HttpResponse<String> all = get("/v1/migrations");
        assertThat(all.statusCode()).isEqualTo(200);
        assertThat(json(all).path("migrations")).extracting(node -> node.path("id").asLong()).containsExactly(41L, 40L);

        final HttpResponse<String> one = get("/v1/migrations/41");
        assertThat(one.statusCode()).isEqualTo(200);
        assertThat(json(one).path("ended").asText()).isEqualTo("2026-11-27T10:00:03Z");

        final HttpResponse<String> unknown = get("/v1/migrations/5");
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(json(unknown).path("field").asText()).isEqualTo("id");
        assertThat(operations.calls).containsExactly(new RecordingOperations.Call("migrations", null),
            new RecordingOperations.Call("migration", 41L), new RecordingOperations.Call("migration", 5L));
    }

    @Test
    void shouldEvict() throws Exception
    {
        final HttpResponse<String> response = post("/v1/evict", "{\"tier\":\"shared\",\"keys\":[\"" + KEY_A + "\"],\"dry_run\":true}");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        final JsonNode report = json(response);
        assertThat(report.path("removed").asLong()).isEqualTo(3);
        assertThat(report.path("refusals").path("not_held").asLong()).isEqualTo(1);
        assertThat(report.path("dry_run").asBoolean()).isTrue();
        assertThat(operations.calls).containsExactly(new RecordingOperations.Call("evict",
            new EvictRequest("shared", List.of(PageKey.fromHex(KEY_A)), 0, 1, true)));
    }

    @Test
    void shouldMarkListAndUnmark() throws Exception
    {
        final HttpResponse<String> marked = post("/v1/marks", "{\"tier\":\"shared\",\"namespace\":\"0d8d5b6bec68e56e\",\"ttl\":\"2h\"}");
        assertThat(marked.statusCode()).as(marked.body()).isEqualTo(201);
        assertThat(marked.headers().firstValue("Location")).hasValue("/v1/marks/7");
        assertThat(json(marked).path("namespace").asText()).isEqualTo("0d8d5b6bec68e56e");
        assertThat(json(marked).path("expires").asText()).isEqualTo("2026-11-27T12:00:00Z");

        final HttpResponse<String> listed = get("/v1/marks");
        assertThat(listed.statusCode()).isEqualTo(200);
        assertThat(json(listed).path("marks")).extracting(node -> node.path("id").asLong()).containsExactly(7L);

        final HttpResponse<String> unmarked = send("DELETE", "/v1/marks/7", null, TOKEN);
        assertThat(unmarked.statusCode()).isEqualTo(200);
        assertThat(json(unmarked).path("removed").asBoolean()).isTrue();
        final HttpResponse<String> again = send("DELETE", "/v1/marks/7", null, TOKEN);
        assertThat(again.statusCode()).isEqualTo(404);
        assertThat(json(again).path("field").asText()).isEqualTo("id");
        assertThat(operations.calls).extracting(RecordingOperations.Call::method).containsExactly("mark", "marks", "unmark", "unmark");
        assertThat(operations.calls.get(0).argument()).isEqualTo(new MarkRequest("shared", List.of(), 0x0d8d5b6bec68e56eL, Duration.ofHours(2)));
    }

    @Test
    void shouldAnswerHealthWith200WhenReadyAnd503WithTheReasonOtherwise() throws Exception
    {
        final HttpResponse<String> ready = get("/health");
        assertThat(ready.statusCode()).isEqualTo(200);
        assertThat(json(ready).path("ready").asBoolean()).isTrue();

        operations.health = new Health(true, false, "tier shared is out of service");
        final HttpResponse<String> notReady = get("/health");
        assertThat(notReady.statusCode()).isEqualTo(503);
        assertThat(json(notReady).path("live").asBoolean()).isTrue();
        assertThat(json(notReady).path("reason").asText()).isEqualTo("tier shared is out of service");

        operations.failure = new IllegalStateException("engine closed");
        final HttpResponse<String> failing = get("/health");
        assertThat(failing.statusCode()).isEqualTo(503);
        assertThat(json(failing).path("live").asBoolean()).isFalse();
        assertThat(json(failing).path("reason").asText()).contains("engine closed");
    }

    @Test
    void shouldRefuseMalformedJson() throws Exception
    {
        assertRefused(post("/v1/migrate", "{\"source\":\"nvme\","), 400, null, "malformed JSON");
        assertRefused(post("/v1/migrate", "{\"source\":\"nvme\"} trailing"), 400, null);
        assertRefused(post("/v1/migrate", "[1,2]"), 400, null, "JSON object");
        assertRefused(post("/v1/migrate", ""), 400, null, "empty");
        assertRefused(post("/v1/migrate", "{\"source\":\"nvme\",\"source\":\"shared\",\"target\":\"shared\"}"), 400, "source", "Duplicate");
    }

    @Test
    void shouldRefuseAnUnknownFieldNamingIt() throws Exception
    {
        assertRefused(post("/v1/migrate", "{\"source\":\"nvme\",\"target\":\"shared\",\"dryrun\":true}"), 400, "dryrun",
            "unknown field \"dryrun\"", "dry_run");
        assertRefused(post("/v1/marks", "{\"tier\":\"nvme\",\"keys\":[\"" + KEY_A + "\"],\"ttl\":\"1h\",\"force\":1}"), 400, "force", "unknown field");
    }

    @Test
    void shouldRefuseWrongTypesNamingTheField() throws Exception
    {
        assertRefused(post("/v1/migrate", "{\"source\":\"nvme\",\"target\":\"shared\",\"limit\":\"10\"}"), 400, "limit", "whole number", "a string");
        assertRefused(post("/v1/migrate", "{\"source\":\"nvme\",\"target\":\"shared\",\"limit\":2.5}"), 400, "limit", "whole number");
        assertRefused(post("/v1/migrate", "{\"source\":7,\"target\":\"shared\"}"), 400, "source", "a string");
        assertRefused(post("/v1/migrate", "{\"source\":\"nvme\",\"target\":\"shared\",\"dry_run\":\"yes\"}"), 400, "dry_run", "true or false");
        assertRefused(post("/v1/migrate", "{\"source\":\"nvme\",\"target\":\"shared\",\"keys\":\"" + KEY_A + "\"}"), 400, "keys", "array");
        assertRefused(post("/v1/evict", "{\"tier\":\"nvme\",\"keys\":[\"" + KEY_A + "\",5]}"), 400, "keys[1]", "a string");
    }

    @Test
    void shouldRefuseBadValuesNamingTheField() throws Exception
    {
        assertRefused(post("/v1/migrate", "{\"target\":\"shared\"}"), 400, "source", "missing field source");
        assertRefused(post("/v1/migrate", "{\"source\":\"nvme\",\"target\":\"shared\",\"keys\":[\"" + KEY_A + "\",\"xyz\"]}"), 400, "keys[1]",
            "keys[1]", "32 hex digits", "\"xyz\"");
        assertRefused(post("/v1/migrate", "{\"source\":\"nvme\",\"target\":\"shared\",\"keys\":[\"" + KEY_A.replace('a', 'g') + "\"]}"), 400, "keys[0]");
        assertRefused(post("/v1/migrate", "{\"source\":\"nvme\",\"target\":\"shared\",\"namespace\":\"abc\"}"), 400, "namespace", "namespace root");
        assertRefused(post("/v1/migrate", "{\"source\":\"nvme\",\"target\":\"shared\",\"namespace\":\"0000000000000000\"}"), 400, "namespace", "never 0");
        assertRefused(post("/v1/migrate", "{\"source\":\"nvme\",\"target\":\"shared\",\"method\":\"teleport\"}"), 400, "method", "copy, mark, both");
        assertRefused(post("/v1/migrate", "{\"source\":\"nvme\",\"target\":\"shared\",\"retention\":\"forever\"}"), 400, "retention", "keep-source");
        assertRefused(post("/v1/migrate", "{\"source\":\"nvme\",\"target\":\"shared\",\"fraction\":0}"), 400, "fraction", "above 0");
        assertRefused(post("/v1/migrate", "{\"source\":\"nvme\",\"target\":\"shared\",\"limit\":0}"), 400, "limit", "at least 1");
        assertRefused(post("/v1/migrate", "{\"source\":\"nvme\",\"target\":\"shared\",\"min_age\":\"10\"}"), 400, "min_age", "unit");
        assertRefused(post("/v1/migrate", "{\"source\":\"nvme\",\"target\":\"shared\",\"keys\":[\"" + KEY_A + "\"],\"fraction\":0.5}"), 400,
            "fraction", "sampling rule");
        assertRefused(post("/v1/marks", "{\"tier\":\"nvme\",\"keys\":[\"" + KEY_A + "\"],\"ttl\":\"0s\"}"), 400, "ttl", "above zero");
        assertRefused(post("/v1/marks", "{\"tier\":\"nvme\",\"keys\":[\"" + KEY_A + "\"]}"), 400, "ttl", "missing field ttl");
        assertRefused(post("/v1/marks", "{\"tier\":\"nvme\",\"ttl\":\"1h\"}"), 400, "keys", "exactly one");
        assertRefused(post("/v1/marks", "{\"tier\":\"nvme\",\"keys\":[\"" + KEY_A + "\"],\"namespace\":\"0d8d5b6bec68e56e\",\"ttl\":\"1h\"}"), 400,
            "namespace", "exactly one");
        assertRefused(get("/v1/migrations/abc"), 400, "id", "whole number");
        assertRefused(send("DELETE", "/v1/marks/-1", null, TOKEN), 400, "id", "whole number");
    }

    @Test
    void shouldRefuseASignedKeyThatPageKeyParsingWouldTake() throws Exception
    {
        // Long.parseUnsignedLong takes a leading '+', so PageKey.fromHex alone would read this as a key.
        assertRefused(post("/v1/evict", "{\"tier\":\"nvme\",\"keys\":[\"+" + KEY_A.substring(1) + "\"]}"), 400, "keys[0]", "32 hex digits");
    }

    @Test
    void shouldRefuseANumberOutOfRangeNamingTheField() throws Exception
    {
        assertRefused(post("/v1/migrate", "{\"source\":\"nvme\",\"target\":\"shared\",\"limit\":10000000000}"), 400, "limit", "limit");
    }

    @Test
    void shouldAnswerAnUnknownTierWith404NamingTheFieldAndTheTier() throws Exception
    {
        final HttpResponse<String> response = post("/v1/migrate", "{\"source\":\"nvme\",\"target\":\"tape\"}");
        assertThat(response.statusCode()).isEqualTo(404);
        assertThat(json(response).path("field").asText()).isEqualTo("target");
        assertThat(json(response).path("error").asText()).contains("tape");
    }

    @Test
    void shouldMapEachKindOfEngineRefusalToItsStatus() throws Exception
    {
        final String body = "{\"source\":\"nvme\",\"target\":\"shared\"}";
        operations.failure = new OperationException(OperationException.Kind.INVALID, "source", "keep-source on a tier without eviction");
        final HttpResponse<String> invalid = post("/v1/migrate", body);
        assertThat(invalid.statusCode()).isEqualTo(400);
        assertThat(json(invalid).path("field").asText()).isEqualTo("source");

        operations.failure = new OperationException(OperationException.Kind.NOT_FOUND, "target", "no tier");
        assertThat(post("/v1/migrate", body).statusCode()).isEqualTo(404);

        operations.failure = new OperationException(OperationException.Kind.UNAVAILABLE, null, "the engine is closing");
        final HttpResponse<String> unavailable = post("/v1/migrate", body);
        assertThat(unavailable.statusCode()).isEqualTo(503);
        assertThat(unavailable.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(json(unavailable).path("error").asText()).isEqualTo("the engine is closing");

        operations.failure = new IllegalStateException("a bug");
        final HttpResponse<String> failed = get("/v1/tiers");
        assertThat(failed.statusCode()).isEqualTo(500);
        assertThat(json(failed).path("error").asText()).contains("a bug");
    }

    @Test
    void shouldAnswer401WithoutAToken() throws Exception
    {
        final HttpResponse<String> response = send("POST", "/v1/migrate", "{\"source\":\"nvme\",\"target\":\"shared\"}", null);
        assertRefused(response, 401, null, "Authorization: Bearer");
        assertThat(response.headers().firstValue("WWW-Authenticate")).hasValueSatisfying(value -> assertThat(value).startsWith("Bearer"));

        final HttpResponse<String> basic = client.send(HttpRequest.newBuilder(uri("/v1/marks/7")).DELETE()
            .header("Authorization", "Basic " + TOKEN).build(), HttpResponse.BodyHandlers.ofString());
        assertRefused(basic, 401, null, "Bearer");
    }

    @Test
    void shouldAnswer403ToAWrongTokenWhateverItsLength() throws Exception
    {
        assertRefused(send("POST", "/v1/evict", "{\"tier\":\"nvme\"}", TOKEN + "x"), 403, null, "wrong admin token");
        assertRefused(send("POST", "/v1/evict", "{\"tier\":\"nvme\"}", TOKEN.substring(1)), 403, null, "wrong admin token");
        assertRefused(send("DELETE", "/v1/marks/7", null, "z"), 403, null, "wrong admin token");
    }

    /**
     * docs/RELIABILITY.md's promise: no call but a read gets past the token. The mutating routes answer 401 or 403 to every
     * method they take; any other method or path is refused as 404 or 405 (which change nothing either), and nothing reaches
     * the engine.
     */
    @Test
    void shouldRefuseEveryCallThatIsNotAReadWithoutItsTokenOnEveryRoute() throws Exception
    {
        final String body = "{\"source\":\"nvme\",\"target\":\"shared\",\"tier\":\"nvme\",\"ttl\":\"1h\"}";
        for (final String call : new String[] {"POST /v1/migrate", "POST /v1/evict", "POST /v1/marks", "DELETE /v1/marks/7"})
        {
            final String method = call.substring(0, call.indexOf(' '));
            final String path = call.substring(call.indexOf(' ') + 1);
            assertThat(send(method, path, body, null).statusCode()).as(call + " without a token").isEqualTo(401);
            assertThat(send(method, path, body, TOKEN + "x").statusCode()).as(call + " with a wrong token").isEqualTo(403);
            assertThat(send(method, path, body, "").statusCode()).as(call + " with an empty token").isIn(401, 403);
        }
        final String[] paths = {"/v1/migrate", "/v1/evict", "/v1/marks", "/v1/marks/7", "/v1/migrations", "/v1/migrations/41", "/v1/tiers", "/metrics",
            "/v1/unknown", "/"};
        for (final String method : new String[] {"POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT-X"})
        {
            for (final String path : paths)
            {
                assertThat(send(method, path, body, null).statusCode()).as(method + " " + path + " without a token").isIn(401, 404, 405);
                assertThat(send(method, path, body, TOKEN + "x").statusCode()).as(method + " " + path + " with a wrong token").isIn(403, 404, 405);
            }
        }
        assertThat(operations.calls).as("a call without its token must not reach the engine").isEmpty();
    }

    @Test
    void shouldCheckTheTokenBeforeReadingTheBody() throws Exception
    {
        assertRefused(send("POST", "/v1/migrate", "not json at all", null), 401, null);
        assertRefused(send("POST", "/v1/migrate", "x".repeat((int) MAX_BODY + 1), "wrong"), 403, null);
    }

    @Test
    void shouldAnswer403ToMutatingCallsWhenNoTokenFileIsSetAndStillServeReads() throws Exception
    {
        server.close();
        server = AdminServer.builder().start(operations);
        assertRefused(send("POST", "/v1/evict", "{\"tier\":\"nvme\"}", TOKEN), 403, null, "admin.token-file is not set");
        assertThat(get("/v1/tiers").statusCode()).isEqualTo(200);
    }

    @Test
    void shouldAnswer413ToADeclaredBodyAboveTheLimitWithoutWaitingForIt() throws Exception
    {
        // The body is declared and never sent: an answer proves the server did not wait to read it.
        final String response = raw("POST /v1/migrate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN + "\r\nContent-Type: application/json\r\n"
            + "Content-Length: " + (MAX_BODY + 1) + "\r\n\r\n");
        assertThat(response).startsWith("HTTP/1.1 413").contains("admin.max-body").contains("\"field\":null");
        assertThat(operations.calls).isEmpty();
    }

    @Test
    void shouldAnswer413ToAChunkedBodyAboveTheLimit() throws Exception
    {
        final String chunk = " ".repeat(1000);
        final StringBuilder request = new StringBuilder("POST /v1/evict HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN
            + "\r\nTransfer-Encoding: chunked\r\n\r\n");
        for (int i = 0; i < 5; i++)
        {
            request.append(Integer.toHexString(chunk.length())).append("\r\n").append(chunk).append("\r\n");
        }
        request.append("0\r\n\r\n");
        assertThat(raw(request.toString())).startsWith("HTTP/1.1 413");
        assertThat(operations.calls).isEmpty();
        assertThat(post("/v1/evict", " ".repeat((int) MAX_BODY - 20) + "{\"tier\":\"nvme\"}").statusCode()).as("a body at the limit is taken")
            .isEqualTo(200);
    }

    @Test
    void shouldAnswer503BeyondTheConcurrencyLimitWhileOthersHang() throws Exception
    {
        operations.hold = true;
        final List<CompletableFuture<HttpResponse<String>>> held = new ArrayList<>();
        for (int i = 0; i < 2; i++)
        {
            held.add(client.sendAsync(HttpRequest.newBuilder(uri("/v1/tiers")).build(), HttpResponse.BodyHandlers.ofString()));
        }
        assertThat(operations.entered.tryAcquire(2, 30, TimeUnit.SECONDS)).as("both requests reach the engine and wait there").isTrue();

        final HttpResponse<String> refused = send("POST", "/v1/evict", "{\"tier\":\"nvme\"}", TOKEN);
        assertThat(refused.statusCode()).isEqualTo(503);
        assertThat(refused.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(json(refused).path("error").asText()).contains("admin.max-concurrent");
        assertThat(get("/health").statusCode()).isEqualTo(503);
        assertThat(operations.calls).extracting(RecordingOperations.Call::method).containsExactly("tiers", "tiers");

        operations.hold = false;
        operations.release.release(2);
        for (final CompletableFuture<HttpResponse<String>> response : held)
        {
            assertThat(response.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        }
        assertThat(post("/v1/evict", "{\"tier\":\"nvme\"}").statusCode()).as("the permits came back").isEqualTo(200);
    }

    @Test
    void shouldAnswer404ToAnUnknownRouteAnd405WithAllowToAWrongMethod() throws Exception
    {
        assertRefused(get("/v1/nothing"), 404, null, "no such route");
        assertRefused(get("/v1/migrations/1/x"), 404, null);
        assertRefused(get("/"), 404, null);

        final HttpResponse<String> wrong = send("DELETE", "/v1/tiers", null, TOKEN);
        assertRefused(wrong, 405, null, "DELETE is not allowed");
        assertThat(wrong.headers().firstValue("Allow")).hasValue("GET");
        final HttpResponse<String> getMigrate = get("/v1/migrate");
        assertRefused(getMigrate, 405, null);
        assertThat(getMigrate.headers().firstValue("Allow")).hasValue("POST");
        assertThat(send("PUT", "/v1/marks", "{}", TOKEN).headers().firstValue("Allow")).hasValue("GET, POST");
        assertThat(get("/v1/marks/3").headers().firstValue("Allow")).hasValue("DELETE");
    }

    @Test
    void shouldServeAMountedRouteAndNeedTheTokenForItsMutatingMethods() throws Exception
    {
        server.close();
        final HttpHandler metrics = exchange ->
        {
            final byte[] body = "kvtier_up 1\n".getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody())
            {
                out.write(body);
            }
        };
        server = AdminServer.builder().token(TOKEN.getBytes(StandardCharsets.UTF_8)).route("/metrics", metrics).start(operations);
        final HttpResponse<String> scraped = get("/metrics");
        assertThat(scraped.statusCode()).isEqualTo(200);
        assertThat(scraped.body()).isEqualTo("kvtier_up 1\n");
        assertThat(send("POST", "/metrics", "", null).statusCode()).isEqualTo(401);
    }

    @Test
    void shouldRefuseToMountOverTheApi()
    {
        final AdminServer.Builder builder = AdminServer.builder();
        final HttpHandler handler = exchange -> exchange.close();
        for (final String path : new String[] {"/v1/tiers", "/health", "/v1/anything", "metrics"})
        {
            org.assertj.core.api.Assertions.assertThatIllegalArgumentException().isThrownBy(() -> builder.route(path, handler)).withMessageContaining(path);
        }
        builder.route("/metrics", handler);
        org.assertj.core.api.Assertions.assertThatIllegalArgumentException().isThrownBy(() -> builder.route("/metrics", handler));
    }

    @Test
    void shouldReportThePortItTookForPortZero()
    {
        assertThat(server.address().getPort()).isPositive();
        assertThat(server.uri().toString()).isEqualTo("http://127.0.0.1:" + server.address().getPort() + "/");
    }

    /** Sends raw bytes and reads the answer's head and body until the server closes or a second passes quiet. */
    private String raw(final String request) throws IOException
    {
        try (Socket socket = new Socket(server.address().getAddress(), server.address().getPort()))
        {
            socket.setSoTimeout(30_000);
            final OutputStream out = socket.getOutputStream();
            out.write(request.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            final InputStream in = socket.getInputStream();
            final StringBuilder answer = new StringBuilder();
            final byte[] buffer = new byte[4096];
            while (true)
            {
                final int read = in.read(buffer);
                if (read < 0)
                {
                    break;
                }
                answer.append(new String(buffer, 0, read, StandardCharsets.US_ASCII));
                final int head = answer.indexOf("\r\n\r\n");
                if (head >= 0)
                {
                    final java.util.regex.Matcher length = java.util.regex.Pattern.compile("(?i)content-length: (\\d+)").matcher(answer);
                    if (length.find() && answer.length() >= head + 4 + Integer.parseInt(length.group(1)))
                    {
                        break;
                    }
                }
            }
            return answer.toString();
        }
    }
}
