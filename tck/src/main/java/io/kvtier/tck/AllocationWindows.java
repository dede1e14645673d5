package io.kvtier.tck;

import org.junit.jupiter.api.Assumptions;

import java.lang.management.ManagementFactory;

/**
 * Measures what one thread allocates per key while a test repeats rounds of work: windows of rounds until one is
 * clean or the windows run out, keeping the best. The FFM linker allocates until C2 has compiled and inlined the
 * downcalls, which happens in the background; a real per-key allocation shows in every window.
 */
public final class AllocationWindows
{
    /** The best window: its bytes over its keys. */
    public record Best(long bytes, long keys)
    {
        /** @return bytes a key */
        public double perKey()
        {
            return bytes / (double)keys;
        }
    }

    private AllocationWindows()
    {
    }

    /**
     * Skips the calling test (an assumption) when this JVM cannot count a thread's allocation.
     *
     * @return the counter, enabled
     */
    public static com.sun.management.ThreadMXBean counter()
    {
        Assumptions.assumeTrue(ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean, "no per-thread allocation counter");
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        Assumptions.assumeTrue(threads.isThreadAllocatedMemorySupported(), "no per-thread allocation counter");
        threads.setThreadAllocatedMemoryEnabled(true);
        return threads;
    }

    /**
     * @param threadId        the thread whose allocation counts
     * @param roundsPerWindow rounds a window
     * @param keysPerRound    keys a round moves
     * @param maxWindows      windows at most
     * @param round           one round of work, run on the calling thread
     * @return the window with the fewest bytes a key; it stops at the first under one byte a key
     */
    public static Best best(final long threadId, final int roundsPerWindow, final long keysPerRound, final int maxWindows, final Runnable round)
    {
        final com.sun.management.ThreadMXBean threads = counter();
        final long keysPerWindow = keysPerRound * roundsPerWindow;
        Best best = null;
        for (int window = 0; window < maxWindows && (best == null || best.perKey() >= 1.0); window++)
        {
            final long before = threads.getThreadAllocatedBytes(threadId);
            for (int i = 0; i < roundsPerWindow; i++)
            {
                round.run();
            }
            final Best measured = new Best(threads.getThreadAllocatedBytes(threadId) - before, keysPerWindow);
            if (best == null || measured.perKey() < best.perKey())
            {
                best = measured;
            }
        }
        return best;
    }
}
