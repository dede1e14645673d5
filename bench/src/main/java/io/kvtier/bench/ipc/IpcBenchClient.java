package io.kvtier.bench.ipc;

import io.kvtier.client.ClientOptions;
import io.kvtier.client.KvtierClient;
import io.kvtier.client.Namespace;
import io.kvtier.client.PageKeyChain;
import io.kvtier.client.ReservedPages;
import org.HdrHistogram.Histogram;

import java.nio.file.Path;
import java.util.Locale;

/**
 * The client process of {@code kvtier bench ipc}: attaches to the engine over the IPC protocol,
 * writes the pages it will look up (so lookups hit and scan the whole batch), then times one-key
 * LOOKUP round trips and batched LOOKUPs, and prints one line of figures on stdout for the parent.
 */
public final class IpcBenchClient
{
    /** The namespace of the benchmark's pages. */
    static final Namespace NAMESPACE = new Namespace("kvtier-bench/ipc", "bench/ipc", 0, "");

    private IpcBenchClient()
    {
    }

    /**
     * @param args socket path, warm-up round trips, measured round trips, keys per batched lookup, batched lookups
     * @throws Exception if the engine cannot be reached or a request fails
     */
    public static void main(final String[] args) throws Exception
    {
        final Path socket = Path.of(args[0]);
        final int warmups = Integer.parseInt(args[1]);
        final int iterations = Integer.parseInt(args[2]);
        final int batchKeys = Integer.parseInt(args[3]);
        final int batches = Integer.parseInt(args[4]);
        System.out.println(run(socket, warmups, iterations, batchKeys, batches).toLine());
        System.out.flush();
    }

    static IpcBenchFigures run(final Path socket, final int warmups, final int iterations, final int batchKeys, final int batches)
        throws Exception
    {
        try (KvtierClient client = KvtierClient.connect(socket, ClientOptions.of(batchKeys, NAMESPACE)))
        {
            final int[] tokens = new int[batchKeys];
            for (int i = 0; i < tokens.length; i++)
            {
                tokens[i] = i;
            }
            final PageKeyChain keys = new PageKeyChain(batchKeys).compute(NAMESPACE, tokens, batchKeys, 1, false);
            try (ReservedPages pages = client.reserve(keys))
            {
                // The bytes do not matter: only the keys' presence in the pool does.
                pages.commit(8);
            }
            final PageKeyChain oneKey = new PageKeyChain(1).add(keys.high(0), keys.low(0));
            final Histogram rtt = new Histogram(PingPongBaseline.HIGHEST_TRACKABLE_NANOS, 3);
            for (int i = 0; i < warmups + iterations; i++)
            {
                final long start = System.nanoTime();
                final int found = client.lookup(oneKey).poolPages();
                final long elapsed = System.nanoTime() - start;
                if (found != 1)
                {
                    throw new IllegalStateException("the one-key lookup found " + found + " pages, not 1");
                }
                if (i >= warmups)
                {
                    rtt.recordValue(Math.min(elapsed, PingPongBaseline.HIGHEST_TRACKABLE_NANOS));
                }
            }
            for (int i = 0; i < Math.max(1, batches / 10); i++)
            {
                client.lookup(keys);
            }
            long keysFound = 0;
            final long start = System.nanoTime();
            for (int i = 0; i < batches; i++)
            {
                keysFound += client.lookup(keys).poolPages();
            }
            final long batchNanos = System.nanoTime() - start;
            if (keysFound != (long)batches * batchKeys)
            {
                throw new IllegalStateException("batched lookups found " + keysFound + " of " + (long)batches * batchKeys + " keys");
            }
            return new IpcBenchFigures(rtt.getTotalCount(), rtt.getValueAtPercentile(50), rtt.getValueAtPercentile(99),
                rtt.getValueAtPercentile(99.9), rtt.getMaxValue(), keysFound, batchNanos);
        }
    }

    /**
     * What the client measured.
     *
     * @param roundTrips   one-key lookups timed
     * @param p50Nanos     their median
     * @param p99Nanos     99th percentile
     * @param p999Nanos    99.9th percentile
     * @param maxNanos     slowest
     * @param batchedKeys  keys looked up in the batched lookups
     * @param batchedNanos time the batched lookups took
     */
    record IpcBenchFigures(long roundTrips, long p50Nanos, long p99Nanos, long p999Nanos, long maxNanos, long batchedKeys, long batchedNanos)
    {
        private static final String PREFIX = "kvtier-ipc-bench";

        String toLine()
        {
            return String.format(Locale.ROOT, "%s %d %d %d %d %d %d %d", PREFIX, roundTrips, p50Nanos, p99Nanos, p999Nanos, maxNanos, batchedKeys,
                batchedNanos);
        }

        static IpcBenchFigures parse(final String output)
        {
            for (final String line : output.split("\n"))
            {
                final String[] f = line.trim().split(" ");
                if (f.length == 8 && f[0].equals(PREFIX))
                {
                    return new IpcBenchFigures(Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3]), Long.parseLong(f[4]),
                        Long.parseLong(f[5]), Long.parseLong(f[6]), Long.parseLong(f[7]));
                }
            }
            throw new IllegalStateException("the client process printed no figures: " + output);
        }
    }
}
