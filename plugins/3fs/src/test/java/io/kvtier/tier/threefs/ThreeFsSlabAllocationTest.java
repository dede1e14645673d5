package io.kvtier.tier.threefs;

import io.kvtier.spi.PageKey;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.TierStatus;
import io.kvtier.tck.RecordingTierBatch;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The 3FS tier's slab moves pages through USRBIO without allocating a key, as the POSIX tier's slab does through its
 * ring ({@code PosixTierTest.shouldNotAllocatePerKeyOnTheLibcOrIoUringPath}): the I/O thread's allocation over windows
 * of write, read and probe rounds of 256 keys (claims of 64 pages, each in one round of the rings), after the JIT has
 * compiled the downcalls, stays under a byte a key. Before the transport found regions, completions and deadlines
 * without objects it allocated 54 bytes a key here.
 */
class ThreeFsSlabAllocationTest extends UsrbioTierTestBase
{
    @Test
    void shouldNotAllocatePerKeyOnTheUsrbioPath() throws java.io.IOException
    {
        assumeTrue(ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean, "no per-thread allocation counter");
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isThreadAllocatedMemorySupported(), "no per-thread allocation counter");
        threads.setThreadAllocatedMemoryEnabled(true);
        final int count = 256;
        // The engine's pool, as it maps it: a /dev/shm file the 3FS client maps too, so pages move with no copy.
        withShmPool(2 * count, (file, pool) -> measure(threads, pool, count));
    }

    private void measure(final com.sun.management.ThreadMXBean threads, final MemorySegment pool, final int count)
    {
        final StorageTier tier = open(settings(java.util.Map.of("dir", dir.toString(), "lib", FakeUsrbio.library().toString(), "usrbio", "on",
            "layout", "slab", "extent-size", "32MiB", "entries", "256", "io-threads", "1")));
        final List<PageKey> keys = keys(count);
        final List<MemorySegment> sources = poolPages(pool, 0, count);
        final List<MemorySegment> destinations = poolPages(pool, count, count);
        for (int i = 0; i < count; i++)
        {
            io.kvtier.tck.PageBytes.fill(sources.get(i), 1 + i);
        }
        final Runnable round = () ->
        {
            assertThat(run(tier::write, "write", keys, sources).statuses()).containsOnly(TierStatus.OK);
            assertThat(run(tier::read, "read", keys, destinations).statuses()).containsOnly(TierStatus.OK);
            assertThat(run(tier::exists, "exists", keys, java.util.Collections.nCopies(count, MemorySegment.NULL)).statuses())
                .containsOnly(TierStatus.OK);
        };
        round.run();
        final long worker = Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("kvtier-posix-t-io"))
            .findFirst().orElseThrow().threadId();
        final int roundsPerWindow = 5;
        final long keysPerWindow = 3L * roundsPerWindow * count;
        double best = Double.MAX_VALUE;
        long bestBytes = -1;
        for (int window = 0; window < 300 && best >= 1.0; window++)
        {
            final long before = threads.getThreadAllocatedBytes(worker);
            for (int i = 0; i < roundsPerWindow; i++)
            {
                round.run();
            }
            final long allocated = threads.getThreadAllocatedBytes(worker) - before;
            if (allocated / (double)keysPerWindow < best)
            {
                best = allocated / (double)keysPerWindow;
                bestBytes = allocated;
            }
        }
        assertThat(best)
            .as("bytes the slab's I/O thread allocated per key in its best window (%d bytes over %d keys)", bestBytes, keysPerWindow)
            .isLessThan(1.0);
    }
}
