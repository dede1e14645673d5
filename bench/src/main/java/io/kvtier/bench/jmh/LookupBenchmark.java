package io.kvtier.bench.jmh;

import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
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
 * Prefix lookup and acquire through the pipeline, against a {@link HashMap} of key objects probed in
 * the caller's thread (what a straightforward in-process cache would do).
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

    private Engine engine;
    private Session session;
    private final Map<PageKey, Integer> baseline = new HashMap<>();
    private long[] high;
    private long[] low;

    @Setup
    public void setUp() throws Exception
    {
        engine = BenchEngines.start(BenchEngines.poolOnly("lookup", "16MiB", 4096));
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

    /** @return prefix length found by the engine: pool index probe per key, one ring round trip */
    @Benchmark
    public int lookup()
    {
        return session.lookup(0, pages);
    }

    /** @return pages pinned, then released: two ring round trips, a CAS per page each way */
    @Benchmark
    public int acquireRelease()
    {
        final int pinned = session.acquire(0, pages);
        session.release(0, pages);
        return pinned;
    }

    /** @return prefix length found by probing a HashMap in this thread, with a key object per probe */
    @Benchmark
    public int baselineHashMapLookup()
    {
        int found = 0;
        while (found < pages && baseline.get(new PageKey(high[found], low[found])) != null)
        {
            found++;
        }
        return found;
    }
}
