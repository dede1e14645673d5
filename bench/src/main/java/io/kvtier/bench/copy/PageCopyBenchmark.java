package io.kvtier.bench.copy;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.kvtier.bench.Median;
import io.kvtier.engine.pool.PageFrames;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.nativeaccess.libc.LibC;
import io.kvtier.nativeaccess.libc.PageCopy;
import io.kvtier.spi.ConfigValues;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * {@code kvtier bench copy}'s measurement. The engine never copies a page's bytes on its own threads:
 * clients write and read pool pages in place, and what copies page bytes is {@link PageCopy} (the
 * JDK's {@link MemorySegment#copy(MemorySegment, long, MemorySegment, long, long)}, or libc's memcpy
 * in the sizes where that is faster on this machine) on the payload slices {@link PageFrames#payload}
 * hands out, as the device tier's emulation and a Java client do into and out of a page. This times
 * exactly that, from one page of a real pool
 * (created in /dev/shm like the engine's) into another, against {@link LibC#memcpy} called through
 * FFM on the same two slices.
 *
 * <p>For each page size: a pool of about {@link Plan#poolBytes} bytes, its first half the sources
 * and its second half the destinations, so the copies walk the whole pool rather than stay in a
 * cache. After a warm-up of both loops (compiled by C2 before anything is timed, since only compiled
 * code turns the copy into the JIT's vectorised stub), {@link Plan#rounds} rounds each time one block
 * of copies with each method, the two in alternating order, so that load from elsewhere on the machine
 * falls on both alike. A block is as many copies as take about {@link Plan#blockNanos}. The figures
 * are the medians of the blocks' GB/s (10^9 bytes per second, bytes copied, not bytes moved); the
 * ratio is the median of each round's kvtier over memcpy. The fastest block of each is reported too. The run checks its own result: every
 * destination page must hold its source's bytes at the end.
 */
public final class PageCopyBenchmark
{
    /** Page sizes measured when none are given: a few small ones, then 64 KiB to 4 MiB. */
    public static final List<Long> DEFAULT_PAGE_SIZES = List.of(4L << 10, 16L << 10, 64L << 10, 256L << 10, 1L << 20, 4L << 20);
    /** The goal: the engine's copies at least this fraction of memcpy's throughput. */
    public static final double GOAL_RATIO = 0.95;

    private static final int WARMUP_CALLS = 12_000;
    private static final long WARMUP_MIN_NANOS = 500_000_000L;

    /**
     * How much to measure.
     *
     * @param pageSizes  payload bytes per page, each a multiple of 4096
     * @param poolBytes  about how many bytes each pool holds (at least 4 pages)
     * @param rounds     timed rounds per page size, each one block of each method
     * @param blockNanos about how long one block of copies takes
     */
    public record Plan(List<Long> pageSizes, long poolBytes, int rounds, long blockNanos)
    {
        /** Validates. */
        public Plan
        {
            pageSizes = List.copyOf(pageSizes);
            if (pageSizes.isEmpty())
            {
                throw new IllegalArgumentException("give at least one page size");
            }
            for (final long size : pageSizes)
            {
                if (size <= 0 || size % 4096 != 0)
                {
                    throw new IllegalArgumentException("page size " + size + " must be a positive multiple of 4096 (4KiB), as pool.page-size");
                }
            }
            if (poolBytes <= 0 || rounds < 1 || blockNanos < 1)
            {
                throw new IllegalArgumentException("poolBytes=" + poolBytes + ", rounds=" + rounds + " and blockNanos=" + blockNanos + " must be at least 1");
            }
        }
    }

    /**
     * One page size's figures.
     *
     * @param pageBytes  payload bytes per copy
     * @param pages      pages in the pool (half sources, half destinations)
     * @param blockCopies copies per timed block
     * @param kvtierGbs  median GB/s of {@link MemorySegment#copy} blocks
     * @param memcpyGbs  median GB/s of {@code memcpy} blocks
     * @param ratio      median over rounds of kvtier's GB/s over memcpy's in the same round
     * @param kvtierBestGbs the fastest kvtier block's GB/s: what it does when nothing else gets in the way
     * @param memcpyBestGbs the fastest memcpy block's GB/s
     */
    public record Figure(long pageBytes, int pages, int blockCopies, double kvtierGbs, double memcpyGbs, double ratio, double kvtierBestGbs,
                         double memcpyBestGbs)
    {
    }

    /**
     * The figures of one run.
     *
     * @param plan      what was measured
     * @param directory where the pools were
     * @param figures   one per page size, in the plan's order
     */
    public record Result(Plan plan, Path directory, List<Figure> figures)
    {
        /** @return the figures as one JSON object with a {@code results} array */
        public String toJson()
        {
            final StringWriter text = new StringWriter();
            try (JsonGenerator json = new JsonFactory().createGenerator(text))
            {
                json.writeStartObject();
                json.writeStringField("bench", "copy");
                json.writeStringField("kvtier_path", "PageCopy.copy between PageFrames.payload slices of one pool (memcpy for "
                    + PageCopy.memcpyRange() + ", MemorySegment.copy otherwise)");
                json.writeStringField("baseline", "libc memcpy through FFM (LibC.memcpy), same slices");
                json.writeStringField("pool_directory", directory.toString());
                json.writeNumberField("pool_bytes", plan.poolBytes());
                json.writeNumberField("rounds", plan.rounds());
                json.writeNumberField("block_ms", plan.blockNanos() / 1e6);
                json.writeNumberField("goal_ratio", GOAL_RATIO);
                json.writeArrayFieldStart("results");
                for (final Figure figure : figures)
                {
                    json.writeStartObject();
                    json.writeNumberField("page_bytes", figure.pageBytes());
                    json.writeNumberField("kvtier_gb_s", round(figure.kvtierGbs(), 3));
                    json.writeNumberField("memcpy_gb_s", round(figure.memcpyGbs(), 3));
                    json.writeNumberField("ratio", round(figure.ratio(), 3));
                    json.writeNumberField("kvtier_best_gb_s", round(figure.kvtierBestGbs(), 3));
                    json.writeNumberField("memcpy_best_gb_s", round(figure.memcpyBestGbs(), 3));
                    json.writeNumberField("best_ratio", round(figure.kvtierBestGbs() / figure.memcpyBestGbs(), 3));
                    json.writeNumberField("pool_pages", figure.pages());
                    json.writeNumberField("block_copies", figure.blockCopies());
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
            out.append(String.format(Locale.ROOT, "page copies inside a pool in %s (%s each, %d rounds of ~%.0f ms blocks, alternating)%n",
                directory, ConfigValues.formatSize(plan.poolBytes()), plan.rounds(), plan.blockNanos() / 1e6));
            out.append(String.format(Locale.ROOT, "%10s %14s %14s %8s %22s%n", "page", "kvtier GB/s", "memcpy GB/s", "ratio", "best blocks: kvtier, memcpy"));
            for (final Figure figure : figures)
            {
                out.append(String.format(Locale.ROOT, "%10s %14.2f %14.2f %8.3f %11.2f, %8.2f%s%n", ConfigValues.formatSize(figure.pageBytes()),
                    figure.kvtierGbs(), figure.memcpyGbs(), figure.ratio(), figure.kvtierBestGbs(), figure.memcpyBestGbs(), figure.ratio() < GOAL_RATIO ? "  (below the goal of " + GOAL_RATIO + ")" : ""));
            }
            out.append("kvtier: PageCopy.copy between the pool's payload slices (memcpy for " + PageCopy.memcpyRange()
                + ", MemorySegment.copy otherwise); memcpy: libc through FFM on the same slices")
                .append(System.lineSeparator());
            return out.toString();
        }
    }

    private PageCopyBenchmark()
    {
    }

    /**
     * @param directory where the pools go (/dev/shm, as the engine's)
     * @param plan      how much to measure
     * @return the figures
     * @throws IOException           if a pool cannot be created
     * @throws IllegalStateException if libc is unreachable, or a destination page does not hold its source's bytes
     */
    public static Result measure(final Path directory, final Plan plan) throws IOException
    {
        final LibC libc = LibC.instance().orElseThrow(() -> new IllegalStateException(
            "libc is unreachable through FFM, so there is no memcpy baseline; start the JVM with --enable-native-access=ALL-UNNAMED"));
        final List<Figure> figures = new ArrayList<>();
        final Path poolPath = directory.resolve("kvtier-bench-copy-" + ProcessHandle.current().pid());
        boolean warmed = false;
        for (final long pageSize : plan.pageSizes())
        {
            final int pages = (int)Math.max(4, Math.min(1 << 20, plan.poolBytes() / pageSize)) & ~1;
            try (PagePool pool = PagePool.create(poolPath, pageSize, pages, 64, 1, Duration.ofMinutes(1)))
            {
                final PageFrames frames = pool.frames();
                final MemorySegment[] sources = new MemorySegment[pages / 2];
                final MemorySegment[] destinations = new MemorySegment[pages / 2];
                for (int i = 0; i < sources.length; i++)
                {
                    sources[i] = frames.payload(i);
                    destinations[i] = frames.payload(pages / 2 + i);
                    fill(sources[i], i);
                    destinations[i].fill((byte)0);
                }
                if (!warmed)
                {
                    // Compile both loops with C2 first, on short copies, so no timed block runs interpreted or C1 code:
                    // enough calls to reach C2's thresholds, and long enough for its compilations to be installed.
                    final long until = System.nanoTime() + WARMUP_MIN_NANOS;
                    for (int i = 0; i < WARMUP_CALLS || System.nanoTime() < until; i++)
                    {
                        copyBlock(sources, destinations, i, 4, 4096);
                        memcpyBlock(libc, sources, destinations, i, 4, 4096);
                    }
                    warmed = true;
                }
                figures.add(measureSize(libc, plan, pageSize, pages, sources, destinations));
                for (int i = 0; i < sources.length; i++)
                {
                    if (destinations[i].mismatch(sources[i]) != -1)
                    {
                        throw new IllegalStateException("page " + (pages / 2 + i) + " does not hold the bytes of page " + i + " after the copies ("
                            + pageSize + "-byte pages)");
                    }
                }
            }
            finally
            {
                Files.deleteIfExists(poolPath);
            }
        }
        return new Result(plan, directory, figures);
    }

    private static Figure measureSize(final LibC libc, final Plan plan, final long pageSize, final int pages, final MemorySegment[] sources,
                                      final MemorySegment[] destinations)
    {
        // Size a block from a few untimed passes of both methods, which also warm the pages in.
        int cursor = 0;
        long slowest = 1;
        for (int pass = 0; pass < 3; pass++)
        {
            final long start = System.nanoTime();
            cursor = copyBlock(sources, destinations, cursor, sources.length, pageSize);
            final long middle = System.nanoTime();
            cursor = memcpyBlock(libc, sources, destinations, cursor, sources.length, pageSize);
            final long end = System.nanoTime();
            slowest = Math.max(slowest, Math.max(middle - start, end - middle) / sources.length);
        }
        final int blockCopies = (int)Math.clamp(plan.blockNanos() / slowest, 1, 1 << 24);
        final double[] kvtier = new double[plan.rounds()];
        final double[] memcpy = new double[plan.rounds()];
        final double[] ratios = new double[plan.rounds()];
        int kvtierCursor = cursor;
        int memcpyCursor = cursor;
        for (int round = 0; round < plan.rounds(); round++)
        {
            final long bytes = blockCopies * pageSize;
            if ((round & 1) == 0)
            {
                final long a = System.nanoTime();
                kvtierCursor = copyBlock(sources, destinations, kvtierCursor, blockCopies, pageSize);
                final long b = System.nanoTime();
                memcpyCursor = memcpyBlock(libc, sources, destinations, memcpyCursor, blockCopies, pageSize);
                final long c = System.nanoTime();
                kvtier[round] = bytes / (double)Math.max(1, b - a);
                memcpy[round] = bytes / (double)Math.max(1, c - b);
            }
            else
            {
                final long a = System.nanoTime();
                memcpyCursor = memcpyBlock(libc, sources, destinations, memcpyCursor, blockCopies, pageSize);
                final long b = System.nanoTime();
                kvtierCursor = copyBlock(sources, destinations, kvtierCursor, blockCopies, pageSize);
                final long c = System.nanoTime();
                memcpy[round] = bytes / (double)Math.max(1, b - a);
                kvtier[round] = bytes / (double)Math.max(1, c - b);
            }
            ratios[round] = kvtier[round] / memcpy[round];
        }
        return new Figure(pageSize, pages, blockCopies, Median.of(kvtier), Median.of(memcpy), Median.of(ratios), Arrays.stream(kvtier).max().orElseThrow(),
            Arrays.stream(memcpy).max().orElseThrow());
    }

    /** kvtier's page copy ({@link PageCopy}: the JDK's copy, or memcpy in the sizes where that is faster) between payload slices. */
    static int copyBlock(final MemorySegment[] sources, final MemorySegment[] destinations, final int from, final int copies, final long length)
    {
        int pair = from % sources.length;
        for (int i = 0; i < copies; i++)
        {
            PageCopy.copy(sources[pair], 0, destinations[pair], 0, length);
            if (++pair == sources.length)
            {
                pair = 0;
            }
        }
        return pair;
    }

    /** The baseline: libc {@code memcpy} through FFM between the same slices. */
    static int memcpyBlock(final LibC libc, final MemorySegment[] sources, final MemorySegment[] destinations, final int from, final int copies,
                           final long length)
    {
        int pair = from % sources.length;
        for (int i = 0; i < copies; i++)
        {
            libc.memcpy(destinations[pair], sources[pair], length);
            if (++pair == sources.length)
            {
                pair = 0;
            }
        }
        return pair;
    }

    private static void fill(final MemorySegment page, final int seed)
    {
        long word = 0x9E3779B97F4A7C15L * (seed + 1);
        for (long at = 0; at < page.byteSize(); at += Long.BYTES)
        {
            word ^= word << 13;
            word ^= word >>> 7;
            word ^= word << 17;
            page.set(ValueLayout.JAVA_LONG_UNALIGNED, at, word);
        }
    }

    private static double round(final double value, final int digits)
    {
        final double scale = Math.pow(10, digits);
        return Math.round(value * scale) / scale;
    }
}
