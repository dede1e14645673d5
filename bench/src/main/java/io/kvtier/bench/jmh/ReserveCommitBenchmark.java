package io.kvtier.bench.jmh;

import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.key.KeyChain;
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

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;

/**
 * Reserve then commit of one new page, in steady state: the pool is full, so each reserve also evicts
 * (in batches between the water levels). The baseline is the one piece of work a commit cannot skip:
 * the CRC32C of the page.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx1g"})
public class ReserveCommitBenchmark
{
    @Param({"16384"})
    int pageSize;

    private Engine engine;
    private Session session;
    private KeyChain keys;
    private long next;
    private final CRC32C crc = new CRC32C();
    private ByteBuffer page;

    @Setup
    public void setUp() throws Exception
    {
        engine = BenchEngines.start(BenchEngines.poolOnly("commit", "32MiB", pageSize));
        session = engine.openSession();
        keys = session.keys();
        page = ByteBuffer.allocateDirect(pageSize);
    }

    @TearDown
    public void tearDown()
    {
        session.close();
        engine.close();
    }

    /** @return pages committed (1) */
    @Benchmark
    public int reserveCommit()
    {
        keys.clear();
        keys.add(0x636F6D6D69740000L, next++);
        session.reserve(0, 1);
        session.payloadLength(0, pageSize);
        return session.commit(0, 1);
    }

    /** @return the CRC32C of one page, the floor of a commit */
    @Benchmark
    public long baselineCrc32c()
    {
        crc.reset();
        page.clear();
        crc.update(page);
        return crc.getValue();
    }
}
