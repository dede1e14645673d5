package io.kvtier.bench.jmh;

import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.client.PageKeyChain;
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
 * (in batches between the water levels). The client seals the page on its own thread (CRC32C,
 * trailer) before the commit request; the engine thread checks the seal and publishes the page. The
 * baseline is the one piece of work a commit cannot skip: the CRC32C of the page. Each operation checks
 * that it reserved and committed its page, the baseline that it checksummed the whole page.
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
    private PageKeyChain keys;
    private long next;
    private final CRC32C crc = new CRC32C();
    private ByteBuffer page;
    private long zeroPageCrc;

    @Setup
    public void setUp() throws Exception
    {
        engine = BenchEngines.start(BenchEngines.poolOnly("commit", "32MiB", pageSize));
        session = engine.openSession();
        keys = session.keys();
        page = ByteBuffer.allocateDirect(pageSize);
        final CRC32C reference = new CRC32C();
        reference.update(new byte[pageSize]);
        zeroPageCrc = reference.getValue();
    }

    @TearDown
    public void tearDown()
    {
        session.close();
        engine.close();
    }

    /** @return pages committed (1, after 1 reserved) */
    @Benchmark
    public int reserveCommit()
    {
        keys.clear();
        keys.add(0x636F6D6D69740000L, next++);
        final int reserved = session.reserve(0, 1);
        session.payloadLength(0, pageSize);
        final int committed = session.commit(0, 1);
        if (reserved != 1 || committed != 1)
        {
            throw new IllegalStateException("reserved " + reserved + " and committed " + committed + " of 1 new page");
        }
        return committed;
    }

    /** @return the CRC32C of one page (of zeros, checked against the value computed at setup), the floor of a commit */
    @Benchmark
    public long baselineCrc32c()
    {
        crc.reset();
        page.clear();
        crc.update(page);
        final long value = crc.getValue();
        if (value != zeroPageCrc)
        {
            throw new IllegalStateException("CRC32C of the " + pageSize + "-byte zero page was " + Long.toHexString(value) + ", not "
                + Long.toHexString(zeroPageCrc));
        }
        return value;
    }
}
