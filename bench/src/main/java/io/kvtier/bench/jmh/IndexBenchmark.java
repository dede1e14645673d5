package io.kvtier.bench.jmh;

import io.kvtier.collections.KeyTable;
import io.kvtier.collections.KeyTableDescriptor;
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

import java.lang.foreign.Arena;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The key index at scale: a {@link KeyTable} holding millions of keys off-heap (its heap footprint is
 * one object whatever the size), probed for random present keys, against a {@link HashMap} of key
 * objects holding the same keys on the heap. Each probe checks that it found its key's own value.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx6g"})
public class IndexBenchmark
{
    @Param({"1000000", "8000000"})
    int entries;

    private Arena arena;
    private KeyTable table;
    private Map<PageKey, Integer> baseline;
    private long cursor;

    private static long high(final long i)
    {
        return i * 0x9E3779B97F4A7C15L;
    }

    private static long low(final long i)
    {
        return ~i * 0xC2B2AE3D27D4EB4FL;
    }

    @Setup
    public void setUp()
    {
        arena = Arena.ofShared();
        table = KeyTable.format(arena.allocate(KeyTableDescriptor.regionLength(entries), 64), entries);
        baseline = new HashMap<>(entries * 2);
        for (int i = 0; i < entries; i++)
        {
            table.value(table.insert(high(i), low(i)), i);
            baseline.put(new PageKey(high(i), low(i)), i);
        }
    }

    @TearDown
    public void tearDown()
    {
        arena.close();
    }

    private long nextKey()
    {
        // A fixed odd stride visits every key in a scattered order, defeating the caches as real keys would.
        cursor = (cursor + 0x5851F42D4C957F2DL) & Long.MAX_VALUE;
        return cursor % entries;
    }

    /** @return the value bound to a random present key (checked: the key's own number) */
    @Benchmark
    public int keyTableFind()
    {
        final long i = nextKey();
        final int slot = table.find(high(i), low(i));
        final int value = slot == KeyTable.NONE ? -1 : table.value(slot);
        if (value != (int)i)
        {
            throw new IllegalStateException("KeyTable.find of key " + i + " gave slot " + slot + " holding " + value);
        }
        return value;
    }

    /** @return the value of a random present key (checked: the key's own number) */
    @Benchmark
    public int baselineHashMapGet()
    {
        final long i = nextKey();
        final Integer value = baseline.get(new PageKey(high(i), low(i)));
        if (value == null || value != (int)i)
        {
            throw new IllegalStateException("HashMap.get of key " + i + " gave " + value);
        }
        return value;
    }
}
