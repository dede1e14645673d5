package io.kvtier.bench.ipc;

import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import org.HdrHistogram.Histogram;

/**
 * The same one-key lookup as {@link IpcBenchClient}'s, through an in-process {@link Session} of the
 * engine that serves IPC: the engine's own round trip (its pipeline ring and thread), without the
 * socket-less IPC path in front of it. {@code kvtier bench ipc} prints it beside the IPC figure, so the
 * gap between the two is what IPC adds (the IPC thread's hop and the second process), not the engine.
 */
final class InProcessLookupTiming
{
    private InProcessLookupTiming()
    {
    }

    /**
     * Writes one page, then times one-key lookups of it.
     *
     * @param engine     a running engine
     * @param warmups    unrecorded lookups first
     * @param iterations recorded lookups
     * @return their round trips in nanoseconds
     */
    public static Histogram measure(final Engine engine, final int warmups, final int iterations)
    {
        final Histogram histogram = new Histogram(PingPongBaseline.HIGHEST_TRACKABLE_NANOS, 3);
        try (Session session = engine.openSession())
        {
            session.keys().add(0x6b76746965722d69L, 0x6e2d70726f636573L);
            if (session.reserve(0, 1) == 1)
            {
                session.page(0).asSlice(0, 8).fill((byte)1);
                session.payloadLength(0, 8);
                session.commit(0, 1);
            }
            for (int i = 0; i < warmups + iterations; i++)
            {
                final long start = System.nanoTime();
                final int found = session.lookup(0, 1);
                final long elapsed = System.nanoTime() - start;
                if (found != 1)
                {
                    throw new IllegalStateException("the in-process lookup found " + found + " pages, not 1");
                }
                if (i >= warmups)
                {
                    histogram.recordValue(Math.min(elapsed, PingPongBaseline.HIGHEST_TRACKABLE_NANOS));
                }
            }
        }
        return histogram;
    }
}
