package io.kvtier.bench.metrics;

import io.kvtier.client.PageKeyChain;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.metrics.MetricsEndpoint;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a metrics scrape costs the engine thread: an in-process request loop (a lookup and an acquire and release
 * of 16 pool pages, three requests, each through the engine thread) timed in rounds that alternate, in one run,
 * between no other thread, a thread scraping {@code /metrics} (text format, no HTTP) as fast as it can, and a
 * thread spinning as hard without touching the pool, which tells the scrape's own cost from the CPU any busy
 * thread takes on a small machine. Prints, for each mode, the median and range over the rounds of the wall-clock
 * nanoseconds per request and of the engine thread's ({@code kvtier-pipeline}) CPU nanoseconds per request, and
 * the scrapes per second and time per scrape.
 *
 * <pre>java --enable-native-access=ALL-UNNAMED -cp bench/target/benchmarks.jar io.kvtier.bench.metrics.ScrapeCost [rounds] [loops-per-round]</pre>
 */
public final class ScrapeCost
{
    private static final int KEYS = 16;

    private ScrapeCost()
    {
    }

    /** The modes, in the order each round runs them. */
    private enum Mode
    {
        ALONE, SCRAPER, SPINNER
    }

    /**
     * @param args rounds (default 15) and loops per round (default 3,000)
     * @throws Exception if the engine fails
     */
    public static void main(final String[] args) throws Exception
    {
        final int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 15;
        final int loops = args.length > 1 ? Integer.parseInt(args[1]) : 3_000;
        final Map<String, String> settings = new LinkedHashMap<>();
        settings.put(EngineConfig.POOL_PATH, "/dev/shm/kvtier-scrape-cost-" + ProcessHandle.current().pid());
        settings.put(EngineConfig.POOL_PAGE_SIZE, "4096");
        settings.put(EngineConfig.POOL_SIZE, String.valueOf(4096L * 256));
        settings.put("ipc.enabled", "false");
        try (Engine engine = Engine.start(EngineConfig.from(settings));
             Session session = engine.openSession())
        {
            final MetricsEndpoint endpoint = MetricsEndpoint.of(engine);
            final PageKeyChain keys = session.keys();
            for (int i = 0; i < KEYS; i++)
            {
                keys.add(42, i * 0x9E3779B97F4A7C15L + 1);
            }
            session.reserve(0, KEYS);
            for (int i = 0; i < KEYS; i++)
            {
                if (session.status(i) == PageEntryStatus.RESERVED)
                {
                    session.payloadLength(i, 64);
                }
            }
            session.commit(0, KEYS);
            final long[][] nanosPerRequest = new long[Mode.values().length][rounds];
            final long[][] engineCpuPerRequest = new long[Mode.values().length][rounds];
            final java.lang.management.ThreadMXBean cpu = java.lang.management.ManagementFactory.getThreadMXBean();
            final long engineThread = Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals("kvtier-pipeline")).findFirst()
                .orElseThrow(() -> new IllegalStateException("no kvtier-pipeline thread: the engine thread has another name")).threadId();
            final long[] scrapes = new long[1];
            final long[] scrapeNanos = new long[1];
            // Warm up every path, the scrape's included.
            loop(session, loops);
            for (int i = 0; i < 200; i++)
            {
                endpoint.writeText(new ByteArrayOutputStream());
            }
            for (int round = 0; round < rounds; round++)
            {
                for (final Mode mode : Mode.values())
                {
                    final AtomicBoolean stop = new AtomicBoolean();
                    final AtomicLong done = new AtomicLong();
                    final Thread other = switch (mode)
                    {
                        case ALONE -> null;
                        case SCRAPER -> Thread.ofPlatform().name("scraper").start(() -> scrape(endpoint, stop, done));
                        case SPINNER -> Thread.ofPlatform().name("spinner").start(() -> spin(stop, done));
                    };
                    final long startCpu = cpu.getThreadCpuTime(engineThread);
                    final long start = System.nanoTime();
                    loop(session, loops);
                    final long elapsed = System.nanoTime() - start;
                    engineCpuPerRequest[mode.ordinal()][round] = (cpu.getThreadCpuTime(engineThread) - startCpu) / (3L * loops);
                    stop.set(true);
                    if (other != null)
                    {
                        other.join();
                    }
                    nanosPerRequest[mode.ordinal()][round] = elapsed / (3L * loops);
                    if (mode == Mode.SCRAPER)
                    {
                        scrapes[0] += done.get();
                        scrapeNanos[0] += elapsed;
                    }
                }
            }
            System.out.printf("request loop: lookup + acquire + release of %d pool pages, %d loops per round, %d rounds alternating%n", KEYS, loops, rounds);
            for (final Mode mode : Mode.values())
            {
                final long[] wall = nanosPerRequest[mode.ordinal()].clone();
                final long[] engineCpu = engineCpuPerRequest[mode.ordinal()].clone();
                Arrays.sort(wall);
                Arrays.sort(engineCpu);
                System.out.printf("%-8s wall median %6d ns/request (range %d-%d); engine thread CPU median %6d ns/request (range %d-%d)%n",
                    mode.name().toLowerCase(java.util.Locale.ROOT), wall[rounds / 2], wall[0], wall[rounds - 1], engineCpu[rounds / 2], engineCpu[0],
                    engineCpu[rounds - 1]);
            }
            final ByteArrayOutputStream one = new ByteArrayOutputStream();
            endpoint.writeText(one);
            System.out.printf("scraper: %.0f scrapes/s while the loop ran, %.1f µs per scrape, %d bytes each%n", scrapes[0] * 1e9 / scrapeNanos[0],
                scrapeNanos[0] / 1e3 / Math.max(1, scrapes[0]), one.size());
        }
    }

    private static void loop(final Session session, final int loops)
    {
        for (int i = 0; i < loops; i++)
        {
            if (session.lookup(0, KEYS) != KEYS || session.acquire(0, KEYS) != KEYS)
            {
                throw new IllegalStateException("the pool lost a page of the loop's keys");
            }
            session.release();
        }
    }

    private static void scrape(final MetricsEndpoint endpoint, final AtomicBoolean stop, final AtomicLong done)
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream(64 * 1024);
        try
        {
            while (!stop.get())
            {
                out.reset();
                endpoint.writeText(out);
                done.incrementAndGet();
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    private static void spin(final AtomicBoolean stop, final AtomicLong done)
    {
        long x = 1;
        while (!stop.get())
        {
            for (int i = 0; i < 10_000; i++)
            {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
            done.incrementAndGet();
        }
        if (x == 0)
        {
            System.out.println();
        }
    }
}
