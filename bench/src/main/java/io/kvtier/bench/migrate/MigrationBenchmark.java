package io.kvtier.bench.migrate;

import io.kvtier.bench.workload.PagePattern;
import io.kvtier.client.PageKeyChain;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.operations.EngineOperations;
import io.kvtier.engine.operations.MigrateRequest;
import io.kvtier.engine.operations.MigrationMethod;
import io.kvtier.engine.operations.MigrationReport;
import io.kvtier.engine.operations.Retention;
import io.kvtier.engine.operations.TierReport;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.spi.PageKey;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

/**
 * {@code kvtier bench migrate}'s measurement: an engine in this process (IPC off) on two POSIX L3 tiers,
 * {@code fast} then {@code slow}, each in a directory of the run's own.
 *
 * <p>Throughput: each run writes {@link Plan#pages} new pages, which their backups put in {@code fast},
 * evicts them from the pool, and asks {@link EngineOperations#migrate} to copy every one of them to
 * {@code slow} under {@code move}, at the concurrency asked for and a rate limit far above any disk
 * ({@code migration.fast.*}: an operator's migration takes its rate and concurrency from its source's
 * strategy, whose trigger the run never reaches). The time is from the call to the report's end. Beside
 * it, in the same run and alternating which goes first, {@link RawCopy} copies as many files of the
 * same size (a page's file in the tier: payload and its 4 KiB frame block) between the same two
 * directories, on one thread and on as many threads as the migration's concurrency.
 *
 * <p>Foreground latency: a client {@link Session} acquires and releases the same few pages, resident in
 * the pool, for a fixed number of requests, each timed into an HdrHistogram; once with no migration and
 * once while a migration of {@link Plan#backgroundPages} fresh pages runs (started just before the loop), in
 * alternating order. The share of the loop the migration covered is reported: a loop that outlived its
 * migration measured partly an idle engine.
 *
 * <p>The run checks itself: every migration must copy every page it was asked to, with no failure and no
 * refusal, and at the end every page migrated is read back from L3 and must hold exactly the bytes
 * written. {@link Check#verified} is false otherwise, and the command exits with the integrity code.
 */
public final class MigrationBenchmark
{
    /** Page size when none is given. */
    public static final int DEFAULT_PAGE_BYTES = 64 << 10;
    /** Pages per migration when none is given. */
    public static final int DEFAULT_PAGES = 1024;
    /** Runs when none are given. */
    public static final int DEFAULT_RUNS = 3;
    /** Copies in flight when none is given: the engine's default {@code migration.<source>.concurrency}. */
    public static final int DEFAULT_CONCURRENCY = 16;
    /** Foreground requests per loop when none is given. */
    public static final int DEFAULT_REQUESTS = 10_000;
    /** Pages of the migration under the foreground loop, as a multiple of {@link Plan#pages}, when none is given. */
    public static final int DEFAULT_BACKGROUND_FACTOR = 2;
    /** Pages per foreground request when none is given. */
    public static final int DEFAULT_REQUEST_KEYS = 8;

    /** The bytes of a page's file in a POSIX tier beyond its payload: the frame's trailer block. */
    private static final int FRAME_BLOCK = 4096;
    /** Pages written (and evicted) at a time. */
    private static final int CHUNK = 256;
    /** A rate limit no disk here reaches, so that it never binds. */
    private static final String UNBOUND_RATE = "64GiB";
    private static final long HIGHEST_NANOS = 60_000_000_000L;
    private static final long MIGRATION_TIMEOUT_NANOS = 600_000_000_000L;
    private static final long SALT = 0x6b76746965726dL;

    private MigrationBenchmark()
    {
    }

    /**
     * What to measure.
     *
     * @param fastParent  where the run makes the fast tier's directory (and the raw copy's source files)
     * @param slowParent  where the run makes the slow tier's directory (and the raw copy's targets)
     * @param pageBytes   payload bytes per page, a multiple of 4096
     * @param pages       pages per migration (and per raw copy)
     * @param runs        alternating rounds of each measurement
     * @param concurrency copies in flight in the migration, and threads of the concurrent raw copy
     * @param fsync       the tiers' {@code fsync}, and whether the raw copy forces each file
     * @param requests    foreground requests per loop
     * @param requestKeys pages acquired per foreground request
     * @param backgroundPages pages of the migration that runs under the foreground loop: enough to outlast it
     * @param tierSettings    settings given to both tiers ({@code tier.<name>.KEY}), over the benchmark's
     */
    public record Plan(Path fastParent, Path slowParent, int pageBytes, int pages, int runs, int concurrency, boolean fsync, int requests,
                       int requestKeys, int backgroundPages, Map<String, String> tierSettings)
    {
        /** Validates, naming the option. */
        public Plan
        {
            tierSettings = Map.copyOf(tierSettings);
            for (final String key : tierSettings.keySet())
            {
                if (key.equals("type") || key.equals("dir") || key.equals("fsync") || key.equals("capacity"))
                {
                    throw new IllegalArgumentException("--tier-setting " + key + " is the benchmark's own (use --fast-dir, --slow-dir or --fsync)");
                }
            }
            if (pageBytes <= 0 || pageBytes % 4096 != 0)
            {
                throw new IllegalArgumentException("--page-size " + pageBytes + " must be a positive multiple of 4096 (4KiB)");
            }
            if (pages < 1 || pages > 1_000_000)
            {
                throw new IllegalArgumentException("--pages " + pages + " must be from 1 to 1000000");
            }
            if (runs < 1 || runs > 100)
            {
                throw new IllegalArgumentException("--runs " + runs + " must be from 1 to 100");
            }
            if (concurrency < 1 || concurrency > 4096)
            {
                throw new IllegalArgumentException("--concurrency " + concurrency + " must be from 1 to 4096 (as migration.<source>.concurrency)");
            }
            if (requests < 1)
            {
                throw new IllegalArgumentException("--requests " + requests + " must be at least 1");
            }
            if (backgroundPages < 1 || backgroundPages > 1_000_000)
            {
                throw new IllegalArgumentException("--background-pages " + backgroundPages + " must be from 1 to 1000000");
            }
            if (requestKeys < 1 || requestKeys > CHUNK)
            {
                throw new IllegalArgumentException("--request-pages " + requestKeys + " must be from 1 to " + CHUNK);
            }
        }

        /** @return bytes of one page's file in a POSIX tier */
        int fileBytes()
        {
            return pageBytes + FRAME_BLOCK;
        }
    }

    /**
     * Pages moved in a time.
     *
     * @param pages        pages (or files) copied
     * @param payloadBytes their payload bytes (the figure MiB/s is of)
     * @param nanos        the time taken
     */
    public record Throughput(long pages, long payloadBytes, long nanos)
    {
        /** @return pages per second */
        public double pagesPerSecond()
        {
            return pages * 1e9 / nanos;
        }

        /** @return MiB of payload per second */
        public double mibPerSecond()
        {
            return payloadBytes * 1e9 / nanos / (1 << 20);
        }
    }

    /**
     * One loop's request latencies, in nanoseconds.
     *
     * @param requests requests timed
     * @param p50      median
     * @param p99      99th percentile
     * @param p999     99.9th percentile
     * @param max      the slowest
     */
    public record Latency(long requests, long p50, long p99, long p999, long max)
    {
        static Latency of(final Histogram histogram)
        {
            return new Latency(histogram.getTotalCount(), histogram.getValueAtPercentile(50), histogram.getValueAtPercentile(99),
                histogram.getValueAtPercentile(99.9), histogram.getMaxValue());
        }
    }

    /**
     * One run's figures.
     *
     * @param run              its number, from 1
     * @param migrationFirst   whether the migration (and the loop with a migration) went before its baseline
     * @param migration        the migration's throughput
     * @param rawSingle        the raw copy on one thread
     * @param rawConcurrent    the raw copy on {@link Plan#concurrency} threads
     * @param without          the foreground loop with no migration
     * @param with             the foreground loop while a migration ran
     * @param overlap          the share of the second loop's time the migration was running, in [0, 1]
     * @param backgroundPages  pages the migration during the loop copied
     */
    public record Round(int run, boolean migrationFirst, Throughput migration, Throughput rawSingle, Throughput rawConcurrent, Latency without,
                        Latency with, double overlap, long backgroundPages)
    {
    }

    /**
     * The run's own checks.
     *
     * @param pagesAsked        pages the migrations were asked to copy
     * @param pagesMigrated     pages they copied
     * @param migrationFailures copies that failed
     * @param refusals          pages refused, by reason
     * @param pagesReadBack     pages read back from L3 at the end
     * @param missing           pages not found
     * @param corrupt           pages found without the bytes written
     * @param slowHits          loads the slow tier served (the read-back's pages live there)
     * @param l3Corrupt         the engine's {@code l3_corrupt} counter
     * @param problems          what failed, in words; empty when everything held
     */
    public record Check(long pagesAsked, long pagesMigrated, long migrationFailures, Map<String, Long> refusals, long pagesReadBack, long missing,
                        long corrupt, long slowHits, long l3Corrupt, List<String> problems)
    {
        /** Copies. */
        public Check
        {
            refusals = Map.copyOf(refusals);
            problems = List.copyOf(problems);
        }

        /** @return whether every page asked was migrated and read back byte-exact */
        public boolean verified()
        {
            return problems.isEmpty();
        }
    }

    /**
     * A run's result.
     *
     * @param plan    what was measured
     * @param fastDir the fast tier's directory (removed at the end)
     * @param slowDir the slow tier's directory (removed at the end)
     * @param rounds  each run's figures
     * @param check   the run's checks
     */
    public record Result(Plan plan, Path fastDir, Path slowDir, List<Round> rounds, Check check)
    {
        /** Copies. */
        public Result
        {
            rounds = List.copyOf(rounds);
        }

        /** @return the figures as one JSON object */
        public String toJson()
        {
            return MigrationBenchmarkReport.json(this);
        }

        /** @return the figures as lines of text */
        public String toText()
        {
            return MigrationBenchmarkReport.text(this);
        }
    }

    /**
     * Runs the benchmark.
     *
     * @param plan     what to measure
     * @param progress where to say what runs, or null
     * @return the figures and the checks
     * @throws IOException           if a directory, the pool or a raw copy fails
     * @throws IllegalStateException if the engine refused a page write or a migration never ended
     */
    public static Result measure(final Plan plan, final PrintWriter progress) throws IOException, InterruptedException
    {
        final Path fastRun = Files.createTempDirectory(Files.createDirectories(plan.fastParent()), "kvtier-bench-migrate-fast-");
        Path slowRun = null;
        final Path poolPath = Path.of("/dev/shm/kvtier-bench-migrate-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
        try
        {
            slowRun = Files.createTempDirectory(Files.createDirectories(plan.slowParent()), "kvtier-bench-migrate-slow-");
            try (Engine engine = Engine.start(EngineConfig.from(settings(plan, fastRun.resolve("tier"), slowRun.resolve("tier"), poolPath))))
            {
                return new Run(plan, engine, fastRun, slowRun, progress).measure();
            }
        }
        finally
        {
            deleteTree(fastRun);
            if (slowRun != null)
            {
                deleteTree(slowRun);
            }
            Files.deleteIfExists(poolPath);
        }
    }

    /** The engine's settings: two POSIX tiers, and a strategy on fast whose rate and concurrency the run's migrations take. */
    static Map<String, String> settings(final Plan plan, final Path fast, final Path slow, final Path poolPath)
    {
        final long poolPages = 2L * CHUNK + plan.requestKeys() + 4L * plan.concurrency() + 64;
        // Room for every page the run writes, four times over: fast stays far below the strategy's trigger, which never fires.
        final long fastCapacity = Math.max(1L << 30,
            4L * ((long)(plan.pages() + plan.backgroundPages()) * plan.runs() + plan.requestKeys()) * plan.fileBytes());
        final Map<String, String> settings = new LinkedHashMap<>();
        settings.put(EngineConfig.POOL_PATH, poolPath.toString());
        settings.put(EngineConfig.POOL_PAGE_SIZE, String.valueOf(plan.pageBytes()));
        settings.put(EngineConfig.POOL_SIZE, String.valueOf(poolPages * plan.pageBytes()));
        settings.put(EngineConfig.POLICY_PREFETCH, "off");
        settings.put(EngineConfig.L3_PROBE_PAGES, "0");
        settings.put("ipc.enabled", "false");
        settings.put("l3.tiers", "fast, slow");
        for (final String tier : new String[] {"fast", "slow"})
        {
            settings.put("tier." + tier + ".type", "posix");
            settings.put("tier." + tier + ".dir", (tier.equals("fast") ? fast : slow).toString());
            settings.put("tier." + tier + ".fsync", String.valueOf(plan.fsync()));
            // 256 directories made at start rather than 65,792, as bench tier and the demo do.
            settings.put("tier." + tier + ".fanout-levels", "1");
            for (final Map.Entry<String, String> setting : plan.tierSettings().entrySet())
            {
                settings.put("tier." + tier + "." + setting.getKey(), setting.getValue());
            }
        }
        settings.put("tier.fast.capacity", String.valueOf(fastCapacity));
        settings.put("tier.fast.evict-high", "0.95");
        settings.put("tier.fast.evict-low", "0.9");
        settings.put("migration.fast.target", "slow");
        settings.put("migration.fast.trigger", "0.5");
        settings.put("migration.fast.min-age", "0s");
        settings.put("migration.fast.rate", UNBOUND_RATE);
        settings.put("migration.fast.concurrency", String.valueOf(plan.concurrency()));
        return settings;
    }

    /** One run of the benchmark against one engine. */
    private static final class Run
    {
        private final Plan plan;
        private final Engine engine;
        private final EngineOperations operations;
        private final Path fastRun;
        private final Path slowRun;
        private final PrintWriter progress;
        /** The page sets migrated, as salt and page count, for the read-back. */
        private final List<long[]> migratedSets = new ArrayList<>();
        private final List<String> problems = new ArrayList<>();
        private final Map<String, Long> refusals = new TreeMap<>();
        private long pagesAsked;
        private long pagesMigrated;
        private long failures;
        private long nextSalt = SALT;

        Run(final Plan plan, final Engine engine, final Path fastRun, final Path slowRun, final PrintWriter progress)
        {
            this.plan = plan;
            this.engine = engine;
            this.operations = engine.operations();
            this.fastRun = fastRun;
            this.slowRun = slowRun;
            this.progress = progress;
        }

        Result measure() throws IOException, InterruptedException
        {
            final List<Round> rounds = new ArrayList<>();
            try (Session writer = engine.openSession();
                 Session client = engine.openSession())
            {
                final long hotSalt = nextSalt++;
                keys(client.keys(), hotSalt, 0, plan.requestKeys());
                if (write(client, plan.requestKeys()) != plan.requestKeys())
                {
                    throw new IllegalStateException("the engine refused the foreground pages");
                }
                say("warming up: " + Math.min(plan.requests(), 5000) + " requests");
                loop(client, Math.min(plan.requests(), 5000));
                for (int run = 1; run <= plan.runs(); run++)
                {
                    final boolean migrationFirst = run % 2 == 1;
                    say("run " + run + " of " + plan.runs() + ": migration " + (migrationFirst ? "first" : "after its raw copies"));
                    Throughput migration = null;
                    Throughput rawSingle = null;
                    Throughput rawConcurrent = null;
                    for (int step = 0; step < 2; step++)
                    {
                        if ((step == 0) == migrationFirst)
                        {
                            migration = migrate(writer);
                        }
                        else
                        {
                            rawSingle = rawCopy(run, 1);
                            rawConcurrent = rawCopy(run, plan.concurrency());
                        }
                    }
                    Latency without = null;
                    Latency with = null;
                    double overlap = 0;
                    long background = 0;
                    for (int step = 0; step < 2; step++)
                    {
                        if ((step == 0) == migrationFirst)
                        {
                            final long salt = writePages(writer, plan.backgroundPages());
                            final long[] covered = new long[2];
                            with = loopDuringMigration(client, salt, covered);
                            overlap = Double.longBitsToDouble(covered[0]);
                            background = covered[1];
                        }
                        else
                        {
                            without = loop(client, plan.requests());
                        }
                    }
                    rounds.add(new Round(run, migrationFirst, migration, rawSingle, rawConcurrent, without, with, overlap, background));
                }
                say("reading back " + pagesAsked + " migrated pages");
                final long[] readBack = readBack(writer);
                final Map<EngineCounter, Long> counters = engine.snapshot();
                final long slowHits = operations.tiers().stream().filter(t -> t.name().equals("slow")).findFirst()
                    .map(TierReport::counters).map(c -> c.getOrDefault("hits", 0L)).orElse(0L);
                final long l3Corrupt = counters.getOrDefault(EngineCounter.L3_CORRUPT, 0L);
                if (readBack[1] != 0 || readBack[2] != 0)
                {
                    problems.add(readBack[1] + " pages missing and " + readBack[2] + " not byte-exact of " + readBack[0] + " read back");
                }
                if (l3Corrupt != 0)
                {
                    problems.add("the engine counted " + l3Corrupt + " corrupt L3 reads (l3_corrupt)");
                }
                if (slowHits < readBack[0] - readBack[1])
                {
                    problems.add("the slow tier served " + slowHits + " loads, fewer than the " + (readBack[0] - readBack[1])
                        + " pages read back that should live there");
                }
                return new Result(plan, fastRun, slowRun, rounds, new Check(pagesAsked, pagesMigrated, failures, refusals, readBack[0], readBack[1],
                    readBack[2], slowHits, l3Corrupt, problems));
            }
        }

        private void say(final String line)
        {
            if (progress != null)
            {
                progress.println("kvtier bench migrate: " + line);
                progress.flush();
            }
        }

        /** Writes a new set of pages into fast (their backups), evicted from the pool; returns its salt. */
        private long writePages(final Session writer, final int pages)
        {
            final long salt = nextSalt++;
            for (int from = 0; from < pages; from += CHUNK)
            {
                final int n = Math.min(CHUNK, pages - from);
                keys(writer.keys(), salt, from, n);
                if (write(writer, n) != n)
                {
                    throw new IllegalStateException("the engine committed fewer than the " + n + " pages written");
                }
                if (writer.evict(0, n) != n)
                {
                    throw new IllegalStateException("the engine evicted fewer than the " + n + " pages just backed up");
                }
            }
            return salt;
        }

        /** Reserves, fills, commits and flushes the chain's first n keys; returns pages committed. */
        private int write(final Session session, final int n)
        {
            session.reserve(0, n);
            for (int i = 0; i < n; i++)
            {
                if (session.status(i) == PageEntryStatus.RESERVED)
                {
                    PagePattern.fill(session.page(i), session.keys().high(i), session.keys().low(i), plan.pageBytes());
                    session.payloadLength(i, plan.pageBytes());
                }
            }
            final int committed = session.commit(0, n);
            if (session.flush() != 0)
            {
                throw new IllegalStateException("backups into the fast tier did not end within l3.io-timeout");
            }
            return committed;
        }

        private static List<PageKey> pageKeys(final long salt, final int pages)
        {
            final List<PageKey> keys = new ArrayList<>(pages);
            for (int i = 0; i < pages; i++)
            {
                keys.add(new PageKey(salt, low(i)));
            }
            return keys;
        }

        private MigrationReport start(final long salt, final int pages)
        {
            migratedSets.add(new long[] {salt, pages});
            pagesAsked += pages;
            return operations.migrate(new MigrateRequest("fast", "slow", pageKeys(salt, pages), 0, Duration.ZERO, 1.0, pages, MigrationMethod.COPY,
                Retention.MOVE, false));
        }

        /** Waits for a migration's end and checks it copied every one of its {@code pages}, with no failure and no refusal. */
        private MigrationReport awaitEnd(final long id, final int pages)
        {
            final long deadline = System.nanoTime() + MIGRATION_TIMEOUT_NANOS;
            while (true)
            {
                final MigrationReport report = operations.migration(id)
                    .orElseThrow(() -> new IllegalStateException("the engine forgot migration " + id + " before it ended"));
                if (report.ended() != null)
                {
                    pagesMigrated += report.copied();
                    failures += report.failed();
                    report.refusals().forEach((reason, count) -> refusals.merge(reason, count, Long::sum));
                    if (!report.state().equals("done") || report.copied() != pages || report.failed() != 0 || !report.refusals().isEmpty())
                    {
                        problems.add("migration " + id + " ended " + report.state() + (report.message() != null ? " (" + report.message() + ")" : "")
                            + " with " + report.copied() + " of " + pages + " pages copied, " + report.failed() + " failed, refusals "
                            + report.refusals());
                    }
                    return report;
                }
                if (System.nanoTime() > deadline)
                {
                    throw new IllegalStateException("migration " + id + " did not end within " + MIGRATION_TIMEOUT_NANOS / 1_000_000_000L
                        + " s: " + report);
                }
                LockSupport.parkNanos(1_000_000);
            }
        }

        private Throughput migrate(final Session writer)
        {
            final long salt = writePages(writer, plan.pages());
            final long start = System.nanoTime();
            final MigrationReport started = start(salt, plan.pages());
            awaitEnd(started.id(), plan.pages());
            final long nanos = System.nanoTime() - start;
            return new Throughput(plan.pages(), (long)plan.pages() * plan.pageBytes(), nanos);
        }

        private Throughput rawCopy(final int run, final int threads) throws IOException, InterruptedException
        {
            final Path from = fastRun.resolve("raw-" + run + "-" + threads);
            final Path to = slowRun.resolve("raw-" + run + "-" + threads);
            final List<Path> files = RawCopy.prepare(from, plan.pages(), plan.fileBytes());
            final long nanos = RawCopy.copy(files, to, plan.fileBytes(), plan.fsync(), threads);
            deleteTree(from);
            deleteTree(to);
            return new Throughput(plan.pages(), (long)plan.pages() * plan.pageBytes(), nanos);
        }

        /** Acquires and releases the client's pages, each request timed. */
        private Latency loop(final Session client, final int requests)
        {
            final Histogram histogram = new Histogram(HIGHEST_NANOS, 3);
            for (int i = 0; i < requests; i++)
            {
                final long start = System.nanoTime();
                final int pinned = client.acquire(0, plan.requestKeys());
                client.release();
                histogram.recordValue(Math.min(HIGHEST_NANOS, System.nanoTime() - start));
                if (pinned != plan.requestKeys())
                {
                    throw new IllegalStateException("a foreground request pinned " + pinned + " of its " + plan.requestKeys() + " pages");
                }
            }
            return Latency.of(histogram);
        }

        /**
         * The foreground loop while a migration of the set {@code salt} runs.
         *
         * @param covered set to the share of the loop the migration covered (as double bits) and the pages it copied
         */
        private Latency loopDuringMigration(final Session client, final long salt, final long[] covered)
        {
            final MigrationReport started = start(salt, plan.backgroundPages());
            final Instant loopStart = Instant.now();
            final Latency latency = loop(client, plan.requests());
            final Instant loopEnd = Instant.now();
            final MigrationReport done = awaitEnd(started.id(), plan.backgroundPages());
            final double loopNanos = Math.max(1, Duration.between(loopStart, loopEnd).toNanos());
            final double share = done.ended().isAfter(loopEnd) ? 1.0
                : Math.max(0, Duration.between(loopStart, done.ended()).toNanos()) / loopNanos;
            covered[0] = Double.doubleToLongBits(Math.min(1.0, share));
            covered[1] = done.copied();
            return latency;
        }

        /** Reads every migrated page back from L3: pages read, missing, not byte-exact. */
        private long[] readBack(final Session reader)
        {
            long read = 0;
            long missing = 0;
            long corrupt = 0;
            for (final long[] set : migratedSets)
            {
                final long salt = set[0];
                final int pages = (int)set[1];
                for (int chunk = 0; chunk < pages; chunk += CHUNK)
                {
                    final int n = Math.min(CHUNK, pages - chunk);
                    keys(reader.keys(), salt, chunk, n);
                    reader.evict(0, n);
                    int from = 0;
                    while (from < n)
                    {
                        final int pinned = reader.acquire(from, n - from);
                        for (int i = from; i < from + pinned; i++)
                        {
                            read++;
                            if (reader.payloadLength(i) != plan.pageBytes()
                                || !PagePattern.matches(reader.page(i), reader.keys().high(i), reader.keys().low(i), plan.pageBytes()))
                            {
                                corrupt++;
                            }
                        }
                        reader.release();
                        if (from + pinned < n)
                        {
                            // The prefix stopped at a key that is missing or failed its verification.
                            read++;
                            missing++;
                        }
                        from += pinned + 1;
                    }
                }
            }
            return new long[] {read, missing, corrupt};
        }
    }

    private static long low(final int index)
    {
        return index * 0x9E3779B97F4A7C15L + 1;
    }

    /** Fills the chain with keys {@code (salt, from..from+n-1)}. */
    private static void keys(final PageKeyChain chain, final long salt, final int from, final int n)
    {
        chain.clear();
        for (int i = from; i < from + n; i++)
        {
            chain.add(salt, low(i));
        }
    }

    private static void deleteTree(final Path root) throws IOException
    {
        if (!Files.exists(root))
        {
            return;
        }
        try (Stream<Path> paths = Files.walk(root))
        {
            for (final Path path : paths.sorted(Comparator.reverseOrder()).toList())
            {
                Files.deleteIfExists(path);
            }
        }
    }
}
