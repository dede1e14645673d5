package io.kvtier.bench.ipc;

import io.kvtier.client.ClientOptions;
import io.kvtier.client.KvtierClient;
import io.kvtier.client.Namespace;
import io.kvtier.client.PageKeyChain;
import io.kvtier.client.ReservedPages;
import io.kvtier.bench.workload.JitSettling;
import io.kvtier.bench.workload.RunPhase;
import io.kvtier.client.protocol.IdleStrategy;
import org.HdrHistogram.Histogram;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Locale;
import java.util.function.LongSupplier;

/**
 * The client process of {@code kvtier bench ipc}: attaches to the engine over the IPC protocol,
 * writes the pages it will look up (so lookups hit and scan the whole batch), then times one-key
 * LOOKUP round trips and batched LOOKUPs, and prints one line of figures on stdout for the parent.
 * Before each timed part, and after the last, it prints a phase line and waits for the parent to
 * answer with a line on stdin, so that the parent reads the engine's counters around exactly that part.
 *
 * <p>Each warm-up lasts its round trips and then as long as either JVM's JIT compilers are still busy
 * (this one's, and the engine's as the parent answers {@link #SETTLING}), up to a limit: the client is a
 * fresh JVM in every run and every turn of {@code --compare}, and on two cores compilers busy through the
 * timed part took a core from it (perf sched: 1.3 s of compiler threads in the client and 1.1 s in the
 * engine's JVM over 4 s of a turn of 5,000 warm-up and 10,000 timed round trips), so that its figures were
 * a loaded host's.
 */
public final class IpcBenchClient
{
    /** The namespace of the benchmark's pages. */
    static final Namespace NAMESPACE = new Namespace("kvtier-bench/ipc", "bench/ipc", 0, "");
    /** The start of a phase line: the phase's name follows. */
    static final String PHASE = "kvtier-ipc-bench-phase ";
    /** The phase of the timed one-key lookups. */
    static final String ONE_KEY = "one-key";
    /** The phase of the timed batched lookups. */
    static final String BATCHED = "batched";
    /** After the last timed part. */
    static final String DONE = "done";
    /** Asked while a warm-up waits for the compilers: the parent answers {@link #SETTLED} once its own have quieted down. */
    static final String SETTLING = "settling";
    /** The parent's answer to {@link #SETTLING} when its JVM's compilers have quieted down (anything else: not yet). */
    static final String SETTLED = "settled";
    /** Warm-up round trips between two looks at the compilers, once the warm-up's own count is done. */
    static final int SETTLE_CHUNK = 1_000;

    private IpcBenchClient()
    {
    }

    /**
     * @param args socket path, warm-up round trips, measured round trips, keys per batched lookup, batched lookups, the client's
     *             idle strategy (an {@link IdleStrategy.Kind} name)
     * @throws Exception if the engine cannot be reached or a request fails
     */
    public static void main(final String[] args) throws Exception
    {
        final Path socket = Path.of(args[0]);
        final int warmups = Integer.parseInt(args[1]);
        final int iterations = Integer.parseInt(args[2]);
        final int batchKeys = Integer.parseInt(args[3]);
        final int batches = Integer.parseInt(args[4]);
        final IdleStrategy.Kind idleKind = IdleStrategy.Kind.valueOf(args[5]);
        final BufferedReader parent = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        final long jitWaitNanos = Long.parseLong(args[6]);
        final IpcBenchFigures figures = run(socket, warmups, iterations, batchKeys, batches, idleKind, jitWaitNanos, phase ->
        {
            System.out.println(PHASE + phase);
            System.out.flush();
            final String answer = parent.readLine();
            if (answer == null)
            {
                throw new IOException("the parent closed stdin before phase " + phase);
            }
            return answer;
        });
        System.out.println(figures.toLine());
        System.out.flush();
    }

    /** Told before each timed part, and after the last, and asked while a warm-up waits; returns when the parent has taken note. */
    @FunctionalInterface
    interface PhaseListener
    {
        /**
         * @param phase {@link #ONE_KEY}, {@link #BATCHED}, {@link #DONE} or {@link #SETTLING}
         * @return the parent's answer: to {@link #SETTLING}, {@link #SETTLED} once the engine's compilers have quieted down
         * @throws IOException if the parent is gone
         */
        String begin(String phase) throws IOException;
    }

    /** One warm-up round trip, which fails as a timed one would. */
    @FunctionalInterface
    interface RoundTrip
    {
        /** Makes it. */
        void make();
    }

    /**
     * A warm-up: its {@code minimum} round trips, then {@link #SETTLE_CHUNK} more at a time until this JVM's compilers
     * ({@code jit}) and the engine's (the parent's answer to {@link #SETTLING}) have both quieted down, or until
     * {@code limitNanos} have passed since the minimum was done (0: no wait).
     *
     * @param roundTrip  one round trip
     * @param minimum    round trips made whatever the compilers do
     * @param jit        this JVM's compilers
     * @param phases     asked whether the engine's have quieted down
     * @param clock      nanoseconds, {@code System::nanoTime} but in tests
     * @param limitNanos the longest it waits for the compilers
     * @return the round trips made
     * @throws IOException if the parent is gone
     */
    static long warmUp(final RoundTrip roundTrip, final int minimum, final JitSettling jit, final PhaseListener phases, final LongSupplier clock,
                       final long limitNanos) throws IOException
    {
        for (int i = 0; i < minimum; i++)
        {
            roundTrip.make();
        }
        long made = minimum;
        final long start = clock.getAsLong();
        long now = start;
        while (now - start < limitNanos && !(jit.settled(now) && SETTLED.equals(phases.begin(SETTLING))))
        {
            for (int i = 0; i < SETTLE_CHUNK; i++)
            {
                roundTrip.make();
            }
            made += SETTLE_CHUNK;
            now = clock.getAsLong();
        }
        return made;
    }

    /**
     * Connects, writes the pages, and times the lookups.
     *
     * @param socket     the engine's socket
     * @param warmups    unrecorded one-key lookups first
     * @param iterations one-key lookups timed
     * @param batchKeys  keys per batched lookup
     * @param batches    batched lookups timed
     * @param idleKind     how the client waits for its answers
     * @param jitWaitNanos the longest each warm-up waits, past its round trips, for the compilers to quiet down
     * @param phases       told before each timed part and after the last
     * @return the figures
     * @throws Exception if the engine cannot be reached or a request fails
     */
    static IpcBenchFigures run(final Path socket, final int warmups, final int iterations, final int batchKeys, final int batches,
                               final IdleStrategy.Kind idleKind, final long jitWaitNanos, final PhaseListener phases) throws Exception
    {
        try (KvtierClient client = KvtierClient.connect(socket, ClientOptions.of(batchKeys, NAMESPACE), idleKind))
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
            final long oneKeyWarmups = warmUp(() -> lookupOne(client, oneKey), warmups, new JitSettling(), phases, System::nanoTime, jitWaitNanos);
            phases.begin(ONE_KEY);
            final long compiledBefore = RunPhase.compileMillisSoFar();
            final IdleStrategy.Counts beforeOneKey = client.waitCounts();
            for (int i = 0; i < iterations; i++)
            {
                final long start = System.nanoTime();
                lookupOne(client, oneKey);
                final long elapsed = System.nanoTime() - start;
                rtt.recordValue(Math.min(elapsed, PingPongBaseline.HIGHEST_TRACKABLE_NANOS));
            }
            final IdleStrategy.Counts oneKeyCounts = client.waitCounts().minus(beforeOneKey);
            final long oneKeyCompileMillis = compiledBefore < 0 ? -1 : RunPhase.compileMillisSoFar() - compiledBefore;
            warmUp(() -> client.lookup(keys), Math.max(1, batches / 10), new JitSettling(), phases, System::nanoTime, jitWaitNanos);
            phases.begin(BATCHED);
            final IdleStrategy.Counts beforeBatched = client.waitCounts();
            long keysFound = 0;
            final long start = System.nanoTime();
            for (int i = 0; i < batches; i++)
            {
                keysFound += client.lookup(keys).poolPages();
            }
            final long batchNanos = System.nanoTime() - start;
            final IdleStrategy.Counts batchedCounts = client.waitCounts().minus(beforeBatched);
            phases.begin(DONE);
            if (keysFound != (long)batches * batchKeys)
            {
                throw new IllegalStateException("batched lookups found " + keysFound + " of " + (long)batches * batchKeys + " keys");
            }
            return new IpcBenchFigures(rtt.getTotalCount(), rtt.getValueAtPercentile(50), rtt.getValueAtPercentile(99),
                rtt.getValueAtPercentile(99.9), rtt.getMaxValue(), keysFound, batchNanos, oneKeyCounts, batchedCounts, oneKeyWarmups,
                oneKeyCompileMillis);
        }
    }

    /** One one-key LOOKUP, which must find its page in the pool. */
    private static void lookupOne(final KvtierClient client, final PageKeyChain oneKey)
    {
        final int found = client.lookup(oneKey).poolPages();
        if (found != 1)
        {
            throw new IllegalStateException("the one-key lookup found " + found + " pages, not 1");
        }
    }

    /**
     * What the client measured.
     *
     * @param roundTrips    one-key lookups timed
     * @param p50Nanos      their median
     * @param p99Nanos      99th percentile
     * @param p999Nanos     99.9th percentile
     * @param maxNanos      slowest
     * @param batchedKeys   keys looked up in the batched lookups
     * @param batchedNanos  time the batched lookups took
     * @param oneKeyWaits   how the client's thread waited during the timed one-key lookups
     * @param batchedWaits  and during the timed batched ones
     * @param warmups       one-key round trips of the warm-up before them, its count and those made while compilers were busy
     * @param compileMillis this JVM's compiler threads' CPU time during the timed one-key lookups, -1 when unknown
     */
    record IpcBenchFigures(long roundTrips, long p50Nanos, long p99Nanos, long p999Nanos, long maxNanos, long batchedKeys, long batchedNanos,
                           IdleStrategy.Counts oneKeyWaits, IdleStrategy.Counts batchedWaits, long warmups, long compileMillis)
    {
        private static final String PREFIX = "kvtier-ipc-bench";
        private static final int FIELDS = 20;

        String toLine()
        {
            return String.format(Locale.ROOT, "%s %d %d %d %d %d %d %d %s %s %d %d", PREFIX, roundTrips, p50Nanos, p99Nanos, p999Nanos, maxNanos,
                batchedKeys, batchedNanos, countsText(oneKeyWaits), countsText(batchedWaits), warmups, compileMillis);
        }

        private static String countsText(final IdleStrategy.Counts c)
        {
            return String.format(Locale.ROOT, "%d %d %d %d %d", c.waits(), c.yields(), c.sleeps(), c.sleepNanos(), c.wakesSent());
        }

        static IpcBenchFigures parse(final String output)
        {
            for (final String line : output.split("\n"))
            {
                final String[] f = line.trim().split(" ");
                if (f.length == FIELDS && f[0].equals(PREFIX))
                {
                    final long[] v = new long[FIELDS - 1];
                    for (int i = 0; i < v.length; i++)
                    {
                        v[i] = Long.parseLong(f[i + 1]);
                    }
                    return new IpcBenchFigures(v[0], v[1], v[2], v[3], v[4], v[5], v[6], new IdleStrategy.Counts(v[7], v[8], v[9], v[10], v[11]),
                        new IdleStrategy.Counts(v[12], v[13], v[14], v[15], v[16]), v[17], v[18]);
                }
            }
            throw new IllegalStateException("the client process printed no figures: " + output);
        }
    }
}
