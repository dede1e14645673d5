package io.kvtier.bench.jmh;

import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.spi.PageKey;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Prefix lookup and acquire of {@code pages} keys through the pipeline, against the same prefix walked
 * through a {@link HashMap} of key objects in the caller's thread (what a straightforward in-process
 * cache would do): one probe per key, {@code pages} probes per operation. Each operation checks that it
 * found, or pinned, every page, all of them in the pool.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx1g"})
public class LookupBenchmark
{
    @Param({"64"})
    int pages;

    /** The engine's eviction policy: every hit of an acquire is heard by it (the default against plain LRU). */
    @Param({"adaptive", "lru"})
    String eviction;

    /**
     * The pool. The adaptive policy replays one chain in {@code pages / 2048} into four miniature caches: a pool of
     * 16 MiB (2,048 pages) has every hit replayed in all four, a production pool of a GiB or more one in 64 or fewer.
     */
    @Param({"16MiB", "1GiB"})
    String poolSize;

    private Engine engine;
    private Session session;
    private final Map<PageKey, Integer> baseline = new HashMap<>();
    private long[] high;
    private long[] low;

    @Setup
    public void setUp() throws Exception
    {
        final Map<String, String> settings = BenchEngines.poolOnly("lookup", poolSize, 4096);
        settings.put(EngineConfig.POLICY_EVICTION, eviction);
        engine = BenchEngines.start(settings);
        session = engine.openSession();
        high = new long[pages];
        low = new long[pages];
        for (int i = 0; i < pages; i++)
        {
            high[i] = 0x6B65790000000000L | i;
            low[i] = i * 0x9E3779B97F4A7C15L;
            session.keys().add(high[i], low[i]);
            baseline.put(new PageKey(high[i], low[i]), i);
        }
        if (BenchEngines.writeAll(session, pages, 4096) != pages)
        {
            throw new IllegalStateException("setup could not commit " + pages + " pages");
        }
    }

    @TearDown
    public void tearDown()
    {
        session.close();
        engine.close();
    }

    /** @return prefix length found by the engine (all pages, all in the pool): one ring round trip */
    @Benchmark
    public int lookup()
    {
        final int found = session.lookup(0, pages);
        if (found != pages || session.l2Pages() != pages)
        {
            throw new IllegalStateException("lookup found " + found + " pages, " + session.l2Pages() + " of them in the pool; expected "
                + pages + ", all in the pool");
        }
        return found;
    }

    /** @return pages pinned (all, from the pool), then released: two ring round trips, a CAS per page each way */
    @Benchmark
    public int acquireRelease()
    {
        final int pinned = session.acquire(0, pages);
        final int fromPool = session.acquiredFromPool();
        session.release(0, pages);
        if (pinned != pages || fromPool != pages)
        {
            throw new IllegalStateException("acquire pinned " + pinned + " pages, " + fromPool + " of them from the pool; expected " + pages
                + ", all from the pool");
        }
        return pinned;
    }

    /** @return prefix length found (all pages) by probing a HashMap in this thread, with a key object per probe */
    @Benchmark
    public int baselineHashMapLookup()
    {
        int found = 0;
        while (found < pages && baseline.get(new PageKey(high[found], low[found])) != null)
        {
            found++;
        }
        if (found != pages)
        {
            throw new IllegalStateException("the HashMap prefix walk found " + found + " of " + pages + " keys");
        }
        return found;
    }
}
