package io.kvtier.bench.jmh;

import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.client.PageKeyChain;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One client's one-key round trip while another client commits large pages: the engine has one
 * pipeline thread, so whatever a commit costs there is time every other client's request waits behind.
 * (The CRC32C of every page was computed there when this benchmark was written; now the committing client
 * seals its pages on its own thread and the engine thread only checks the seals.) Group {@code withCommitter}: one thread looks up a key (the measured
 * latency) while a second reserves and commits {@value #COMMIT_PAGES} new pages of 2 MiB in a loop, in a
 * 512 MiB pool, so every few rounds the reservation evicts too. Group {@code alone}: the same lookup with
 * no other client. Sample-time mode keeps every round trip's latency, for the percentiles.
 *
 * <p>Only the public {@link Session} API is used, so the benchmark measures any engine that keeps it.
 * Each operation checks its answer: a lookup that does not find its key, or a commit of fewer than all its
 * pages, fails the run rather than timing a wrong path. The committer does not write payload bytes: a
 * commit checksums a page's whole payload length whatever it holds.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx1g"})
public class CommitInterferenceBenchmark
{
    /** Pages per commit. */
    static final int COMMIT_PAGES = 16;
    /** Bytes per page. */
    static final int PAGE_SIZE = 2 << 20;

    private static final long LOOKUP_KEY_HIGH = 0x6C6F6F6B75700000L;
    private static final long LOOKUP_KEY_LOW = 0x0123456789ABCDEFL;
    private static final long COMMIT_KEY_HIGH = 0x636F6D6D69740000L;

    /** The engine, with the looked-up page committed. */
    @State(Scope.Group)
    public static class EngineState
    {
        Engine engine;

        @Setup(Level.Trial)
        public void setUp() throws Exception
        {
            final Map<String, String> settings = BenchEngines.poolOnly("interference", "512MiB", PAGE_SIZE);
            // Longer than any run: the lookup session's pin must not lapse under a long -i or -r.
            settings.put(EngineConfig.LEASE_SESSION_TIMEOUT, "24h");
            engine = BenchEngines.start(settings);
            try (Session writer = engine.openSession())
            {
                writer.keys().add(LOOKUP_KEY_HIGH, LOOKUP_KEY_LOW);
                if (writer.reserve(0, 1) != 1)
                {
                    throw new IllegalStateException("could not reserve the looked-up page");
                }
                writer.payloadLength(0, PAGE_SIZE);
                if (writer.commit(0, 1) != 1)
                {
                    throw new IllegalStateException("could not commit the looked-up page");
                }
            }
        }

        @TearDown(Level.Trial)
        public void tearDown()
        {
            engine.close();
        }
    }

    /** The measured client: one key, pinned so that the committer's evictions cannot take it. */
    @State(Scope.Thread)
    public static class LookupState
    {
        Session session;

        @Setup(Level.Trial)
        public void setUp(final EngineState state)
        {
            session = state.engine.openSession();
            session.keys().add(LOOKUP_KEY_HIGH, LOOKUP_KEY_LOW);
            if (session.acquire(0, 1) != 1)
            {
                throw new IllegalStateException("the looked-up page is not in the pool");
            }
        }

        @TearDown(Level.Trial)
        public void tearDown()
        {
            session.close();
        }
    }

    /** The other client: a fresh run of keys per commit, so every reservation needs new pages. */
    @State(Scope.Thread)
    public static class CommitterState
    {
        Session session;
        PageKeyChain keys;
        long next;

        @Setup(Level.Trial)
        public void setUp(final EngineState state)
        {
            session = state.engine.openSession();
            keys = session.keys();
        }

        @TearDown(Level.Trial)
        public void tearDown()
        {
            session.close();
        }
    }

    private static int lookup(final LookupState state)
    {
        final int found = state.session.lookup(0, 1);
        if (found != 1)
        {
            throw new IllegalStateException("lookup found " + found + " pages of the pinned key, not 1");
        }
        return found;
    }

    /** @return pages found (1): one ring round trip while the other thread commits */
    @Benchmark
    @Group("withCommitter")
    @GroupThreads(1)
    public int lookupWithCommitter(final LookupState state)
    {
        return lookup(state);
    }

    /** @return pages committed: reserve then commit {@value #COMMIT_PAGES} new pages of 2 MiB */
    @Benchmark
    @Group("withCommitter")
    @GroupThreads(1)
    public int commit(final CommitterState state)
    {
        state.keys.clear();
        for (int i = 0; i < COMMIT_PAGES; i++)
        {
            state.keys.add(COMMIT_KEY_HIGH, state.next++);
        }
        final int reserved = state.session.reserve(0, COMMIT_PAGES);
        if (reserved != COMMIT_PAGES)
        {
            throw new IllegalStateException("reserved " + reserved + " of " + COMMIT_PAGES + " new pages");
        }
        for (int i = 0; i < COMMIT_PAGES; i++)
        {
            state.session.payloadLength(i, PAGE_SIZE);
        }
        final int committed = state.session.commit(0, COMMIT_PAGES);
        if (committed != COMMIT_PAGES)
        {
            throw new IllegalStateException("committed " + committed + " of " + COMMIT_PAGES + " reserved pages");
        }
        return committed;
    }

    /** @return pages found (1): the same round trip with no other client */
    @Benchmark
    @Group("alone")
    @GroupThreads(1)
    public int lookupAlone(final LookupState state)
    {
        return lookup(state);
    }
}
