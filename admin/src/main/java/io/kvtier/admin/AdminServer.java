package io.kvtier.admin;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import io.kvtier.admin.json.Answers;
import io.kvtier.admin.json.Bodies;
import io.kvtier.admin.json.Json;
import io.kvtier.admin.json.RequestException;
import io.kvtier.engine.operations.EngineOperations;
import io.kvtier.engine.operations.Health;
import io.kvtier.engine.operations.MigrationReport;
import io.kvtier.engine.operations.OperationException;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;

/**
 * The HTTP admin API (docs/admin-api.md) over an engine's {@link EngineOperations}, on the JDK's HTTP
 * server. Each request passes, in order: the concurrency limit (503 with Retry-After beyond it), the route
 * (404) and its methods (405 with Allow), the bearer token for every method but GET and HEAD (401 without
 * one, 403 with a wrong one or when no token file is configured), the body size limit (413) and the JSON
 * checks (400 naming the field); only then does it reach the engine, whose refusals are answered by
 * {@link OperationException.Kind}. A refused request changes nothing.
 */
public final class AdminServer implements AutoCloseable
{
    private static final System.Logger LOG = System.getLogger(AdminServer.class.getName());
    private static final String JSON = "application/json; charset=utf-8";
    private static final String MIGRATIONS = "/v1/migrations/";
    private static final String MARKS = "/v1/marks/";
    /** Seconds a client is told to wait after a 503. */
    private static final String RETRY_AFTER = "1";

    private final HttpServer server;
    private final ExecutorService executor;
    private final EngineOperations operations;
    private final byte[] tokenDigest;
    private final long maxBody;
    private final Semaphore permits;
    private final Map<String, HttpHandler> extraRoutes;

    private AdminServer(final Builder builder, final EngineOperations operations) throws IOException
    {
        this.operations = Objects.requireNonNull(operations, "operations");
        this.tokenDigest = builder.token == null ? null : sha256(builder.token);
        this.maxBody = builder.maxBody;
        this.permits = new Semaphore(builder.maxConcurrent);
        this.extraRoutes = Map.copyOf(builder.routes);
        // The JDK server bounds the time a request may take to arrive (seconds), read once per JVM: set it
        // unless the operator did, so that a client that sends headers and then nothing does not hold a thread.
        if (System.getProperty("sun.net.httpserver.maxReqTime") == null)
        {
            System.setProperty("sun.net.httpserver.maxReqTime", "30");
        }
        this.server = HttpServer.create(builder.address, 0);
        // One virtual thread per exchange: the permits, not the pool, bound the work, and a request beyond
        // them still gets a thread to be answered 503 on.
        this.executor = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("kvtier-admin-", 0).factory());
        server.setExecutor(executor);
        server.createContext("/", this::exchange);
        server.start();
    }

    /** @return a builder of a server on 127.0.0.1, a free port, no token, and the default limits */
    public static Builder builder()
    {
        return new Builder();
    }

    /** @return the address the server is bound to (with the port it took when asked for port 0) */
    public InetSocketAddress address()
    {
        return server.getAddress();
    }

    /** @return the URL of the API's root, e.g. {@code http://127.0.0.1:8470/} */
    public URI uri()
    {
        final InetSocketAddress address = address();
        final String host = address.getAddress().getHostAddress();
        return URI.create("http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + address.getPort() + "/");
    }

    /** @return whether calls that change something are taken (with the token), or all refused for want of a token file */
    public boolean hasToken()
    {
        return tokenDigest != null;
    }

    /** Stops taking requests, lets those in flight finish for up to a second, and stops the threads. */
    @Override
    public void close()
    {
        server.stop(1);
        executor.shutdownNow();
    }

    private void exchange(final HttpExchange exchange)
    {
        try (exchange)
        {
            if (!permits.tryAcquire())
            {
                exchange.getResponseHeaders().set("Retry-After", RETRY_AFTER);
                answer(exchange, 503, new Answers.Error("too many admin requests at once (admin.max-concurrent): retry later", null));
                return;
            }
            try
            {
                route(exchange);
            }
            finally
            {
                permits.release();
            }
        }
        catch (final IOException ex)
        {
            LOG.log(System.Logger.Level.DEBUG, "admin API: cannot answer " + exchange.getRequestMethod() + " " + exchange.getRequestURI(), ex);
        }
    }

    private void route(final HttpExchange exchange) throws IOException
    {
        final String path = exchange.getRequestURI().getPath();
        final String method = exchange.getRequestMethod();
        final HttpHandler extra = extraRoutes.get(path);
        if (extra != null)
        {
            if (!isRead(method) && !authorized(exchange))
            {
                return;
            }
            extra.handle(exchange);
            return;
        }
        final List<String> allowed = allowed(path);
        if (allowed.isEmpty())
        {
            answer(exchange, 404, new Answers.Error("no such route: " + path + " (docs/admin-api.md lists them)", null));
            return;
        }
        if (!allowed.contains(method))
        {
            exchange.getResponseHeaders().set("Allow", String.join(", ", allowed));
            answer(exchange, 405, new Answers.Error(method + " is not allowed on " + path + "; allowed: " + String.join(", ", allowed), null));
            return;
        }
        if (!isRead(method) && !authorized(exchange))
        {
            return;
        }
        try
        {
            final Answer answer = serve(method, path, exchange);
            answer.headers().forEach((name, value) -> exchange.getResponseHeaders().set(name, value));
            answer(exchange, answer.status(), answer.body());
            if (!isRead(method))
            {
                LOG.log(System.Logger.Level.INFO, "admin API: {0} {1} from {2}: {3}", method, path, exchange.getRemoteAddress(), answer.status());
            }
        }
        catch (final RequestException ex)
        {
            if (ex.status() == 503)
            {
                exchange.getResponseHeaders().set("Retry-After", RETRY_AFTER);
            }
            answer(exchange, ex.status(), new Answers.Error(ex.getMessage(), ex.field()));
        }
        catch (final OperationException ex)
        {
            final int status = switch (ex.kind())
            {
                case INVALID -> 400;
                case NOT_FOUND -> 404;
                case UNAVAILABLE -> 503;
            };
            if (status == 503)
            {
                exchange.getResponseHeaders().set("Retry-After", RETRY_AFTER);
            }
            answer(exchange, status, new Answers.Error(ex.getMessage(), ex.field()));
        }
        catch (final RuntimeException ex)
        {
            LOG.log(System.Logger.Level.ERROR, "admin API: " + method + " " + path + " failed", ex);
            answer(exchange, 500, new Answers.Error("the engine failed: " + ex, null));
        }
    }

    /** What a route answers: its status, its extra headers and its body. */
    private record Answer(int status, Map<String, String> headers, Object body)
    {
        Answer(final int status, final Object body)
        {
            this(status, Map.of(), body);
        }
    }

    private Answer serve(final String method, final String path, final HttpExchange exchange) throws IOException
    {
        return switch (path)
        {
            case "/health" -> health();
            case "/v1/tiers" -> new Answer(200, Answers.Tiers.of(operations.tiers()));
            case "/v1/migrations" -> new Answer(200, Answers.Migrations.of(operations.migrations()));
            case "/v1/migrate" ->
            {
                final MigrationReport report = operations.migrate(Json.migrate(Json.read(body(exchange), Bodies.Migrate.class)));
                yield "dry-run".equals(report.state())
                    ? new Answer(200, Answers.Migration.of(report))
                    : new Answer(202, Map.of("Location", MIGRATIONS + report.id()), Answers.Migration.of(report));
            }
            case "/v1/evict" -> new Answer(200, Answers.Evict.of(operations.evict(Json.evict(Json.read(body(exchange), Bodies.Evict.class)))));
            case "/v1/marks" ->
            {
                if ("GET".equals(method))
                {
                    yield new Answer(200, Answers.Marks.of(operations.marks()));
                }
                final Answers.Mark mark = Answers.Mark.of(operations.mark(Json.mark(Json.read(body(exchange), Bodies.Mark.class))));
                yield new Answer(201, Map.of("Location", MARKS + mark.id()), mark);
            }
            default ->
            {
                if (path.startsWith(MIGRATIONS))
                {
                    final long id = Json.id(path.substring(MIGRATIONS.length()), "id");
                    final Optional<MigrationReport> report = operations.migration(id);
                    if (report.isEmpty())
                    {
                        throw new RequestException(404, "id", "no migration " + id + " (the engine remembers only the most recent ones)");
                    }
                    yield new Answer(200, Answers.Migration.of(report.get()));
                }
                final long id = Json.id(path.substring(MARKS.length()), "id");
                if (!operations.unmark(id))
                {
                    throw new RequestException(404, "id", "no mark " + id + " in force");
                }
                yield new Answer(200, new Answers.Unmarked(id, true));
            }
        };
    }

    private Answer health()
    {
        Health health;
        try
        {
            health = operations.health();
        }
        catch (final RuntimeException ex)
        {
            health = new Health(false, false, "the engine did not answer: " + ex.getMessage());
        }
        return new Answer(health.live() && health.ready() ? 200 : 503, Answers.HealthAnswer.of(health));
    }

    /** @return the methods the route allows, or none when there is no such route */
    private static List<String> allowed(final String path)
    {
        return switch (path)
        {
            case "/health", "/v1/tiers", "/v1/migrations" -> List.of("GET");
            case "/v1/migrate", "/v1/evict" -> List.of("POST");
            case "/v1/marks" -> List.of("GET", "POST");
            default ->
            {
                if (path.startsWith(MIGRATIONS) && path.length() > MIGRATIONS.length() && path.indexOf('/', MIGRATIONS.length()) < 0)
                {
                    yield List.of("GET");
                }
                if (path.startsWith(MARKS) && path.length() > MARKS.length() && path.indexOf('/', MARKS.length()) < 0)
                {
                    yield List.of("DELETE");
                }
                yield List.of();
            }
        };
    }

    private static boolean isRead(final String method)
    {
        return "GET".equals(method) || "HEAD".equals(method);
    }

    /** Answers 401 or 403 and returns false unless the request carries the token. */
    private boolean authorized(final HttpExchange exchange) throws IOException
    {
        if (tokenDigest == null)
        {
            answer(exchange, 403, new Answers.Error("admin.token-file is not set: the admin API takes no calls that change anything"
                + " (only GET routes); set it to a file of mode 0600 holding a token", null));
            return false;
        }
        final String header = exchange.getRequestHeaders().getFirst("Authorization");
        final String scheme = "Bearer ";
        if (header == null || !header.regionMatches(true, 0, scheme, 0, scheme.length()))
        {
            exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer realm=\"kvtier-admin\"");
            answer(exchange, 401, new Answers.Error(header == null
                ? "this call needs the admin token: send Authorization: Bearer <token> (the text of admin.token-file)"
                : "the Authorization header must be Bearer <token>", null));
            return false;
        }
        // Both sides hashed first: the comparison then takes the same time whatever the token's length and bytes.
        final byte[] presented = sha256(header.substring(scheme.length()).trim().getBytes(StandardCharsets.UTF_8));
        if (!MessageDigest.isEqual(tokenDigest, presented))
        {
            answer(exchange, 403, new Answers.Error("wrong admin token", null));
            return false;
        }
        return true;
    }

    /** @return the request's body, refusing one above the limit (413) without reading more than the limit and a byte */
    private byte[] body(final HttpExchange exchange) throws IOException
    {
        final String length = exchange.getRequestHeaders().getFirst("Content-Length");
        if (length != null)
        {
            final long declared;
            try
            {
                declared = Long.parseLong(length.trim());
            }
            catch (final NumberFormatException ex)
            {
                throw new RequestException(400, null, "malformed Content-Length: " + length);
            }
            if (declared > maxBody)
            {
                throw tooLarge(declared + " bytes");
            }
        }
        try (InputStream in = exchange.getRequestBody())
        {
            final byte[] body = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, maxBody + 1));
            if (body.length > maxBody)
            {
                throw tooLarge("more than " + maxBody + " bytes");
            }
            return body;
        }
    }

    private RequestException tooLarge(final String size)
    {
        return new RequestException(413, null, "the request body is " + size + ", above admin.max-body = " + maxBody + " bytes");
    }

    private static void answer(final HttpExchange exchange, final int status, final Object body) throws IOException
    {
        final byte[] bytes = Json.write(body);
        final Headers headers = exchange.getResponseHeaders();
        headers.set("Content-Type", JSON);
        headers.set("Cache-Control", "no-store");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody())
        {
            out.write(bytes);
        }
    }

    private static byte[] sha256(final byte[] bytes)
    {
        try
        {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        }
        catch (final NoSuchAlgorithmException ex)
        {
            throw new IllegalStateException("SHA-256 is missing from this JDK", ex);
        }
    }

    /**
     * How to start an {@link AdminServer}: the address, the token, the limits and any routes of its own a
     * caller mounts beside the API's (such as {@code GET /metrics}).
     */
    public static final class Builder
    {
        /** The default {@code admin.max-body}. */
        public static final long DEFAULT_MAX_BODY = 1L << 20;
        /** The default {@code admin.max-concurrent}. */
        public static final int DEFAULT_MAX_CONCURRENT = 8;

        private InetSocketAddress address = new InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0);
        private byte[] token;
        private long maxBody = DEFAULT_MAX_BODY;
        private int maxConcurrent = DEFAULT_MAX_CONCURRENT;
        private final Map<String, HttpHandler> routes = new LinkedHashMap<>();

        private Builder()
        {
        }

        /**
         * @param address where to listen; port 0 takes a free port ({@link AdminServer#address()} tells which)
         * @return this
         */
        public Builder listen(final InetSocketAddress address)
        {
            this.address = Objects.requireNonNull(address, "address");
            return this;
        }

        /**
         * @param token the bearer token mutating calls must send, or {@code null} to refuse them all (403)
         * @return this
         */
        public Builder token(final byte[] token)
        {
            if (token != null && token.length == 0)
            {
                throw new IllegalArgumentException("an empty admin token would admit anyone");
            }
            this.token = token == null ? null : Arrays.copyOf(token, token.length);
            return this;
        }

        /**
         * @param maxBody the largest request body taken, in bytes, at least 1
         * @return this
         */
        public Builder maxBody(final long maxBody)
        {
            if (maxBody < 1)
            {
                throw new IllegalArgumentException("maxBody must be at least 1 byte, got " + maxBody);
            }
            this.maxBody = maxBody;
            return this;
        }

        /**
         * @param maxConcurrent requests served at once, at least 1
         * @return this
         */
        public Builder maxConcurrent(final int maxConcurrent)
        {
            if (maxConcurrent < 1)
            {
                throw new IllegalArgumentException("maxConcurrent must be at least 1, got " + maxConcurrent);
            }
            this.maxConcurrent = maxConcurrent;
            return this;
        }

        /**
         * Mounts a handler of the caller's at an exact path, beside the API's routes: it gets every method
         * (answering 405 itself where it must), within the concurrency limit, and only with the token for a
         * method other than GET and HEAD.
         *
         * @param path    the path, e.g. {@code /metrics}
         * @param handler what answers it
         * @return this
         * @throws IllegalArgumentException when the path is the API's own or already mounted
         */
        public Builder route(final String path, final HttpHandler handler)
        {
            Objects.requireNonNull(handler, "handler");
            if (path == null || !path.startsWith("/") || !allowed(path).isEmpty() || path.startsWith("/v1/") || routes.containsKey(path))
            {
                throw new IllegalArgumentException("cannot mount a handler at " + path + ": a path from /, not the API's own nor mounted twice");
            }
            routes.put(path, handler);
            return this;
        }

        /**
         * @param operations the engine's operations the API serves
         * @return the started server
         * @throws IOException when it cannot bind its address
         */
        public AdminServer start(final EngineOperations operations) throws IOException
        {
            return new AdminServer(this, operations);
        }
    }
}
