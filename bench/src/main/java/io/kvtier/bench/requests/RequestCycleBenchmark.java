package io.kvtier.bench.requests;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.kvtier.bench.Median;
import io.kvtier.client.IpcConnection;
import io.kvtier.client.IpcException;
import io.kvtier.client.PageKeyChain;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.client.protocol.RequestDescriptor;
import io.kvtier.client.protocol.ResponseDecoder;
import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.config.EngineConfig;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code kvtier bench requests}' measurement: what one inference request costs in the engine's round
 * trips, done the fine-grained way (LOOKUP, ACQUIRE, RELEASE, RESERVE, COMMIT: five round trips) and
 * with protocol 1.3's combined requests (LOOKUP_AND_LOCK, COMMIT_AND_RELEASE: two), in the same run,
 * through an in-process {@link Session} and through an IPC client in this process (the same rings,
 * doorbell and futex waits as a client of another process).
 *
 * <p>One request (a cycle) is a chain of {@link Plan#prefixPages} pages committed beforehand, which it
 * pins and reads (8 bytes of each), then {@link Plan#freshPages} keys never seen, for which it reserves
 * pages, writes 64 bytes into each and commits them. Both ways do exactly that work and check every
 * answer (a wrong count ends the run). The fresh pages are evicted after each cycle, off the clock, so
 * the pool never fills. After a warm-up, {@link Plan#rounds} rounds each time a block of
 * {@link Plan#cyclesPerBlock} cycles each way, in alternating order, so load from elsewhere on the
 * machine falls on both alike. The figures are the medians of the blocks' microseconds per cycle; the
 * ratio is the median of each round's combined over fine-grained (below 1: the combined requests are
 * cheaper).
 */
public final class RequestCycleBenchmark
{
    private static final int PAYLOAD = 64;

    /**
     * How much to measure.
     *
     * @param prefixPages    committed pages each request pins and reads
     * @param freshPages     pages each request reserves, writes and commits
     * @param rounds         timed rounds, each one block each way
     * @param cyclesPerBlock requests per block
     * @param warmupRounds   rounds run first and not counted
     */
    public record Plan(int prefixPages, int freshPages, int rounds, int cyclesPerBlock, int warmupRounds)
    {
        /** Validates. */
        public Plan
        {
            if (prefixPages < 1 || freshPages < 1 || prefixPages + freshPages > 4096)
            {
                throw new IllegalArgumentException("prefix pages " + prefixPages + " and fresh pages " + freshPages
                    + " must each be at least 1, and together at most 4096");
            }
            if (rounds < 1 || cyclesPerBlock < 1 || warmupRounds < 0)
            {
                throw new IllegalArgumentException("rounds " + rounds + " and cycles per block " + cyclesPerBlock
                    + " must be at least 1, warm-up rounds " + warmupRounds + " at least 0");
            }
        }
    }

    /**
     * One way of reaching the engine.
     *
     * @param path               {@code in-process} or {@code ipc}
     * @param fineMicros         median microseconds per request with the five fine-grained requests (the baseline)
     * @param combinedMicros     median microseconds per request with the two combined requests
     * @param ratio              median of the rounds' combined over fine-grained
     * @param requestsPerRound   requests each way per round
     */
    public record Figure(String path, double fineMicros, double combinedMicros, double ratio, int requestsPerRound)
    {
    }

    /**
     * The figures of one run.
     *
     * @param plan    what was measured
     * @param figures in-process, then IPC
     */
    public record Result(Plan plan, List<Figure> figures)
    {
        /** @return one JSON object with a {@code results} array */
        public String toJson()
        {
            final StringWriter text = new StringWriter();
            try (JsonGenerator json = new JsonFactory().createGenerator(text))
            {
                json.writeStartObject();
                json.writeStringField("bench", "requests");
                json.writeStringField("measured", "LOOKUP_AND_LOCK then COMMIT_AND_RELEASE: 2 round trips per request");
                json.writeStringField("baseline", "LOOKUP, ACQUIRE, RELEASE, RESERVE, COMMIT: 5 round trips per request, the same work,"
                    + " interleaved in the same run");
                json.writeNumberField("prefix_pages", plan.prefixPages());
                json.writeNumberField("fresh_pages", plan.freshPages());
                json.writeNumberField("rounds", plan.rounds());
                json.writeNumberField("requests_per_block", plan.cyclesPerBlock());
                json.writeArrayFieldStart("results");
                for (final Figure figure : figures)
                {
                    json.writeStartObject();
                    json.writeStringField("path", figure.path());
                    json.writeNumberField("fine_us_per_request", round(figure.fineMicros()));
                    json.writeNumberField("combined_us_per_request", round(figure.combinedMicros()));
                    json.writeNumberField("combined_vs_fine", round(figure.ratio()));
                    json.writeEndObject();
                }
                json.writeEndArray();
                json.writeEndObject();
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException("a StringWriter does not fail", ex);
            }
            return text.toString();
        }

        /** @return the figures as a table */
        public String toText()
        {
            final StringBuilder out = new StringBuilder();
            out.append(String.format(Locale.ROOT, "one request of %d cached and %d new pages (%d rounds of %d requests each way, alternating)%n",
                plan.prefixPages(), plan.freshPages(), plan.rounds(), plan.cyclesPerBlock()));
            out.append(String.format(Locale.ROOT, "%-12s %22s %22s %10s%n", "path", "5 requests (µs/req)", "2 combined (µs/req)", "ratio"));
            for (final Figure figure : figures)
            {
                out.append(String.format(Locale.ROOT, "%-12s %22.2f %22.2f %10.3f%n", figure.path(), figure.fineMicros(), figure.combinedMicros(),
                    figure.ratio()));
            }
            out.append("5 requests: LOOKUP, ACQUIRE, RELEASE, RESERVE, COMMIT (the baseline); 2 combined: LOOKUP_AND_LOCK, COMMIT_AND_RELEASE")
                .append(System.lineSeparator());
            return out.toString();
        }
    }

    /** One way of doing a request, timed: returns nothing, throws when an answer is not what the work needs. */
    private interface Cycle
    {
        void run(long freshBase) throws Exception;
    }

    private RequestCycleBenchmark()
    {
    }

    /**
     * Runs the plan against an engine it starts with its pool in {@code directory}.
     *
     * @param directory where the pool and the socket go
     * @param plan      what to measure
     * @return the figures
     * @throws IOException if the engine cannot start
     */
    public static Result measure(final Path directory, final Plan plan) throws IOException
    {
        final Path dir = Files.createTempDirectory(directory, "kvtier-bench-requests-");
        final int keys = plan.prefixPages() + plan.freshPages();
        final Map<String, String> settings = new LinkedHashMap<>();
        settings.put(EngineConfig.POOL_PATH, dir.resolve("pool").toString());
        settings.put(EngineConfig.POOL_PAGE_SIZE, "4096");
        settings.put(EngineConfig.POOL_SIZE, String.valueOf(4096L * (4L * keys + 64)));
        settings.put("ipc.enabled", "true");
        final Path socket = dir.resolve("s.sock");
        settings.put("ipc.socket-path", socket.toString());
        final List<Figure> figures = new ArrayList<>();
        try (Engine engine = Engine.start(EngineConfig.from(settings));
             Session session = engine.openSession();
             IpcConnection client = IpcConnection.connect(socket, keys))
        {
            figures.add(run("in-process", plan, new InProcess(session, plan)));
            figures.add(run("ipc", plan, new OverIpc(client, plan)));
        }
        catch (final IOException | RuntimeException ex)
        {
            throw ex;
        }
        catch (final Exception ex)
        {
            throw new IllegalStateException("the benchmark failed: " + ex.getMessage(), ex);
        }
        finally
        {
            try (var files = Files.list(dir))
            {
                for (final Path file : files.toList())
                {
                    Files.deleteIfExists(file);
                }
            }
            Files.deleteIfExists(dir);
        }
        return new Result(plan, List.copyOf(figures));
    }

    /** One way of reaching the engine, and its two ways of doing a request, interleaved. */
    private interface Route
    {
        void setUp() throws Exception;

        Cycle fine();

        Cycle combined();

        void evictFresh(long freshBase) throws Exception;
    }

    private static Figure run(final String name, final Plan plan, final Route path) throws Exception
    {
        path.setUp();
        final double[] fine = new double[plan.rounds()];
        final double[] combined = new double[plan.rounds()];
        final double[] ratios = new double[plan.rounds()];
        long fresh = 1L << 40;
        for (int round = -plan.warmupRounds(); round < plan.rounds(); round++)
        {
            final boolean fineFirst = (round & 1) == 0;
            double fineMicros = 0;
            double combinedMicros = 0;
            for (int way = 0; way < 2; way++)
            {
                final boolean isFine = (way == 0) == fineFirst;
                final Cycle cycle = isFine ? path.fine() : path.combined();
                long nanos = 0;
                for (int i = 0; i < plan.cyclesPerBlock(); i++)
                {
                    final long began = System.nanoTime();
                    cycle.run(fresh);
                    nanos += System.nanoTime() - began;
                    path.evictFresh(fresh);
                    fresh += plan.freshPages();
                }
                final double micros = nanos / 1e3 / plan.cyclesPerBlock();
                if (isFine)
                {
                    fineMicros = micros;
                }
                else
                {
                    combinedMicros = micros;
                }
            }
            if (round >= 0)
            {
                fine[round] = fineMicros;
                combined[round] = combinedMicros;
                ratios[round] = combinedMicros / fineMicros;
            }
        }
        return new Figure(name, Median.of(fine), Median.of(combined), Median.of(ratios), plan.cyclesPerBlock());
    }

    private static void expect(final String what, final long actual, final long expected)
    {
        if (actual != expected)
        {
            throw new IllegalStateException(what + ": " + actual + ", expected " + expected);
        }
    }

    /** Through an in-process session. */
    private static final class InProcess implements Route
    {
        private final Session session;
        private final int prefix;
        private final int n;

        InProcess(final Session session, final Plan plan)
        {
            this.session = session;
            this.prefix = plan.prefixPages();
            this.n = plan.prefixPages() + plan.freshPages();
        }

        private void chain(final long freshBase)
        {
            final PageKeyChain keys = session.keys();
            keys.clear();
            for (int i = 0; i < prefix; i++)
            {
                keys.add(1, i + 1);
            }
            for (int i = prefix; i < n; i++)
            {
                keys.add(2, freshBase + i);
            }
        }

        private long read()
        {
            long sum = 0;
            for (int i = 0; i < prefix; i++)
            {
                sum += session.page(i).get(ValueLayout.JAVA_LONG_UNALIGNED, 0);
            }
            return sum;
        }

        private void write()
        {
            for (int i = prefix; i < n; i++)
            {
                final MemorySegment page = session.page(i);
                for (int b = 0; b < PAYLOAD; b += 8)
                {
                    page.set(ValueLayout.JAVA_LONG_UNALIGNED, b, session.keys().low(i) + b);
                }
                session.payloadLength(i, PAYLOAD);
            }
        }

        @Override
        public void setUp()
        {
            chain(0);
            session.reserve(0, prefix);
            for (int i = 0; i < prefix; i++)
            {
                session.page(i).set(ValueLayout.JAVA_LONG_UNALIGNED, 0, i);
                session.payloadLength(i, PAYLOAD);
            }
            expect("prefix pages committed", session.commit(0, prefix), prefix);
        }

        @Override
        public Cycle fine()
        {
            return freshBase ->
            {
                chain(freshBase);
                expect("lookup", session.lookup(0, n), prefix);
                expect("acquire", session.acquire(0, n), prefix);
                read();
                session.release(0, n);
                expect("reserve", session.reserve(prefix, n - prefix), n - prefix);
                write();
                expect("commit", session.commit(prefix, n - prefix), n - prefix);
            };
        }

        @Override
        public Cycle combined()
        {
            return freshBase ->
            {
                chain(freshBase);
                expect("lookupAndLock", session.lookupAndLock(0, n, RequestDescriptor.RESERVE_ALL), prefix);
                expect("reserved", session.reservedPages(), n - prefix);
                read();
                write();
                expect("commitAndRelease", session.commitAndRelease(0, n, false), n - prefix);
            };
        }

        @Override
        public void evictFresh(final long freshBase)
        {
            expect("evicted", session.evict(prefix, n - prefix), n - prefix);
        }
    }

    /** Through an IPC client in this process. */
    private static final class OverIpc implements Route
    {
        private final IpcConnection client;
        private final int prefix;
        private final int n;
        private final long[] highs;
        private final long[] lows;
        private final int[] lengths;
        private final int[] pages;

        OverIpc(final IpcConnection client, final Plan plan)
        {
            this.client = client;
            this.prefix = plan.prefixPages();
            this.n = plan.prefixPages() + plan.freshPages();
            this.highs = new long[n];
            this.lows = new long[n];
            this.lengths = new int[n];
            this.pages = new int[n];
            Arrays.fill(lengths, PAYLOAD);
        }

        private void chain(final long freshBase)
        {
            for (int i = 0; i < prefix; i++)
            {
                highs[i] = 3;
                lows[i] = i + 1;
            }
            for (int i = prefix; i < n; i++)
            {
                highs[i] = 4;
                lows[i] = freshBase + i;
            }
        }

        /** Reads the entries' pages, then lets the response go. */
        private void entries(final ResponseDecoder r, final int from, final int count)
        {
            for (int i = 0; i < count; i++)
            {
                pages[from + i] = r.entryPageId(i);
            }
            client.releaseResponse();
        }

        private long read()
        {
            long sum = 0;
            for (int i = 0; i < prefix; i++)
            {
                sum += client.pool().get(ValueLayout.JAVA_LONG_UNALIGNED, client.pageOffset(pages[i]));
            }
            return sum;
        }

        private void write()
        {
            for (int i = prefix; i < n; i++)
            {
                final long at = client.pageOffset(pages[i]);
                for (int b = 0; b < PAYLOAD; b += 8)
                {
                    client.pool().set(ValueLayout.JAVA_LONG_UNALIGNED, at + b, lows[i] + b);
                }
            }
        }

        private int call(final long requestId, final String what, final int expected) throws IpcException
        {
            final ResponseDecoder r = client.awaitResponse(requestId);
            expect(what + " status", r.status(), 0);
            expect(what, r.resultCount(), expected);
            return r.entryCount();
        }

        @Override
        public void setUp() throws Exception
        {
            chain(0);
            final ResponseDecoder r = client.awaitResponse(client.send(MessageType.RESERVE, 0, prefix, highs, lows));
            expect("prefix reserved", r.resultCount(), prefix);
            entries(r, 0, prefix);
            for (int i = 0; i < prefix; i++)
            {
                client.pool().set(ValueLayout.JAVA_LONG_UNALIGNED, client.pageOffset(pages[i]), i);
            }
            call(client.sendCommit(0, prefix, lengths), "prefix committed", prefix);
            client.releaseResponse();
        }

        @Override
        public Cycle fine()
        {
            return freshBase ->
            {
                chain(freshBase);
                call(client.send(MessageType.LOOKUP, 0, n, highs, lows), "lookup", prefix);
                client.releaseResponse();
                final ResponseDecoder acquired = client.awaitResponse(client.send(MessageType.ACQUIRE, 0, n, RequestDescriptor.FLAG_KEYS_IN_SLOTS));
                expect("acquire", acquired.resultCount(), prefix);
                entries(acquired, 0, prefix);
                read();
                call(client.send(MessageType.RELEASE, 0, n, 0), "release", prefix);
                client.releaseResponse();
                final ResponseDecoder reserved = client.awaitResponse(client.send(MessageType.RESERVE, prefix, n - prefix,
                    RequestDescriptor.FLAG_KEYS_IN_SLOTS));
                expect("reserve", reserved.resultCount(), n - prefix);
                entries(reserved, prefix, n - prefix);
                write();
                call(client.sendCommit(prefix, n - prefix, lengths), "commit", n - prefix);
                client.releaseResponse();
            };
        }

        @Override
        public Cycle combined()
        {
            return freshBase ->
            {
                chain(freshBase);
                final ResponseDecoder locked = client.awaitResponse(client.sendLookupAndLock(0, n, RequestDescriptor.RESERVE_ALL, highs, lows));
                expect("lookupAndLock", locked.resultCount(), prefix);
                expect("reserved", locked.reservedPages(), n - prefix);
                expect("last slot", locked.entryStatus(n - 1), PageEntryStatus.RESERVED);
                entries(locked, 0, n);
                read();
                write();
                call(client.sendCommitAndRelease(0, n, lengths, false), "commitAndRelease", n - prefix);
                client.releaseResponse();
            };
        }

        @Override
        public void evictFresh(final long freshBase) throws Exception
        {
            call(client.send(MessageType.EVICT, prefix, n - prefix, RequestDescriptor.FLAG_KEYS_IN_SLOTS), "evicted", n - prefix);
            client.releaseResponse();
        }
    }

    private static double round(final double value)
    {
        return Math.round(value * 1000) / 1000.0;
    }
}
