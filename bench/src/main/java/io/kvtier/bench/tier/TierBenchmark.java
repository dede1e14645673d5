package io.kvtier.bench.tier;

import io.kvtier.bench.workload.JitSettling;
import io.kvtier.bench.workload.RunPhase;
import io.kvtier.client.pool.PageFrameDescriptor;
import io.kvtier.engine.tier.TierRegistry;
import io.kvtier.spi.ConfigValues;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.StorageTierProvider;
import io.kvtier.spi.TierCapability;
import io.kvtier.spi.TierConfig;

import java.io.IOException;
import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.LongSupplier;
import java.util.stream.Stream;

/**
 * {@code kvtier bench tier}'s measurement: pages written, then read back, through a tier's SPI
 * ({@link StorageTier#write}, {@link StorageTier#read}) the way the engine's {@code TierIo} drives
 * it: each page as the engine hands it to a tier, a frame of the page and its 4 KiB trailer block
 * (a trailer and zeros), with throughput counted in page bytes, the bytes fio moves a block;
 * reusable batches of at most {@link Plan#maxBatch} keys (the engine's {@code l3.max-batch}), as
 * many in flight as make up the queue depth, and a batch handed back as soon as its last key
 * completes is refilled and submitted again. Every key is a new random one, so each write makes a
 * new object, and the reads read those objects back. Each run's objects are removed after it,
 * untimed, and each page size starts with an untimed warm-up of a case's bytes, written, read and
 * removed: every timed write goes into space the tier has written and freed before, the steady state
 * of a tier at its capacity, rather than into space it never used (an extent file made during the
 * run, memory of a tmpfs touched for the first time). The warm-up's rounds go on until the JVM's JIT
 * compilers have settled ({@link #warmUp}), so that the timed runs measure the tier's compiled code and
 * not the tier beside the compilers on a host of few cores.
 *
 * <p>Beside each case, in the same run and in alternating order, a {@link Baseline} does the same
 * work outside kvtier. For directory backends it is {@link Fio}: one file of the case's size, the
 * page as block size, the queue depth as {@code iodepth}, {@code ioengine=io_uring}, {@code
 * direct=1}, sequential {@code rw=write} over a file it laid out untimed, then {@code rw=read} of it.
 * The POSIX tier is given {@code direct-io=true} unless told otherwise, so that both sides' reads
 * come from the device and not the page cache (dropping caches needs root on the host, which a
 * container has not). For {@code mooncake} it is {@link MooncakeBaseline}, Mooncake's own C client
 * making the same batched calls, in the same topology.
 *
 * <p>The run checks its own result: every key must complete OK, and after each read case every
 * buffer read into must hold the bytes written.
 *
 * <p>This class decides what is measured, in which order against the baseline, and what the figures
 * are; {@link TierDriver} moves the pages through the tier, and {@link TierBenchmarkReport} writes the
 * figures out.
 */
public final class TierBenchmark
{
    /** Page sizes measured when none are given. */
    public static final List<Long> DEFAULT_PAGE_SIZES = List.of(64L << 10, 256L << 10, 1L << 20, 4L << 20);
    /** Queue depths measured when none are given. */
    public static final List<Integer> DEFAULT_QUEUE_DEPTHS = List.of(1, 4, 16, 64);
    /** The goal: at least this fraction of fio's throughput... */
    public static final double GOAL_RATIO = 0.9;
    /** ...for pages at least this large. */
    public static final long GOAL_MIN_PAGE_BYTES = 256L << 10;
    /** The goal for smaller pages: at least this fraction of fio's throughput... */
    public static final double SMALL_GOAL_RATIO = 0.8;
    /** ...for pages of exactly this size. */
    public static final long SMALL_GOAL_PAGE_BYTES = 64L << 10;
    /** The engine's default {@code l3.max-batch}. */
    public static final int DEFAULT_MAX_BATCH = 256;
    /**
     * The longest a page size's warm-up goes on while the JIT compilers are still busy. On 2 vCPUs perf found
     * the compiler threads using up to 0.8 of a core through the timed runs of the first page size when the
     * warm-up was one round (fio, a native program, competes with no compiler); the engine in service runs
     * compiled code, so the figures are taken once the compilers settle, or after this long.
     */
    static final long WARMUP_LIMIT_NANOS = 30_000_000_000L;

    /** Settings the benchmark gives a backend unless {@code --tier-setting} says otherwise. */
    private static final Map<String, Map<String, String>> BACKEND_DEFAULTS = Map.of(
        // direct-io: reads from the device, as fio's direct=1; one fan-out level: 256 directories made at start, not 65,792.
        "posix", Map.of("direct-io", "true", "fanout-levels", "1"));
    /** Backends that keep their objects under a {@code dir} setting, which the benchmark points into its directory. */
    private static final Set<String> DIRECTORY_BACKENDS = Set.of("posix");

    /**
     * How much to measure.
     *
     * @param backend      the tier provider's type, as found by ServiceLoader
     * @param tierSettings settings for the tier, over the benchmark's defaults
     * @param directory    where the tier's objects (for a directory backend) and fio's file go
     * @param pageSizes    object sizes, multiples of 4096
     * @param queueDepths  keys in flight
     * @param caseBytes    bytes written (and read) per case: pages = max(this / page size, queue depth)
     * @param ops          {@code write} and/or {@code read}
     * @param runs         times each case is measured, in alternating order with fio; medians are reported, and the ratio is the median of each run's ratio
     * @param maxBatch     most keys per batch
     * @param fioBinary    fio's name or path, or null to leave fio out
     * @param compiler     the C compiler that builds a C baseline (mooncake), or null to leave it out
     */
    public record Plan(String backend, Map<String, String> tierSettings, Path directory, List<Long> pageSizes, List<Integer> queueDepths,
                       long caseBytes, List<String> ops, int runs, int maxBatch, String fioBinary, String compiler)
    {
        /** Validates. */
        public Plan
        {
            tierSettings = Map.copyOf(tierSettings);
            pageSizes = List.copyOf(pageSizes);
            queueDepths = List.copyOf(queueDepths);
            ops = List.copyOf(ops);
            if (pageSizes.isEmpty() || queueDepths.isEmpty() || ops.isEmpty())
            {
                throw new IllegalArgumentException("give at least one page size, queue depth and op");
            }
            for (final long size : pageSizes)
            {
                if (size <= 0 || size % 4096 != 0)
                {
                    throw new IllegalArgumentException("page size " + size + " must be a positive multiple of 4096 (4KiB)");
                }
            }
            for (final int depth : queueDepths)
            {
                if (depth < 1 || depth > 4096)
                {
                    throw new IllegalArgumentException("queue depth " + depth + " must be from 1 to 4096");
                }
            }
            for (final String op : ops)
            {
                if (!op.equals("read") && !op.equals("write"))
                {
                    throw new IllegalArgumentException("op '" + op + "' must be read or write");
                }
            }
            if (caseBytes < 1 || runs < 1 || maxBatch < 1)
            {
                throw new IllegalArgumentException("caseBytes=" + caseBytes + ", runs=" + runs + " and maxBatch=" + maxBatch + " must be at least 1");
            }
        }

        /**
         * @param pageSize  the page size of a tier
         * @param workspace the run's own directory
         * @param topology  settings that put the tier in the baseline's topology ({@link Baseline#tierSettings()})
         * @return the settings the tier of that page size is created with
         */
        public Map<String, String> settingsFor(final long pageSize, final Path workspace, final Map<String, String> topology)
        {
            final Map<String, String> settings = new LinkedHashMap<>(BACKEND_DEFAULTS.getOrDefault(backend, Map.of()));
            if (DIRECTORY_BACKENDS.contains(backend))
            {
                settings.put("dir", workspace.resolve("tier-" + ConfigValues.formatSize(pageSize)).toString());
            }
            settings.putAll(topology);
            settings.putAll(tierSettings);
            return settings;
        }
    }

    /**
     * One case's figures.
     *
     * @param op          read or write
     * @param pageBytes   object size
     * @param queueDepth  keys in flight
     * @param pages       objects per run
     * @param kvtierNanos median time of the tier's runs
     * @param baseline    the baseline's figures (the median run's), or null without a baseline
     * @param ratio       the median over runs of the tier's throughput over the baseline's in the same run, or NaN without one
     */
    public record Case(String op, long pageBytes, int queueDepth, int pages, long kvtierNanos, Baseline.Figures baseline, double ratio)
    {
        /** @return bytes moved per run */
        public long bytes()
        {
            return pages * pageBytes;
        }

        /** @return the tier's MB/s (10^6 bytes per second) */
        public double kvtierMbs()
        {
            return bytes() * 1e3 / Math.max(1, kvtierNanos);
        }

        /** @return the tier's operations per second */
        public double kvtierIops()
        {
            return pages * 1e9 / Math.max(1, kvtierNanos);
        }

        /** @return the baseline's MB/s, or NaN without one */
        public double baselineMbs()
        {
            return baseline == null ? Double.NaN : baseline.bytesPerSecond() / 1e6;
        }

        /** @return the baseline's operations per second, or NaN without one */
        public double baselineIops()
        {
            return baseline == null ? Double.NaN : baseline.iops();
        }

    }

    /**
     * The figures of one run.
     *
     * @param plan         what was measured
     * @param settings     the settings the tier of the first page size was created with
     * @param capabilities what the tier declared (for POSIX: ZERO_COPY when it does I/O through libc, DIRECT_IO when O_DIRECT is on)
     * @param describe     the tier's own description of its I/O path ({@code StorageTier.describe})
     * @param baseline     the baseline's name ({@code fio}, {@code mooncake-c})
     * @param baselineDescribe what the baseline does, and the topology measured
     * @param baselineVersion the baseline's version, or null without figures
     * @param baselineMissing why there are no baseline figures, or null
     * @param cases        one per op, page size and queue depth
     */
    public record Result(Plan plan, Map<String, String> settings, Set<TierCapability> capabilities, String describe, String baseline,
                         String baselineDescribe, String baselineVersion, String baselineMissing, List<Case> cases)
    {
        /**
         * @param op read or write
         * @return the geometric mean of the ratios of the op's cases with pages of at least {@link #GOAL_MIN_PAGE_BYTES}, or NaN
         *         without a baseline or such cases
         */
        public double goalGeomean(final String op)
        {
            return geomean(op, GOAL_MIN_PAGE_BYTES, Long.MAX_VALUE);
        }

        /**
         * @param op read or write
         * @return {cases meeting the goal, cases the goal applies to} among the op's cases with baseline figures
         */
        public int[] goalCount(final String op)
        {
            return count(op, GOAL_MIN_PAGE_BYTES, Long.MAX_VALUE, GOAL_RATIO);
        }

        /**
         * @param op read or write
         * @return the geometric mean of the ratios of the op's cases with pages of {@link #SMALL_GOAL_PAGE_BYTES}, or NaN
         */
        public double smallGoalGeomean(final String op)
        {
            return geomean(op, SMALL_GOAL_PAGE_BYTES, SMALL_GOAL_PAGE_BYTES);
        }

        /**
         * @param op read or write
         * @return {cases at {@link #SMALL_GOAL_RATIO} or more, cases} among the op's cases with pages of {@link #SMALL_GOAL_PAGE_BYTES}
         */
        public int[] smallGoalCount(final String op)
        {
            return count(op, SMALL_GOAL_PAGE_BYTES, SMALL_GOAL_PAGE_BYTES, SMALL_GOAL_RATIO);
        }

        private double geomean(final String op, final long minBytes, final long maxBytes)
        {
            double logs = 0;
            int n = 0;
            for (final Case c : cases)
            {
                if (c.op().equals(op) && c.pageBytes() >= minBytes && c.pageBytes() <= maxBytes && !Double.isNaN(c.ratio()))
                {
                    logs += Math.log(c.ratio());
                    n++;
                }
            }
            return n == 0 ? Double.NaN : Math.exp(logs / n);
        }

        private int[] count(final String op, final long minBytes, final long maxBytes, final double goal)
        {
            int met = 0;
            int of = 0;
            for (final Case c : cases)
            {
                if (c.op().equals(op) && c.pageBytes() >= minBytes && c.pageBytes() <= maxBytes && !Double.isNaN(c.ratio()))
                {
                    of++;
                    met += c.ratio() >= goal ? 1 : 0;
                }
            }
            return new int[] {met, of};
        }

        /** @return the figures as one JSON object with a {@code results} array */
        public String toJson()
        {
            return TierBenchmarkReport.json(this);
        }

        /** @return the figures as a table */
        public String toText()
        {
            return TierBenchmarkReport.text(this);
        }
    }

    private TierBenchmark()
    {
    }

    /**
     * Runs every case.
     *
     * @param plan     what to measure
     * @param progress where a line per case goes as it ends, or null
     * @return the figures
     * @throws IllegalArgumentException if the backend is unknown (the message lists the known ones)
     * @throws io.kvtier.spi.TierConfigException if the tier rejects its settings
     * @throws IOException           if the directory cannot be made or the baseline fails
     * @throws IllegalStateException if a key does not complete OK, completes late, or reads back wrong bytes
     * @throws InterruptedException  if interrupted
     */
    public static Result measure(final Plan plan, final PrintWriter progress) throws IOException, InterruptedException
    {
        final StorageTierProvider provider = TierRegistry.providers().get(plan.backend());
        if (provider == null)
        {
            throw new IllegalArgumentException("no tier provider of type '" + plan.backend() + "'; found: " + TierRegistry.providers().keySet());
        }
        Files.createDirectories(plan.directory());
        final Path workspace = Files.createTempDirectory(plan.directory(), "kvtier-bench-tier-");
        final List<Case> cases = new ArrayList<>();
        Map<String, String> firstSettings = null;
        Set<TierCapability> capabilities = null;
        String describe = null;
        final SplittableRandom random = new SplittableRandom(0x5EEDL);
        final Baseline baseline;
        try
        {
            baseline = baselineFor(plan, workspace);
        }
        catch (final IOException | RuntimeException ex)
        {
            deleteTree(workspace);
            throw ex;
        }
        final String baselineMissing = baseline.missing().orElse(null);
        try (baseline)
        {
            for (final long pageSize : plan.pageSizes())
            {
                final Map<String, String> settings = plan.settingsFor(pageSize, workspace, baseline.tierSettings());
                if (firstSettings == null)
                {
                    firstSettings = settings;
                }
                final int maxDepth = plan.queueDepths().stream().mapToInt(Integer::intValue).max().orElseThrow();
                try (Arena arena = Arena.ofShared();
                     TierDriver.SlotRegion region = new TierDriver.SlotRegion(arena, pageSize, maxDepth, random);
                     StorageTier tier = provider.create(new TierConfig("bench", settings),
                         TierDriver.context(PageFrameDescriptor.frameLength(pageSize), region.memory)))
                {
                    if (capabilities == null)
                    {
                        capabilities = tier.capabilities();
                        describe = tier.describe();
                    }
                    final MemorySegment[] slots = region.slots;
                    final MemorySegment pattern = arena.allocate(slots[0].byteSize(), 4096).copyFrom(slots[0]);
                    // Warm-up, untimed: the code paths compiled before the first timed case, and as much space written and
                    // freed as a case writes, as fio lays out its file before its first timed write.
                    final int warmPages = (int)Math.max(16, Math.min(Integer.MAX_VALUE, plan.caseBytes() / pageSize));
                    final long[][] warmKeys = TierDriver.keys(random, warmPages);
                    final int warmDepth = Math.min(16, maxDepth);
                    final long warmStart = System.nanoTime();
                    final int warmRounds = warmUp(() ->
                    {
                        TierDriver.drive(tier, "write", warmKeys, warmDepth, plan.maxBatch(), slots);
                        TierDriver.drive(tier, "read", warmKeys, warmDepth, plan.maxBatch(), slots);
                        TierDriver.drive(tier, "remove", warmKeys, warmDepth, plan.maxBatch(), slots);
                    }, new JitSettling(), System::nanoTime, WARMUP_LIMIT_NANOS);
                    if (progress != null)
                    {
                        progress.printf(Locale.ROOT, "kvtier: warm-up of %s pages: %d round(s) of %s written, read and removed in %.1f s%n",
                            ConfigValues.formatSize(pageSize), warmRounds, ConfigValues.formatSize((long)warmPages * pageSize),
                            (System.nanoTime() - warmStart) / 1e9);
                        progress.flush();
                    }
                    for (final int depth : plan.queueDepths())
                    {
                        final int pages = (int)Math.max(depth, Math.min(Integer.MAX_VALUE, plan.caseBytes() / pageSize));
                        final long[] writeNanos = new long[plan.runs()];
                        final long[] readNanos = new long[plan.runs()];
                        final Baseline.Figures[] baseWrites = new Baseline.Figures[plan.runs()];
                        final Baseline.Figures[] baseReads = new Baseline.Figures[plan.runs()];
                        long compiledInTimedRuns = 0;
                        for (int run = 0; run < plan.runs(); run++)
                        {
                            final boolean baselineFirst = baselineMissing == null && ((cases.size() / plan.ops().size() + run) & 1) == 1;
                            final boolean baselineSecond = baselineMissing == null && !baselineFirst;
                            final long[][] keys = TierDriver.keys(random, pages);
                            final Baseline.Workload workload = new Baseline.Workload(pageSize, pages, depth, plan.maxBatch(), random.nextLong());
                            if (baselineFirst)
                            {
                                baseWrites[run] = baseline.run(workload, "write");
                            }
                            // The previous read case cleared the buffers: every write source holds the pattern again.
                            for (final MemorySegment slot : slots)
                            {
                                slot.copyFrom(pattern);
                            }
                            final long compiledBefore = RunPhase.compileMillisSoFar();
                            writeNanos[run] = TierDriver.drive(tier, "write", keys, depth, plan.maxBatch(), slots);
                            compiledInTimedRuns += RunPhase.compileMillisSoFar() - compiledBefore;
                            if (baselineSecond)
                            {
                                baseWrites[run] = baseline.run(workload, "write");
                            }
                            if (baselineFirst)
                            {
                                baseReads[run] = baseline.run(workload, "read");
                            }
                            for (final MemorySegment slot : slots)
                            {
                                slot.fill((byte)0);
                            }
                            final long compiledBeforeRead = RunPhase.compileMillisSoFar();
                            readNanos[run] = TierDriver.drive(tier, "read", keys, depth, plan.maxBatch(), slots);
                            compiledInTimedRuns += RunPhase.compileMillisSoFar() - compiledBeforeRead;
                            TierDriver.checkReadBack(slots, pattern, Math.min(depth, pages), pageSize);
                            // Untimed: the next run writes into the space these pages leave, as fio writes over its file.
                            TierDriver.drive(tier, "remove", keys, depth, plan.maxBatch(), slots);
                            if (baselineSecond)
                            {
                                baseReads[run] = baseline.run(workload, "read");
                            }
                        }
                        for (final String op : plan.ops())
                        {
                            final boolean isWrite = op.equals("write");
                            final long[] nanos = isWrite ? writeNanos : readNanos;
                            final Baseline.Figures[] bases = isWrite ? baseWrites : baseReads;
                            double ratio = Double.NaN;
                            if (baselineMissing == null)
                            {
                                final double[] ratios = new double[plan.runs()];
                                for (int run = 0; run < ratios.length; run++)
                                {
                                    ratios[run] = (double)pages * pageSize / Math.max(1, nanos[run]) * 1e9 / bases[run].bytesPerSecond();
                                }
                                Arrays.sort(ratios);
                                ratio = ratios[(ratios.length - 1) / 2];
                            }
                            final Case c = new Case(op, pageSize, depth, pages, median(nanos), baselineMissing == null ? medianFigures(bases) : null, ratio);
                            cases.add(c);
                            if (progress != null)
                            {
                                progress.printf(Locale.ROOT, "kvtier: %s %s qd %d: %.1f MB/s, %s %s (JIT compilers: %d ms of CPU in the tier's timed runs of this depth)%n",
                                    op, ConfigValues.formatSize(pageSize), depth, c.kvtierMbs(), baseline.name(),
                                    c.baseline() == null ? "n/a" : String.format(Locale.ROOT, "%.1f MB/s", c.baselineMbs()), compiledInTimedRuns);
                                progress.flush();
                            }
                        }
                    }
                }
            }
        }
        finally
        {
            deleteTree(workspace);
        }
        return new Result(plan, firstSettings, capabilities, describe, baseline.name(), baselineDescription(plan.backend(), baseline.describe()),
            baseline.version(), baselineMissing, cases);
    }

    /**
     * What the baseline does, with what a reader must know to compare it with the backend: the 3fs backend moves pages
     * through USRBIO, never through the mount that fio uses.
     *
     * @param backend  the tier's type
     * @param baseline the baseline's own description
     * @return the description the report carries
     */
    static String baselineDescription(final String backend, final String baseline)
    {
        if (!"3fs".equals(backend) || !baseline.startsWith("ioengine="))
        {
            return baseline;
        }
        return baseline + "; fio runs in --dir through the kernel, the 3fs tier through USRBIO: with --dir on the 3FS mount the ratio"
            + " compares USRBIO with the FUSE path, and with kvtier's fake USRBIO library (plugins/3fs/hf3fs-fake, buffered pread/pwrite on"
            + " local files) it compares page-cache I/O with fio's direct I/O and says nothing of 3FS";
    }

    /** One untimed round of a page size's warm-up. */
    @FunctionalInterface
    interface WarmUpRound
    {
        /**
         * Writes, reads and removes a case's bytes through the tier.
         *
         * @throws InterruptedException if interrupted
         */
        void run() throws InterruptedException;
    }

    /**
     * Runs warm-up rounds until the JIT compilers have settled ({@link JitSettling}) or {@code limitNanos} have
     * passed (a round begun is finished; there are at least two unless the first took that long): the timed runs then measure the tier's compiled code, as a long-running engine
     * has it, rather than the tier beside the compilers competing for the same cores. The compilers are
     * watched from the end of the first round only: that round makes the tier's first extent (on tmpfs a
     * {@code posix_fallocate} of half a second) while its code is still too cold to be compiled, so a window
     * that began with it looked quiet before anything was hot.
     *
     * @param round      one round
     * @param jit        what tells when the compilers settled
     * @param clock      {@link System#nanoTime()}, or a test's clock
     * @param limitNanos the longest the rounds go on
     * @return the rounds run
     * @throws InterruptedException if interrupted
     */
    static int warmUp(final WarmUpRound round, final JitSettling jit, final LongSupplier clock, final long limitNanos)
        throws InterruptedException
    {
        final long start = clock.getAsLong();
        int rounds = 0;
        long now;
        do
        {
            round.run();
            rounds++;
            now = clock.getAsLong();
        }
        while (!jit.settled(now) && now - start < limitNanos);
        return rounds;
    }

    /**
     * Chooses the baseline by backend: Mooncake's own C client for {@code mooncake} (which also sets up
     * the topology both sides run in), fio for the directory backends and any other.
     *
     * @param plan      what is measured
     * @param workspace the run's own directory
     * @return the baseline, started
     * @throws IOException if the baseline's setup fails in a way the tier cannot run without (no Mooncake master)
     * @throws InterruptedException if interrupted
     */
    static Baseline baselineFor(final Plan plan, final Path workspace) throws IOException, InterruptedException
    {
        if (plan.backend().equals("mooncake"))
        {
            return MooncakeBaseline.start(plan.tierSettings(), plan.compiler(), segmentBytes(plan), workspace, System.getenv());
        }
        return new Fio(plan.fioBinary(), workspace);
    }

    /** @return a segment that holds every page of a run, of both sides, several times over: pages are removed after each run */
    static long segmentBytes(final Plan plan)
    {
        final long maxPage = plan.pageSizes().stream().mapToLong(Long::longValue).max().orElseThrow();
        final long maxDepth = plan.queueDepths().stream().mapToInt(Integer::intValue).max().orElseThrow();
        return Math.max(1L << 30, 4 * Math.max(plan.caseBytes(), maxPage * maxDepth) + (64L << 20));
    }

    /** @return the median of {@code values} (the lower middle of an even count), which one slow run does not move */
    static long median(final long[] values)
    {
        final long[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[(sorted.length - 1) / 2];
    }

    /** @return the baseline's run of median throughput, so its throughput and IOPS come from one run */
    private static Baseline.Figures medianFigures(final Baseline.Figures[] figures)
    {
        final Baseline.Figures[] sorted = figures.clone();
        Arrays.sort(sorted, Comparator.comparingDouble(Baseline.Figures::bytesPerSecond));
        return sorted[(sorted.length - 1) / 2];
    }

    /** Removes the run's workspace, the tier's objects and fio's file with it, so a run leaves nothing on the disk it measured. */
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
