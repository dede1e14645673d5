package io.kvtier.engine;

import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.status.EngineCounter;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The steady state allocates nothing: bytes allocated, as {@code com.sun.management.ThreadMXBean}
 * counts them per thread, by the engine's own threads (the pipeline thread, the ticker, the POSIX tier's
 * I/O threads) and by the client thread, over windows of many requests of every kind a client makes:
 * lookups, acquires (from the pool and loaded from L3), releases, reserves that evict, commits, and the
 * backups and tier evictions they cause.
 *
 * <p>The first windows are the warm-up: until C2 has compiled the hot paths, the interpreter and C1
 * allocate what C2's escape analysis later removes (the FFM linker's transient objects in the POSIX
 * tier's downcalls, for one), and C2 compiles in the background at its own pace. So windows are measured
 * one after another until one is clean, and the test passes on the first clean window, which must also
 * show the work it stands for in the engine's counters. An allocation on the request path, even one per
 * thousand lookups, leaves no window clean and fails the test.
 */
class EngineAllocationTest
{
    private static final int KEYS = 8;
    private static final int MAX_WINDOWS = 60;
    private static final long FRESH = 0x6672657368000000L;

    private com.sun.management.ThreadMXBean threads;

    @BeforeEach
    void enableCounters()
    {
        assumeTrue(ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean, "no per-thread allocation counter");
        threads = (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isThreadAllocatedMemorySupported(), "no per-thread allocation counter");
        threads.setThreadAllocatedMemoryEnabled(true);
    }

    @Test
    void shouldAllocateNothingOnAnyThreadOnceWarmOverThePool() throws Exception
    {
        final Set<Thread> before = liveThreads();
        // 64 pages: three prefixes of 8 keys come back every sixth round and stay (pool hits); a new prefix
        // every other round misses, and its reserve evicts the least recently used pages.
        try (Engine engine = EngineFixture.start(EngineFixture.settings(null, 64));
             Session session = engine.openSession())
        {
            final long[] engineThreads = engineThreads(before, List.of("kvtier-pipeline"));
            final Window clean = firstCleanWindow(engine, engineThreads, 10_000, new Workload(session, 3, 2, false));
            assertAllocatedNothing(clean);
            assertDid(clean, EngineCounter.L2_HIT_PAGES, EngineCounter.PAGES_COMMITTED, EngineCounter.PAGES_EVICTED);
        }
    }

    /** The same rounds in two requests each: a lookupAndLock of the prefix and a commitAndRelease (protocol 1.3's combined requests). */
    @Test
    void shouldAllocateNothingOnAnyThreadOnceWarmWithTheCombinedRequests() throws Exception
    {
        final Set<Thread> before = liveThreads();
        try (Engine engine = EngineFixture.start(EngineFixture.settings(null, 64));
             Session session = engine.openSession())
        {
            final long[] engineThreads = engineThreads(before, List.of("kvtier-pipeline"));
            final Window clean = firstCleanWindow(engine, engineThreads, 10_000, new Workload(session, 3, 2, false, true));
            assertAllocatedNothing(clean);
            assertDid(clean, EngineCounter.L2_HIT_PAGES, EngineCounter.PAGES_COMMITTED, EngineCounter.PAGES_EVICTED);
        }
    }

    @Test
    void shouldAllocateNothingOnAnyThreadOnceWarmLoadingFromAndBackingUpToThePosixTier() throws Exception
    {
        loadAndBackUp(false, false);
    }

    /** The same with the slab layout, whose frame writes here go as one vectored write each, and its extent-making thread. */
    @Test
    void shouldAllocateNothingOnAnyThreadOnceWarmLoadingFromAndBackingUpToThePosixTiersSlab() throws Exception
    {
        loadAndBackUp(false, true);
    }

    /** The same with KV events on: the engine thread records every page stored and removed in its event ring; a reader drains it. */
    @Test
    void shouldAllocateNothingOnAnyThreadOnceWarmWithKvEventsOn() throws Exception
    {
        loadAndBackUp(true, false);
    }

    private void loadAndBackUp(final boolean events, final boolean slab) throws Exception
    {
        final Path shm = Path.of("/dev/shm");
        final Path l3 = Files.createTempDirectory(Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir")),
            "kvtier-engine-alloc-");
        try
        {
            // A pool of 32 pages and an L3 of 100 frames (8 KiB each): eight prefixes of 8 keys in turn no longer
            // fit the pool, so acquires load them from L3 (lookups prefetch some); a new prefix every fourth round
            // is probed for, committed and backed up, and the tier evicts its oldest files to make room.
            final Map<String, String> settings = EngineFixture.settings(null, 32);
            settings.put("tier.disk.type", "posix");
            settings.put("tier.disk.dir", l3.toString());
            settings.put("tier.disk.capacity", "800KiB");
            settings.put("tier.disk.io-threads", "2");
            settings.put("tier.disk.layout", slab ? "slab" : "files");
            if (!slab)
            {
                // Spare temp files explicitly: on a host of fewer than 3 processors the default is none, and its thread
                // is one this test means to watch.
                settings.put("tier.disk.spare-temp-files", "64");
                // One fan-out level: its 256 directories are made at once, so no start-up thread is still busy making them.
                settings.put("tier.disk.fanout-levels", "1");
            }
            settings.put(EngineConfig.POLICY_WRITE, "write-through");
            if (events)
            {
                settings.put("events.enabled", "true");
            }
            final Set<Thread> before = liveThreads();
            try (Engine engine = EngineFixture.start(settings);
                 Session session = engine.openSession())
            {
                final java.util.concurrent.atomic.AtomicBoolean draining = new java.util.concurrent.atomic.AtomicBoolean(events);
                final Thread drainer = Thread.ofPlatform().daemon(true).start(() ->
                {
                    // The publisher's part, without ZMQ: reads the records the engine thread writes, so the ring never fills.
                    final io.kvtier.engine.events.EventRing ring = engine.events().map(io.kvtier.engine.events.EventSource::ring).orElse(null);
                    while (draining.get() && ring != null)
                    {
                        if (ring.poll((type, medium, high, low, tag) -> { }, 1024) == 0)
                        {
                            java.util.concurrent.locks.LockSupport.parkNanos(100_000);
                        }
                    }
                });
                final long[] engineThreads = engineThreads(before,
                    List.of("kvtier-pipeline", "kvtier-tier-disk", "kvtier-reverify", "kvtier-posix-disk-io-0", "kvtier-posix-disk-io-1",
                        slab ? "kvtier-posix-disk-extents" : "kvtier-posix-spares-disk"));
                final Window clean = firstCleanWindow(engine, engineThreads, 2_000, new Workload(session, 8, 4, false));
                assertAllocatedNothing(clean);
                assertDid(clean, EngineCounter.L3_PAGES_LOADED, EngineCounter.BACKUPS_COMPLETED, EngineCounter.L3_REMOVED_BY_TIER,
                    EngineCounter.PAGES_EVICTED);
                if (events)
                {
                    assertDid(clean, EngineCounter.EVENTS_RECORDED);
                }
                draining.set(false);
                drainer.join();
            }
        }
        finally
        {
            try (Stream<Path> paths = Files.walk(l3))
            {
                paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            }
        }
    }

    @Test
    void shouldAllocateNothingToCommitPagesShorterThanThePageSize() throws Exception
    {
        final Set<Thread> before = liveThreads();
        try (Engine engine = EngineFixture.start(EngineFixture.settings(null, 64));
             Session session = engine.openSession())
        {
            final long[] engineThreads = engineThreads(before, List.of("kvtier-pipeline"));
            final Window clean = firstCleanWindow(engine, engineThreads, 10_000, new Workload(session, 3, 2, true));
            assertAllocatedNothing(clean);
        }
    }

    /** The measured window must have done the work it stands for, or its zero proves nothing. */
    private static void assertDid(final Window window, final EngineCounter... counters)
    {
        for (final EngineCounter counter : counters)
        {
            assertThat(window.activity.get(counter)).as("%s over the measured window; all counters over it: %s", counter.label(), window.activity)
                .isPositive();
        }
    }

    private static Set<Thread> liveThreads()
    {
        return Thread.getAllStackTraces().keySet();
    }

    /** The ids of the threads the engine started, each by its name, so that none is silently left out. */
    private static long[] engineThreads(final Set<Thread> before, final List<String> names)
    {
        // The tier's start-up thread that makes its fan-out directories ends on its own; wait for it.
        EngineFixture.awaitTrue(() -> liveThreads().stream().noneMatch(thread -> thread.getName().endsWith("-mkdir")), "the fan-out directories are made");
        final List<Thread> started = liveThreads().stream()
            .filter(thread -> !before.contains(thread) && thread.getName().startsWith("kvtier-"))
            .sorted(Comparator.comparing(Thread::getName))
            .toList();
        assertThat(started).extracting(Thread::getName).as("threads the engine started").containsExactlyInAnyOrderElementsOf(names);
        return started.stream().mapToLong(Thread::threadId).toArray();
    }

    /**
     * Runs windows of {@code rounds} rounds until one allocates nothing on the client thread and the engine's
     * threads, or {@link #MAX_WINDOWS} have run; returns the first clean window, or the one that allocated least.
     */
    private Window firstCleanWindow(final Engine engine, final long[] engineThreads, final int rounds, final Workload workload)
    {
        Window best = null;
        for (int window = 1; window <= MAX_WINDOWS; window++)
        {
            final Map<EngineCounter, Long> countersBefore = engine.snapshot();
            // These reads allocate their arrays on this thread, so they go outside the client's own bracket.
            final long[] engineBefore = threads.getThreadAllocatedBytes(engineThreads);
            final long clientBefore = threads.getCurrentThreadAllocatedBytes();
            final long requestsBefore = workload.requests;
            for (int i = 0; i < rounds; i++)
            {
                workload.round();
            }
            final long clientAfter = threads.getCurrentThreadAllocatedBytes();
            final long[] engineAfter = threads.getThreadAllocatedBytes(engineThreads);
            final long[] perThread = new long[engineThreads.length + 1];
            perThread[0] = clientAfter - clientBefore;
            long bytes = perThread[0];
            for (int t = 0; t < engineThreads.length; t++)
            {
                perThread[t + 1] = engineAfter[t] - engineBefore[t];
                bytes += perThread[t + 1];
            }
            if (best == null || bytes < best.bytes)
            {
                final Map<EngineCounter, Long> countersAfter = engine.snapshot();
                final Map<EngineCounter, Long> activity = new EnumMap<>(EngineCounter.class);
                countersAfter.forEach((counter, value) -> activity.put(counter, value - countersBefore.get(counter)));
                best = new Window(window, workload.requests - requestsBefore, bytes, perThread, activity);
            }
            if (bytes == 0)
            {
                break;
            }
        }
        return best;
    }

    private static void assertAllocatedNothing(final Window window)
    {
        assertThat(window.bytes)
            .as("bytes allocated over window %d (the first clean one, else the least of %d) of %d requests; "
                + "client thread, then the engine's threads by name: %s", window.number, MAX_WINDOWS, window.requests,
                Arrays.toString(window.perThread))
            .isZero();
    }

    /** One measured window: its number, its requests, the bytes allocated in all and per thread, and the engine's counters over it. */
    private record Window(int number, long requests, long bytes, long[] perThread, Map<EngineCounter, Long> activity)
    {
    }

    /**
     * One client's requests: look up a prefix of {@value #KEYS} keys, acquire what is there, release it,
     * reserve and commit the rest. Most rounds take one of {@code hotPrefixes} prefixes in turn, so their
     * pages are evicted and come back; every {@code freshEvery}-th round takes a prefix never seen before.
     * Checks what each request did without allocating: a failed check throws.
     */
    private static final class Workload
    {
        private final Session session;
        private final int hotPrefixes;
        private final int freshEvery;
        private final boolean partialPages;
        private final boolean combined;
        private long round;
        private long hot;
        private long fresh;
        long requests;

        Workload(final Session session, final int hotPrefixes, final int freshEvery, final boolean partialPages)
        {
            this(session, hotPrefixes, freshEvery, partialPages, false);
        }

        /** @param combined whether each round is a lookupAndLock and a commitAndRelease instead of the five fine-grained requests */
        Workload(final Session session, final int hotPrefixes, final int freshEvery, final boolean partialPages, final boolean combined)
        {
            this.combined = combined;
            this.session = session;
            this.hotPrefixes = hotPrefixes;
            this.freshEvery = freshEvery;
            this.partialPages = partialPages;
        }

        void round()
        {
            final long prefix = round++ % freshEvery == freshEvery - 1 ? FRESH | fresh++ : hot++ % hotPrefixes;
            EngineFixture.keys(session, prefix, KEYS);
            if (combined)
            {
                combinedRound();
                return;
            }
            final int found = session.lookup(0, KEYS);
            final int pinned = session.acquire(0, KEYS);
            session.release(0, KEYS);
            if (found > KEYS || pinned > KEYS)
            {
                throw new IllegalStateException("a request over " + KEYS + " keys answered " + found + " and " + pinned);
            }
            final int reserved = session.reserve(pinned, KEYS - pinned);
            for (int i = pinned; i < KEYS; i++)
            {
                if (session.status(i) == PageEntryStatus.RESERVED)
                {
                    final long low = session.keys().low(i);
                    session.page(i).set(ValueLayout.JAVA_LONG_UNALIGNED, 0, low);
                    session.payloadLength(i, partialPages ? Math.max(Long.BYTES, EngineFixture.lengthFor(low)) : EngineFixture.PAGE_SIZE);
                }
            }
            final int committed = session.commit(pinned, KEYS - pinned);
            if (committed != reserved)
            {
                throw new IllegalStateException("committed " + committed + " of " + reserved + " reserved pages");
            }
            requests += 5;
        }

        private void combinedRound()
        {
            final int pinned = session.lookupAndLock(0, KEYS, io.kvtier.client.protocol.RequestDescriptor.RESERVE_ALL);
            final int reserved = session.reservedPages();
            if (pinned + reserved > KEYS)
            {
                throw new IllegalStateException("a lookupAndLock over " + KEYS + " keys pinned " + pinned + " and reserved " + reserved);
            }
            for (int i = pinned; i < KEYS; i++)
            {
                if (session.status(i) == PageEntryStatus.RESERVED)
                {
                    final long low = session.keys().low(i);
                    session.page(i).set(ValueLayout.JAVA_LONG_UNALIGNED, 0, low);
                    session.payloadLength(i, partialPages ? Math.max(Long.BYTES, EngineFixture.lengthFor(low)) : EngineFixture.PAGE_SIZE);
                }
            }
            final int committed = session.commitAndRelease(0, KEYS, false);
            if (committed != reserved || session.releasedPins() != pinned)
            {
                throw new IllegalStateException("committed " + committed + " of " + reserved + " reserved pages, released "
                    + session.releasedPins() + " of " + pinned + " pins");
            }
            requests += 2;
        }
    }
}
