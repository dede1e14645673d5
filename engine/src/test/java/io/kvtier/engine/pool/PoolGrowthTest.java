package io.kvtier.engine.pool;

import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.nativeaccess.libc.LibC;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * A pool allocated in the background ({@code pool.allocate-first}, {@link PoolGrowth}): the engine serves
 * from the first share while the rest is allocated, never hands out a page whose blocks are not allocated
 * yet (a reservation, an adoption), takes the pages of each chunk as it lands, and keeps serving with the
 * pages it has when the filesystem refuses a chunk. The growth is held and released chunk by chunk through
 * a test allocator in place of {@code posix_fallocate}, which then calls the real one.
 */
class PoolGrowthTest
{
    private static final String PAGE_SIZE = "64KiB";

    private final List<Path> pools = new ArrayList<>();
    private HeldGrowth growth;

    /** Holds every chunk until a permit is given; fails the chunk numbered {@link #failAt} as ENOSPC would. */
    private static final class HeldGrowth implements PoolGrowth.Allocator
    {
        final Semaphore permits = new Semaphore(0);
        final AtomicInteger chunks = new AtomicInteger();
        volatile int failAt = -1;

        @Override
        public int allocate(final int fd, final long offset, final long length)
        {
            try
            {
                permits.acquire();
            }
            catch (final InterruptedException ex)
            {
                return -LibC.EINTR;
            }
            if (chunks.incrementAndGet() == failAt)
            {
                return -LibC.ENOSPC;
            }
            return LibC.instance().orElseThrow().posixFallocate(fd, offset, length);
        }
    }

    @BeforeEach
    void holdTheGrowth()
    {
        Assumptions.assumeTrue(LibC.instance().isPresent(), "skipped: the pool grows in the background only with native access (posix_fallocate)");
        growth = new HeldGrowth();
        PoolGrowth.testAllocator(growth);
    }

    @AfterEach
    void release() throws IOException
    {
        PoolGrowth.testAllocator(null);
        if (growth != null)
        {
            growth.permits.release(1 << 20);
        }
        for (final Path pool : pools)
        {
            Files.deleteIfExists(pool);
        }
    }

    private Map<String, String> settings(final Path pool, final String size)
    {
        pools.add(pool);
        final Map<String, String> settings = new HashMap<>();
        settings.put(EngineConfig.POOL_PATH, pool.toString());
        settings.put(EngineConfig.POOL_PAGE_SIZE, PAGE_SIZE);
        settings.put(EngineConfig.POOL_SIZE, size);
        settings.put("pool.allocate-first", "1MiB");
        settings.put("pool.allocate-chunk", "2MiB");
        return settings;
    }

    private static Path shm(final String name)
    {
        return Path.of("/dev/shm/kvtier-growth-" + name + "-" + ProcessHandle.current().pid());
    }

    private static void await(final String what, final BooleanSupplier condition) throws InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean())
        {
            if (System.nanoTime() - deadline > 0)
            {
                fail("not within 30 s: " + what);
            }
            Thread.sleep(2);
        }
    }

    /** Bytes of the file's blocks that are allocated, as stat(1) counts them. */
    private static long allocatedBlocks(final Path file) throws Exception
    {
        final Process stat = new ProcessBuilder("stat", "-c", "%b %B", file.toString()).redirectErrorStream(true).start();
        final String[] out = new String(stat.getInputStream().readAllBytes()).strip().split(" ");
        assertThat(stat.waitFor()).as("stat %s", file).isZero();
        return Long.parseLong(out[0]) * Long.parseLong(out[1]);
    }

    /** Reserves keys (high, from) .. (high, from + count - 1) and fills each reserved page whole; returns how many were reserved. */
    private static int reserveAndFill(final Engine engine, final Session session, final long high, final int count)
    {
        session.keys().clear();
        for (int k = 0; k < count; k++)
        {
            session.keys().add(high, k);
        }
        final int reserved = session.reserve(0, count);
        for (int k = 0; k < reserved; k++)
        {
            session.page(k).fill((byte)(high + k));
            session.payloadLength(k, (int)engine.pool().pageSize());
        }
        return reserved;
    }

    private static void assertPagesBelow(final Session session, final int reserved, final int allocated)
    {
        for (int k = 0; k < reserved; k++)
        {
            assertThat(session.pageId(k)).as("page of reserved key %d, with %d pages allocated", k, allocated).isLessThan(allocated);
        }
    }

    @Test
    void shouldAllocateTheWholeFileFirstWhenTheShareAskedForIsThePoolOrMore()
    {
        final io.kvtier.client.pool.PagePoolDescriptor.Layout layout = io.kvtier.client.pool.PagePoolDescriptor.layout(64 << 10, 256, 65_536, 4);
        assertThat(PoolGrowth.firstShare(layout, Long.MAX_VALUE)).as("the old PagePool.create forms ask for everything").isEqualTo(layout.fileLength());
        assertThat(PoolGrowth.firstShare(layout, 256L << 16)).isEqualTo(layout.fileLength());
        final long onePage = PoolGrowth.firstShare(layout, 1);
        assertThat(onePage).as("at least a page, ending on a 2 MiB boundary")
            .isGreaterThanOrEqualTo(layout.dataOffset() + layout.frameLength()).isLessThan(layout.fileLength());
        assertThat(onePage % PoolGrowth.CHUNK_ALIGNMENT).isZero();
    }

    @Test
    void shouldServeFromTheFirstShareNeverPastItAndTakeEachChunksPagesAsItLands() throws Exception
    {
        final Path path = shm("held");
        try (Engine engine = Engine.start(EngineConfig.from(settings(path, "16MiB")));
             Session first = engine.openSession();
             Session second = engine.openSession();
             Session third = engine.openSession())
        {
            final PagePool pool = engine.pool();
            final int pages = pool.pageCount();
            final int share = pool.allocatedPagesAcquire();
            assertThat(share).as("pages of the first share, of %d", pages).isGreaterThanOrEqualTo(16).isLessThan(pages / 4);
            assertThat(engine.counters().getOpaque(EngineCounter.POOL_PAGES_ALLOCATED)).isEqualTo(share);
            assertThat(Files.size(path)).as("the file has its full length at once").isEqualTo(pool.layout().fileLength());
            assertThat(allocatedBlocks(path)).as("blocks allocated while the growth is held").isEqualTo(pool.allocatedBytesAcquire())
                .isLessThan(pool.layout().dataOffset() + (long)(share + 1) * pool.frameLength() + PoolGrowth.CHUNK_ALIGNMENT);

            // Serving at once, from the first share only: a reservation of every page gets the share, and no page past it.
            final int reserved = reserveAndFill(engine, first, 1, pages);
            assertThat(reserved).as("pages reserved while the growth is held").isEqualTo(share);
            assertPagesBelow(first, reserved, share);
            assertThat(first.status(reserved)).isEqualTo(PageEntryStatus.POOL_FULL);
            // Kept reserved (a committed page could be evicted for the next reservation): the share stays in use.

            // One chunk lands: its pages join, and only they.
            growth.permits.release();
            await("the first chunk's pages join", () -> engine.counters().getOpaque(EngineCounter.POOL_PAGES_ALLOCATED) > share);
            final int grown = pool.allocatedPagesAcquire();
            assertThat(engine.counters().getOpaque(EngineCounter.POOL_PAGES_ALLOCATED)).isEqualTo(grown);
            assertThat(grown).isLessThan(pages);
            final int more = reserveAndFill(engine, second, 2, pages);
            assertThat(more).as("pages reserved after one chunk, with the %d of the share reserved", reserved).isEqualTo(grown - share);
            assertPagesBelow(second, more, grown);
            for (int k = 0; k < more; k++)
            {
                assertThat(second.pageId(k)).as("a page of the new chunk").isGreaterThanOrEqualTo(share);
            }
            second.abort(0, more);

            // The rest lands: every page of the pool can be reserved.
            growth.permits.release(1 << 20);
            await("every page joins", () -> engine.counters().getOpaque(EngineCounter.POOL_PAGES_ALLOCATED) == pages);
            assertThat(pool.growing()).isFalse();
            assertThat(allocatedBlocks(path)).isGreaterThanOrEqualTo(pool.layout().dataOffset() + (long)pages * pool.frameLength());
            final int rest = reserveAndFill(engine, third, 3, pages - reserved);
            assertThat(rest).isEqualTo(pages - reserved);
            assertThat(third.commit(0, rest)).isEqualTo(rest);
        }
    }

    @Test
    void shouldKeepServingWithThePagesBeforeAChunkTheFilesystemRefusedAndSaySo() throws Exception
    {
        final List<String> warnings = new CopyOnWriteArrayList<>();
        final java.util.logging.Logger log = java.util.logging.Logger.getLogger(PoolGrowth.class.getName());
        final java.util.logging.Handler capture = capture(warnings);
        log.addHandler(capture);
        final Path path = shm("refused");
        try (Engine engine = Engine.start(EngineConfig.from(settings(path, "16MiB")));
             Session session = engine.openSession())
        {
            final PagePool pool = engine.pool();
            final int share = pool.allocatedPagesAcquire();
            growth.failAt = 2;
            growth.permits.release(1 << 20);
            await("the growth stops at the refused chunk", () -> !pool.growing());
            final int allocated = pool.allocatedPagesAcquire();
            assertThat(allocated).as("the share and the first chunk").isGreaterThan(share).isLessThan(pool.pageCount());
            await("the engine takes the first chunk's pages", () -> engine.counters().getOpaque(EngineCounter.POOL_PAGES_ALLOCATED) == allocated);
            // The growth thread records the failure (growing() turns false) before it logs the warning.
            await("the refused chunk is logged", () -> !warnings.isEmpty());
            assertThat(warnings).singleElement().asString().contains("pool.path = \"" + path + "\"", "stopped at", "free",
                "keeps serving with the " + allocated + " of " + pool.pageCount() + " pages");

            final int reserved = reserveAndFill(engine, session, 1, pool.pageCount());
            assertThat(reserved).isEqualTo(allocated);
            assertPagesBelow(session, reserved, allocated);
            commitBelowLowWaterAndReadBack(session, reserved, pool.pageSize());
        }
        finally
        {
            log.removeHandler(capture);
        }
    }

    /**
     * A real ENOSPC: the pool's filesystem (a small tmpfs) fills while the growth is held, the next chunk's
     * posix_fallocate fails, and every page the engine hands out can still be written whole (a page past the
     * allocated ones would fault, SIGBUS, on its first store).
     */
    @Test
    void shouldWriteEveryPageItHandsOutWhenItsFilesystemFillsMidGrowth() throws Exception
    {
        final Path mount = Files.createTempDirectory("kvtier-growth-fs");
        final Process mounting = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", mount.toString()).redirectErrorStream(true).start();
        final boolean exited = mounting.waitFor(30, TimeUnit.SECONDS);
        final String said = new String(mounting.getInputStream().readAllBytes()).strip();
        if (!exited || mounting.exitValue() != 0)
        {
            Files.deleteIfExists(mount);
            Assumptions.abort("skipped: this test mounts a 24 MiB tmpfs to fill it, which needs root (mount -t tmpfs); mount said: " + said);
        }
        try
        {
            final Path path = mount.resolve("pool");
            try (Engine engine = Engine.start(EngineConfig.from(settings(path, "16MiB")));
                 Session session = engine.openSession())
            {
                final PagePool pool = engine.pool();
                PoolOnAFullFilesystemTest.fill(mount.resolve("filler"));
                growth.permits.release(1 << 20);
                await("the growth stops on the full filesystem", () -> !pool.growing());
                final int allocated = pool.allocatedPagesAcquire();
                assertThat(allocated).isLessThan(pool.pageCount());
                await("the engine has the allocated pages", () -> engine.counters().getOpaque(EngineCounter.POOL_PAGES_ALLOCATED) == allocated);
                final int reserved = reserveAndFill(engine, session, 1, pool.pageCount());
                assertThat(reserved).isEqualTo(allocated);
                assertPagesBelow(session, reserved, allocated);
                commitBelowLowWaterAndReadBack(session, reserved, pool.pageSize());
            }
        }
        finally
        {
            new ProcessBuilder("umount", "-l", mount.toString()).redirectErrorStream(true).start().waitFor(30, TimeUnit.SECONDS);
            Files.deleteIfExists(mount);
        }
    }

    /**
     * A warm restart into a pool still being allocated: adoption takes only allocated pages, waits for more
     * rather than ending, and adopts every committed page once the pool is grown.
     */
    @Test
    void shouldAdoptOnlyIntoAllocatedPagesAndWaitForTheRestWhileThePoolGrows() throws Exception
    {
        final Path path = shm("adopt");
        final Map<String, String> settings = settings(path, "16MiB");
        settings.put(EngineConfig.POOL_KEEP_ON_STOP, "true");
        settings.put(EngineConfig.POOL_EVICT_HIGH, "0.99");
        settings.put(EngineConfig.POOL_EVICT_LOW, "0.98");
        final int committed = 200;
        growth.permits.release(1 << 20);
        try (Engine engine = Engine.start(EngineConfig.from(settings));
             Session session = engine.openSession())
        {
            await("the first pool grows", () -> !engine.pool().growing());
            assertThat(reserveAndFill(engine, session, 1, committed)).isEqualTo(committed);
            assertThat(session.commit(0, committed)).isEqualTo(committed);
        }
        final HeldGrowth held = new HeldGrowth();
        PoolGrowth.testAllocator(held);
        try (Engine engine = Engine.start(EngineConfig.from(settings));
             Session session = engine.openSession())
        {
            growth = held;
            final PagePool pool = engine.pool();
            final int share = pool.allocatedPagesAcquire();
            assertThat(share).isLessThan(committed);
            // Adoption fills the share up to its high water level, and then waits.
            await("adoption fills the first share", () -> engine.counters().getOpaque(EngineCounter.POOL_PAGES_ADOPTED) >= share - 2);
            assertThat(engine.counters().getOpaque(EngineCounter.POOL_PAGES_ADOPTED)).isLessThan(share);
            assertThat(engine.counters().getOpaque(EngineCounter.POOL_ADOPT_SKIPPED)).as("adoption did not end for want of pages").isZero();
            // The last jobs lent may still be with the adopter when the count reaches share - 2, so the pages served are
            // counted again until the count stood still across a whole pass: then every page adopted is served, and only those.
            await("every adopted page served, and no other", () ->
            {
                final long adopted = engine.counters().getOpaque(EngineCounter.POOL_PAGES_ADOPTED);
                return servedFromTheShare(session, committed, share, pool.pageSize()) == adopted
                    && engine.counters().getOpaque(EngineCounter.POOL_PAGES_ADOPTED) == adopted;
            });

            held.permits.release(1 << 20);
            await("every committed page is adopted", () -> engine.counters().getOpaque(EngineCounter.POOL_PAGES_ADOPTED) == committed);
            assertThat(engine.counters().getOpaque(EngineCounter.POOL_ADOPT_SKIPPED)).isZero();
            assertThat(engine.counters().getOpaque(EngineCounter.POOL_ADOPT_CORRUPT)).isZero();
            for (int k = 0; k < committed; k++)
            {
                session.keys().clear();
                session.keys().add(1, k);
                assertThat(session.acquire(0, 1)).as("key (1, %d) after the pool grew", k).isEqualTo(1);
                assertThat(session.page(0).get(ValueLayout.JAVA_BYTE, 0)).isEqualTo((byte)(1 + k));
                session.release();
            }
            engine.pool().keepFileOnClose(false);
        }
    }

    /** @return how many of the keys (1, 0..committed-1) are served, each from a page of the share with its own bytes */
    private static int servedFromTheShare(final Session session, final int committed, final int share, final long pageSize)
    {
        int served = 0;
        for (int k = 0; k < committed; k++)
        {
            session.keys().clear();
            session.keys().add(1, k);
            if (session.acquire(0, 1) == 1)
            {
                served++;
                assertThat(session.pageId(0)).as("the page key (1, %d) was adopted into", k).isLessThan(share);
                assertThat(session.page(0).get(ValueLayout.JAVA_BYTE, pageSize - 1)).isEqualTo((byte)(1 + k));
                session.release();
            }
        }
        return served;
    }

    /**
     * Commits the first three quarters of the reserved pages (below the low water level, so that none is
     * evicted before it is read back), aborts the rest, and reads each committed page's last byte back.
     */
    private static void commitBelowLowWaterAndReadBack(final Session session, final int reserved, final long pageSize)
    {
        final int kept = reserved * 3 / 4;
        session.abort(kept, reserved - kept);
        assertThat(session.commit(0, kept)).isEqualTo(kept);
        assertThat(session.acquire(0, kept)).isEqualTo(kept);
        for (int k = 0; k < kept; k++)
        {
            assertThat(session.page(k).get(ValueLayout.JAVA_BYTE, pageSize - 1)).isEqualTo((byte)(1 + k));
        }
        session.release();
    }

    private static java.util.logging.Handler capture(final List<String> warnings)
    {
        return new java.util.logging.Handler()
        {
            @Override
            public void publish(final java.util.logging.LogRecord record)
            {
                if (record.getLevel().intValue() >= java.util.logging.Level.WARNING.intValue())
                {
                    warnings.add(java.text.MessageFormat.format(record.getMessage(), record.getParameters()));
                }
            }

            @Override
            public void flush()
            {
            }

            @Override
            public void close()
            {
            }
        };
    }
}
