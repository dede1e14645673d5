package io.kvtier.metrics;

import com.sun.net.httpserver.HttpServer;
import io.kvtier.client.PageKeyChain;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.config.EngineConfig;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/** A real engine over two POSIX tiers, IPC off, and the metrics endpoint served on a JDK HTTP server on a free loopback port. */
final class MetricsFixture implements AutoCloseable
{
    static final int PAGE_SIZE = 4096;
    private static final AtomicLong SEQUENCE = new AtomicLong();

    final Engine engine;
    final HttpServer server;
    private final HttpClient client = HttpClient.newHttpClient();

    private MetricsFixture(final Engine engine, final MetricsEndpoint endpoint) throws IOException
    {
        this.engine = engine;
        this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext(MetricsEndpoint.PATH, endpoint.handler());
        server.start();
    }

    /** The settings of a small pool in /dev/shm and two POSIX tiers, nvme then shared. */
    static Map<String, String> settings(final Path nvme, final Path shared)
    {
        final Map<String, String> settings = new LinkedHashMap<>();
        settings.put(EngineConfig.POOL_PATH, "/dev/shm/kvtier-metrics-test-" + ProcessHandle.current().pid() + "-" + SEQUENCE.incrementAndGet());
        settings.put(EngineConfig.POOL_PAGE_SIZE, String.valueOf(PAGE_SIZE));
        settings.put(EngineConfig.POOL_SIZE, String.valueOf((long)PAGE_SIZE * 64));
        settings.put(EngineConfig.PIPELINE_TICK, "1ms");
        settings.put("ipc.enabled", "false");
        settings.put("tier.nvme.type", "posix");
        settings.put("tier.nvme.dir", nvme.toString());
        settings.put("tier.shared.type", "posix");
        settings.put("tier.shared.dir", shared.toString());
        return settings;
    }

    static MetricsFixture start(final Path nvme, final Path shared) throws IOException
    {
        final Engine engine = Engine.start(EngineConfig.from(settings(nvme, shared)));
        try
        {
            return new MetricsFixture(engine, MetricsEndpoint.of(engine));
        }
        catch (final IOException | RuntimeException ex)
        {
            engine.close();
            throw ex;
        }
    }

    URI uri()
    {
        return URI.create("http://" + server.getAddress().getHostString() + ":" + server.getAddress().getPort() + MetricsEndpoint.PATH);
    }

    /** GET /metrics, with {@code accept} as the Accept header when it is not null. */
    HttpResponse<String> get(final String accept) throws IOException, InterruptedException
    {
        final HttpRequest.Builder request = HttpRequest.newBuilder(uri()).GET();
        if (accept != null)
        {
            request.header("Accept", accept);
        }
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Fills the session's chain with {@code n} keys derived from {@code salt}. */
    static void keys(final Session session, final long salt, final int n)
    {
        final PageKeyChain keys = session.keys();
        keys.clear();
        for (int i = 0; i < n; i++)
        {
            keys.add(salt, i * 0x9E3779B97F4A7C15L + 1);
        }
    }

    /** Reserves, fills and commits keys [from, from + count); returns the pages committed. */
    static int write(final Session session, final int from, final int count)
    {
        session.reserve(from, count);
        for (int i = from; i < from + count; i++)
        {
            if (session.status(i) == PageEntryStatus.RESERVED)
            {
                final MemorySegment page = session.page(i);
                for (int b = 0; b < 100; b++)
                {
                    page.set(ValueLayout.JAVA_BYTE, b, (byte)(i + b));
                }
                session.payloadLength(i, 100);
            }
        }
        return session.commit(from, count);
    }

    @Override
    public void close()
    {
        server.stop(0);
        engine.close();
    }
}
