package io.kvtier.engine.pool;

import io.kvtier.client.pool.PageFrameDescriptor;
import io.kvtier.client.pool.PageMetadataDescriptor;
import io.kvtier.client.pool.PageMetadataReader;
import io.kvtier.client.pool.PagePoolDescriptor;
import io.kvtier.client.pool.PageStateWord;
import io.kvtier.client.pool.PoolHeader;
import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.status.EngineCounter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * A warm restart: an engine that replaces a dead engine's pool adopts its committed pages, each verified
 * in the new pool, and nothing else; a corrupt page is dropped and counted; a pool of another geometry,
 * or {@code pool.warm-restart = false}, starts cold; and an engine killed at any moment of its adoption
 * leaves nothing the next one serves wrong. The dead engines are child JVMs that halt without cleanup
 * ({@link WarmRestartProbe}).
 */
class PoolWarmRestartTest
{
    private static final String PAGE_SIZE = "16KiB";
    private static final long PAGE_BYTES = 16 << 10;

    private final List<Path> pools = new ArrayList<>();

    @AfterEach
    void removePools() throws Exception
    {
        for (final Path pool : pools)
        {
            Files.deleteIfExists(pool);
        }
    }

    private Path shmPath(final String name)
    {
        final Path path = Path.of("/dev/shm/kvtier-warm-" + name + "-" + ProcessHandle.current().pid());
        pools.add(path);
        return path;
    }

    private static void crashAfterCommitting(final Path dir, final Path pool, final String poolSize, final int pages, final int halfWritten)
        throws Exception
    {
        final String out = ChildJvm.run(dir.resolve("commit.txt"), WarmRestartProbe.class, "commit", pool.toString(), PAGE_SIZE, poolSize,
            Integer.toString(pages), Integer.toString(halfWritten));
        assertThat(out).as("the dead engine's output").contains("ready");
        assertThat(pool).as("the dead engine left its pool file").exists();
    }

    /** Waits until adoption has accounted for every committed page of the dead pool, or fails saying how far it got. */
    private static void awaitAdoption(final Engine engine, final long committed) throws InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (accounted(engine) < committed)
        {
            if (System.nanoTime() - deadline > 0)
            {
                fail("adoption accounted for " + accounted(engine) + " of " + committed + " committed pages in 60 s: " + adoptionCounts(engine));
            }
            Thread.sleep(5);
        }
    }

    private static long accounted(final Engine engine)
    {
        return engine.counters().getOpaque(EngineCounter.POOL_PAGES_ADOPTED) + engine.counters().getOpaque(EngineCounter.POOL_ADOPT_CORRUPT)
            + engine.counters().getOpaque(EngineCounter.POOL_ADOPT_SKIPPED);
    }

    private static String adoptionCounts(final Engine engine)
    {
        return "adopted " + engine.counters().getOpaque(EngineCounter.POOL_PAGES_ADOPTED) + ", corrupt "
            + engine.counters().getOpaque(EngineCounter.POOL_ADOPT_CORRUPT) + ", skipped " + engine.counters().getOpaque(EngineCounter.POOL_ADOPT_SKIPPED);
    }

    /**
     * Acquires key {@code (high, low)} alone and checks its bytes.
     *
     * @return whether it was served; fails if it was served with bytes other than those derived from it
     */
    private static boolean servedIntact(final Session session, final long high, final long low)
    {
        session.keys().clear();
        session.keys().add(high, low);
        if (session.acquire(0, 1) == 0)
        {
            return false;
        }
        try
        {
            final String wrong = WarmRestartProbe.check(session.page(0), session.payloadLength(0), high, low, PAGE_BYTES);
            if (wrong != null)
            {
                fail("a wrong page was served: " + wrong);
            }
            return true;
        }
        finally
        {
            session.release();
        }
    }

    @Test
    void shouldAdoptEveryCommittedPageOfADeadEnginesPoolAndNothingItHadNotCommitted(@TempDir final Path dir) throws Exception
    {
        final Path pool = shmPath("adopt");
        final int pages = 300;
        final int halfWritten = 20;
        crashAfterCommitting(dir, pool, "8MiB", pages, halfWritten);

        try (Engine engine = Engine.start(EngineConfig.from(WarmRestartProbe.settings(pool.toString(), PAGE_SIZE, "8MiB")));
             Session session = engine.openSession())
        {
            awaitAdoption(engine, pages);
            assertThat(engine.counters().getOpaque(EngineCounter.POOL_PAGES_ADOPTED)).as(adoptionCounts(engine)).isEqualTo(pages);
            assertThat(engine.counters().getOpaque(EngineCounter.POOL_ADOPT_CORRUPT)).isZero();
            for (int k = 0; k < pages; k++)
            {
                assertThat(servedIntact(session, 1, k)).as("committed key (1, %d) is served after the restart", k).isTrue();
            }
            for (int k = 0; k < halfWritten; k++)
            {
                // Sealed but never committed when the engine died: never visible, whatever its trailer says.
                assertThat(servedIntact(session, 2, k)).as("uncommitted key (2, %d)", k).isFalse();
                session.keys().clear();
                session.keys().add(2, k);
                assertThat(session.lookup(0, 1)).isZero();
            }
        }
    }

    @Test
    void shouldDropAndCountCorruptPagesAndNeverServeThem(@TempDir final Path dir) throws Exception
    {
        final Path pool = shmPath("corrupt");
        final int pages = 200;
        crashAfterCommitting(dir, pool, "8MiB", pages, 0);
        final List<Long> corrupted = new ArrayList<>();
        try (DeadPool dead = new DeadPool(pool))
        {
            final Map<Long, Integer> pageOf = dead.servingPagesOf(1);
            assertThat(pageOf).hasSize(pages);
            // Three ways a page goes bad between the runs: its payload, its trailer, its metadata's CRC.
            for (long low = 0; low < 30; low++)
            {
                final int page = pageOf.get(low);
                switch ((int)(low % 3))
                {
                    case 0 -> dead.flip(page, 0);
                    case 1 -> dead.flip(page, PAGE_BYTES + PageFrameDescriptor.KEY_LOW_OFFSET);
                    default -> dead.flipMetadata(page, PageMetadataDescriptor.PAYLOAD_CRC_OFFSET);
                }
                corrupted.add(low);
            }
            // A second SERVING page of an intact key, as no engine leaves one: adopted once, the other skipped.
            dead.duplicate(pageOf.get(100L), dead.freePage());
        }
        try (Engine engine = Engine.start(EngineConfig.from(WarmRestartProbe.settings(pool.toString(), PAGE_SIZE, "8MiB")));
             Session session = engine.openSession())
        {
            awaitAdoption(engine, pages + 1);
            assertThat(engine.counters().getOpaque(EngineCounter.POOL_ADOPT_CORRUPT)).as(adoptionCounts(engine)).isEqualTo(corrupted.size());
            assertThat(engine.counters().getOpaque(EngineCounter.POOL_PAGES_ADOPTED)).isEqualTo(pages - corrupted.size());
            assertThat(engine.counters().getOpaque(EngineCounter.POOL_ADOPT_SKIPPED)).as("the second page of key (1, 100)").isEqualTo(1);
            for (long k = 0; k < pages; k++)
            {
                assertThat(servedIntact(session, 1, k)).as("key (1, %d), %s", k, corrupted.contains(k) ? "corrupted" : "intact")
                    .isEqualTo(!corrupted.contains(k));
            }
        }
    }

    @Test
    void shouldStartColdNamingWhyWhenTheDeadEnginesPagesAreOfAnotherSize(@TempDir final Path dir) throws Exception
    {
        final Path pool = shmPath("geometry");
        crashAfterCommitting(dir, pool, "8MiB", 50, 0);
        try (Engine engine = Engine.start(EngineConfig.from(WarmRestartProbe.settings(pool.toString(), "32KiB", "8MiB")));
             Session session = engine.openSession())
        {
            assertThat(engine.pool().adoptRefusal()).contains("16384").contains("pool.page-size").contains("32768");
            session.keys().add(1, 0);
            assertThat(session.lookup(0, 1)).isZero();
            assertThat(accounted(engine)).isZero();
        }
    }

    @Test
    void shouldStartColdWhenWarmRestartIsOff(@TempDir final Path dir) throws Exception
    {
        final Path pool = shmPath("off");
        crashAfterCommitting(dir, pool, "8MiB", 50, 0);
        final Map<String, String> settings = WarmRestartProbe.settings(pool.toString(), PAGE_SIZE, "8MiB");
        settings.put(EngineConfig.POOL_WARM_RESTART, "false");
        try (Engine engine = Engine.start(EngineConfig.from(settings));
             Session session = engine.openSession())
        {
            assertThat(engine.pool().adoptRefusal()).isNull();
            session.keys().add(1, 0);
            assertThat(session.lookup(0, 1)).isZero();
            assertThat(accounted(engine)).isZero();
        }
    }

    /** Commits keys {@code (1, 0)} to {@code (1, pages - 1)}, each filled with the bytes derived from its key. */
    private static void commitPages(final Engine engine, final Session session, final int pages)
    {
        session.keys().clear();
        for (int k = 0; k < pages; k++)
        {
            session.keys().add(1, k);
        }
        assertThat(session.reserve(0, pages)).isEqualTo(pages);
        for (int k = 0; k < pages; k++)
        {
            session.payloadLength(k, WarmRestartProbe.fill(session.page(k), 1, k, engine.pool().pageSize()));
        }
        session.commit(0, pages);
    }

    private static Map<String, String> keptSettings(final Path pool)
    {
        final Map<String, String> settings = WarmRestartProbe.settings(pool.toString(), PAGE_SIZE, "8MiB");
        settings.put(EngineConfig.POOL_KEEP_ON_STOP, "true");
        return settings;
    }

    /**
     * An upgrade or a planned restart: with {@code pool.keep-on-stop} a clean stop leaves the pool file,
     * and the next engine at the path, in the same process here, adopts its committed pages, each
     * verified, and none of the pages a client was still writing when the engine stopped.
     */
    @Test
    void shouldAdoptEveryCommittedPageAfterACleanStopThatKeptThePool() throws Exception
    {
        final Path pool = shmPath("kept");
        final int pages = 200;
        final int halfWritten = 16;
        try (Engine engine = Engine.start(EngineConfig.from(keptSettings(pool)));
             Session session = engine.openSession())
        {
            commitPages(engine, session, pages);
            // A reservation the stop finds open: its pages were sealed for key (2, k) with another key's bytes.
            session.keys().clear();
            for (int k = 0; k < halfWritten; k++)
            {
                session.keys().add(2, k);
            }
            assertThat(session.reserve(0, halfWritten)).isEqualTo(halfWritten);
            for (int k = 0; k < halfWritten; k++)
            {
                engine.pool().frames().seal(session.pageId(k), 2, k, WarmRestartProbe.fill(session.page(k), 3, k, PAGE_BYTES));
            }
        }
        assertThat(pool).as("the pool file after a clean stop with pool.keep-on-stop").exists();

        try (Engine engine = Engine.start(EngineConfig.from(keptSettings(pool)));
             Session session = engine.openSession())
        {
            assertThat(engine.pool().adoptRefusal()).isNull();
            awaitAdoption(engine, pages);
            assertThat(engine.counters().getOpaque(EngineCounter.POOL_PAGES_ADOPTED)).as(adoptionCounts(engine)).isEqualTo(pages);
            assertThat(engine.counters().getOpaque(EngineCounter.POOL_ADOPT_CORRUPT)).isZero();
            for (int k = 0; k < pages; k++)
            {
                assertThat(servedIntact(session, 1, k)).as("committed key (1, %d) is served after the clean stop", k).isTrue();
            }
            for (int k = 0; k < halfWritten; k++)
            {
                assertThat(servedIntact(session, 2, k)).as("key (2, %d), reserved but not committed at the stop", k).isFalse();
            }
        }
        assertThat(pool).as("kept again by the second engine's clean stop").exists();
    }

    /** By default a clean stop removes the pool file, so the next start is cold. */
    @Test
    void shouldRemoveThePoolAtACleanStopByDefault() throws Exception
    {
        final Path pool = shmPath("removed");
        final Map<String, String> settings = WarmRestartProbe.settings(pool.toString(), PAGE_SIZE, "8MiB");
        try (Engine engine = Engine.start(EngineConfig.from(settings));
             Session session = engine.openSession())
        {
            commitPages(engine, session, 50);
        }
        assertThat(pool).as("the pool file after a clean stop without pool.keep-on-stop").doesNotExist();
        try (Engine engine = Engine.start(EngineConfig.from(settings));
             Session session = engine.openSession())
        {
            session.keys().add(1, 0);
            assertThat(session.lookup(0, 1)).isZero();
            assertThat(accounted(engine)).isZero();
        }
    }

    /** A kept pool damaged while no engine ran: the damaged pages are dropped and counted, the rest served. */
    @Test
    void shouldDropPagesOfAKeptPoolDamagedWhileNoEngineRan() throws Exception
    {
        final Path pool = shmPath("kept-damaged");
        final int pages = 120;
        try (Engine engine = Engine.start(EngineConfig.from(keptSettings(pool)));
             Session session = engine.openSession())
        {
            commitPages(engine, session, pages);
        }
        final List<Long> damaged = List.of(3L, 40L, 77L);
        try (DeadPool kept = new DeadPool(pool))
        {
            final Map<Long, Integer> pageOf = kept.servingPagesOf(1);
            assertThat(pageOf).hasSize(pages);
            for (final long low : damaged)
            {
                kept.flip(pageOf.get(low), 100);
            }
        }
        try (Engine engine = Engine.start(EngineConfig.from(keptSettings(pool)));
             Session session = engine.openSession())
        {
            awaitAdoption(engine, pages);
            assertThat(engine.counters().getOpaque(EngineCounter.POOL_ADOPT_CORRUPT)).as(adoptionCounts(engine)).isEqualTo(damaged.size());
            for (long k = 0; k < pages; k++)
            {
                assertThat(servedIntact(session, 1, k)).as("key (1, %d)", k).isEqualTo(!damaged.contains(k));
            }
        }
    }

    /**
     * Engines killed with SIGKILL while they adopt, one after another on the same pool, and then one that
     * finishes: every page it serves is the one derived from its key, and at least one kill came while
     * adoption was under way (the killed engine's own pool held fewer pages than the one it adopted from).
     */
    @Test
    void shouldServeNoWrongPageAfterEnginesAreKilledWhileAdopting(@TempDir final Path dir) throws Exception
    {
        final Path pool = shmPath("kill");
        final int pages = 12_000;
        final String poolSize = "256MiB";
        crashAfterCommitting(dir, pool, poolSize, pages, 64);
        final Random random = new Random(21);
        int before = pages;
        int partial = 0;
        final List<String> rounds = new ArrayList<>();
        for (int round = 0; round < 3 && before > 0; round++)
        {
            final int at = 1 + random.nextInt(Math.max(1, before / 2));
            final Process engine = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"), WarmRestartProbe.class.getName(),
                "adopt", pool.toString(), PAGE_SIZE, poolSize, Integer.toString(at)).redirectErrorStream(true).start();
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(engine.getInputStream(), StandardCharsets.UTF_8)))
            {
                final StringBuilder seen = new StringBuilder();
                String line;
                while ((line = lines.readLine()) != null && !line.startsWith("adopting "))
                {
                    seen.append(line).append('\n');
                }
                if (line == null)
                {
                    fail("the adopting engine ended before it adopted " + at + " pages:\n" + seen);
                }
                engine.destroyForcibly(); // SIGKILL, in the middle of adopting
                assertThat(engine.waitFor(30, TimeUnit.SECONDS)).isTrue();
            }
            finally
            {
                engine.destroyForcibly();
            }
            final int after;
            try (DeadPool dead = new DeadPool(pool))
            {
                after = dead.servingPagesOf(1).size();
            }
            rounds.add("round " + round + ": killed after " + at + ", " + after + " of " + before + " pages adopted");
            partial += after < before ? 1 : 0;
            assertThat(after).as("pages the killed engine had adopted").isLessThanOrEqualTo(before);
            before = after;
        }
        assertThat(partial).as("kills that came while adoption was under way: %s", rounds).isPositive();

        try (Engine engine = Engine.start(EngineConfig.from(WarmRestartProbe.settings(pool.toString(), PAGE_SIZE, poolSize)));
             Session session = engine.openSession())
        {
            awaitAdoption(engine, before);
            assertThat(engine.counters().getOpaque(EngineCounter.POOL_ADOPT_CORRUPT)).as(adoptionCounts(engine)).isZero();
            int served = 0;
            for (int k = 0; k < pages; k++)
            {
                served += servedIntact(session, 1, k) ? 1 : 0;
            }
            for (int k = 0; k < 64; k++)
            {
                assertThat(servedIntact(session, 2, k)).as("uncommitted key (2, %d)", k).isFalse();
            }
            assertThat(served).as("pages served after %s", rounds).isEqualTo(before);
        }
    }

    /** A dead engine's pool file, mapped read-write by the test to look into it and to damage it. */
    private static final class DeadPool implements AutoCloseable
    {
        private final Arena arena = Arena.ofShared();
        private final MemorySegment file;
        private final PagePoolDescriptor.Layout layout;
        private final PageMetadataReader metadata;

        DeadPool(final Path path) throws Exception
        {
            try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE))
            {
                file = channel.map(FileChannel.MapMode.READ_WRITE, 0, channel.size(), arena);
            }
            layout = new PoolHeader(file.asSlice(0, PagePoolDescriptor.HEADER_LENGTH)).readLayout(path);
            metadata = new PageMetadataReader(file.asSlice(layout.metadataOffset(), (long)layout.pageCount() * PageMetadataDescriptor.ENTRY_LENGTH),
                layout.pageCount());
        }

        /** @return the SERVING pages whose key's high half is {@code high}, by the key's low half */
        Map<Long, Integer> servingPagesOf(final long high)
        {
            final Map<Long, Integer> pages = new TreeMap<>();
            for (int page = 0; page < layout.pageCount(); page++)
            {
                if (PageStateWord.state(metadata.stateWordAcquire(page)) == PageStateWord.SERVING && metadata.keyHighPlain(page) == high)
                {
                    pages.put(metadata.keyLowPlain(page), page);
                }
            }
            return pages;
        }

        /** @return a FREE page */
        int freePage()
        {
            for (int page = layout.pageCount() - 1; page >= 0; page--)
            {
                if (PageStateWord.state(metadata.stateWordAcquire(page)) == PageStateWord.FREE)
                {
                    return page;
                }
            }
            throw new IllegalStateException("no free page in the dead pool");
        }

        /** Copies a page's frame and metadata entry over another page. */
        void duplicate(final int page, final int to)
        {
            MemorySegment.copy(file, PageMetadataDescriptor.entryOffset(layout.metadataOffset(), page), file,
                PageMetadataDescriptor.entryOffset(layout.metadataOffset(), to), PageMetadataDescriptor.ENTRY_LENGTH);
            MemorySegment.copy(file, layout.dataOffset() + page * layout.frameLength(), file, layout.dataOffset() + to * layout.frameLength(),
                layout.frameLength());
        }

        void flip(final int page, final long offsetInFrame)
        {
            final long at = layout.dataOffset() + page * layout.frameLength() + offsetInFrame;
            file.set(ValueLayout.JAVA_BYTE, at, (byte)(file.get(ValueLayout.JAVA_BYTE, at) ^ 0x5A));
        }

        void flipMetadata(final int page, final long offsetInEntry)
        {
            final long at = PageMetadataDescriptor.entryOffset(layout.metadataOffset(), page) + offsetInEntry;
            file.set(ValueLayout.JAVA_BYTE, at, (byte)(file.get(ValueLayout.JAVA_BYTE, at) ^ 0x5A));
        }

        @Override
        public void close()
        {
            arena.close();
        }
    }
}
