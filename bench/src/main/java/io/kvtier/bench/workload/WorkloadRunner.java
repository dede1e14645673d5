package io.kvtier.bench.workload;

import io.kvtier.engine.Engine;
import io.kvtier.client.Namespace;
import io.kvtier.engine.status.EngineCounter;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * Drives a {@link ChatWorkload} through an engine the way an inference engine would, from several
 * client threads, each with its own {@link WorkloadClient} (an in-process session, or a client in
 * another process): key the prompt, look it up, acquire the cached prefix and check every byte of it,
 * then compute, write and commit the pages that were missing.
 */
public final class WorkloadRunner
{
    /** Told of progress, from a monitoring thread. */
    public interface ProgressListener
    {
        /**
         * @param requests       requests done
         * @param expected       requests expected in all (an estimate)
         * @param pagesRequested prompt pages so far
         * @param hitPagesL2     pool hits so far
         * @param hitPagesL3     L3 hits so far
         * @param elapsedNanos   time since the start
         */
        void progress(long requests, long expected, long pagesRequested, long hitPagesL2, long hitPagesL3, long elapsedNanos);
    }

    /**
     * How to run.
     *
     * @param clients     concurrent client sessions
     * @param pageTokens  tokens per page
     * @param namespace   the key namespace of the pages
     * @param warmupShare the share of the workload's expected requests, from 0 to {@link #WARMUP_SHARE_MAX}, that
     *                    count as warm-up: the report gives their figures apart from the steady state's
     * @param untilJitSettles whether the warm-up, once its share is done, also lasts until this JVM's JIT compilers
     *                    have quieted down (less than a tenth of a core over half a second), up to
     *                    {@link #WARMUP_SHARE_MAX} of the expected requests
     */
    public record Options(int clients, int pageTokens, Namespace namespace, double warmupShare, boolean untilJitSettles)
    {
        /** The warm-up share a run takes unless told otherwise. */
        public static final double WARMUP_SHARE_DEFAULT = 0.25;
        /** The largest warm-up share: the steady state keeps at least a tenth of the run. */
        public static final double WARMUP_SHARE_MAX = 0.9;

        /**
         * @throws IllegalArgumentException naming the value, when the warm-up share is outside [0, {@link #WARMUP_SHARE_MAX}]
         */
        public Options
        {
            if (!(warmupShare >= 0 && warmupShare <= WARMUP_SHARE_MAX))
            {
                throw new IllegalArgumentException("warm-up share " + warmupShare + " is not a fraction from 0 to " + WARMUP_SHARE_MAX);
            }
        }

        /**
         * A warm-up of exactly its share of the requests.
         *
         * @param clients     concurrent client sessions
         * @param pageTokens  tokens per page
         * @param namespace   the key namespace of the pages
         * @param warmupShare the share of the workload's expected requests that count as warm-up
         */
        public Options(final int clients, final int pageTokens, final Namespace namespace, final double warmupShare)
        {
            this(clients, pageTokens, namespace, warmupShare, false);
        }

        /**
         * The default warm-up share.
         *
         * @param clients    concurrent client sessions
         * @param pageTokens tokens per page
         * @param namespace  the key namespace of the pages
         */
        public Options(final int clients, final int pageTokens, final Namespace namespace)
        {
            this(clients, pageTokens, namespace, WARMUP_SHARE_DEFAULT);
        }

        /**
         * @param expected the requests a workload is expected to make
         * @return the request whose answer ends the warm-up (counted from 1), 0 for no warm-up
         */
        public long warmupRequests(final long expected)
        {
            return Math.round(expected * warmupShare);
        }

        /**
         * @param expected the requests a workload is expected to make
         * @return the request whose answer ends the warm-up at the latest, also when the JIT never settles
         */
        long warmupLimit(final long expected)
        {
            return untilJitSettles ? Math.max(warmupRequests(expected), Math.round(expected * WARMUP_SHARE_MAX)) : warmupRequests(expected);
        }
    }

    /** Opens the clients of a run, one per client thread. */
    @FunctionalInterface
    public interface ClientFactory
    {
        /**
         * @param index which client, from 0
         * @return a client ready to serve requests
         */
        WorkloadClient open(int index);
    }

    private final Engine engine;
    private final ClientFactory clientFactory;
    private final ChatWorkload workload;
    private final Options options;
    private final AtomicLong requests = new AtomicLong();
    private final AtomicLong pagesRequested = new AtomicLong();
    private final AtomicLong hitL2 = new AtomicLong();
    private final AtomicLong hitL3 = new AtomicLong();
    private final AtomicLong written = new AtomicLong();
    /** CPU of the client threads of this process, each added as it ends; -1 once one could not tell. */
    private final AtomicLong clientCpuNanos = new AtomicLong();
    private final AtomicLong verified = new AtomicLong();
    private final AtomicLong corrupt = new AtomicLong();
    private final AtomicLong notCached = new AtomicLong();
    private final AtomicLongArray clientNanos = new AtomicLongArray(ClientStep.values().length);
    /** The round-trip legs of the clients that can tell them, summed as each client ends; null while none has. */
    private final AtomicReference<io.kvtier.engine.Session.RoundTripLegs> legs = new AtomicReference<>();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    /** The client whose failure {@link #failure} holds, written before its thread ends (read after the join). */
    private int failedClient;
    private RunClock clock;

    /**
     * @param engine   a running engine
     * @param workload the requests to make
     * @param options  how to run
     */
    public WorkloadRunner(final Engine engine, final ChatWorkload workload, final Options options)
    {
        this(engine, workload, options, index -> new SessionWorkloadClient(engine, new long[] {options.namespace().rootHigh(), options.namespace().rootLow()}, options.pageTokens()));
    }

    /**
     * @param engine        a running engine, whose counters the report includes
     * @param workload      the requests to make
     * @param options       how to run
     * @param clientFactory opens each client, whichever way it reaches the engine
     */
    public WorkloadRunner(final Engine engine, final ChatWorkload workload, final Options options, final ClientFactory clientFactory)
    {
        this.engine = engine;
        this.clientFactory = clientFactory;
        this.workload = workload;
        this.options = options;
    }

    /**
     * Runs the workload to the end.
     *
     * @param listener told of progress every {@code progressPeriodMillis}, or null
     * @param progressPeriodMillis how often
     * @return what happened
     * @throws InterruptedException if interrupted while waiting for the clients
     */
    public WorkloadReport run(final ProgressListener listener, final long progressPeriodMillis) throws InterruptedException
    {
        final List<WorkloadClient> opened = new ArrayList<>();
        try
        {
            for (int c = 0; c < options.clients(); c++)
            {
                try
                {
                    opened.add(clientFactory.open(c));
                }
                catch (final ClientProcessException ex)
                {
                    throw new ClientProcessException(clientText(c) + ": " + ex.getMessage(), ex);
                }
            }
        }
        catch (final RuntimeException | Error ex)
        {
            opened.forEach(WorkloadClient::close);
            throw ex;
        }
        final List<Thread> clients = new ArrayList<>();
        final List<Histogram> histograms = new ArrayList<>();
        clock = new RunClock(options, workload.shape().expectedRequests(), engine.pool().pageSize(),
            () -> verified.get() + corrupt.get(), written::get);
        for (int c = 0; c < opened.size(); c++)
        {
            final Histogram histogram = new Histogram(3_600_000_000L, 3);
            histograms.add(histogram);
            final WorkloadClient workloadClient = opened.get(c);
            final int index = c;
            clients.add(Thread.ofPlatform().name("kvtier-client-" + c).start(() -> runClient(index, workloadClient, histogram)));
        }
        final long expected = workload.shape().expectedRequests();
        while (true)
        {
            boolean alive = false;
            for (final Thread client : clients)
            {
                client.join(progressPeriodMillis);
                alive |= client.isAlive();
                if (client.isAlive())
                {
                    break;
                }
            }
            if (listener != null)
            {
                listener.progress(requests.get(), Math.max(expected, requests.get()), pagesRequested.get(), hitL2.get(), hitL3.get(), clock.elapsedNanos());
            }
            if (!alive)
            {
                break;
            }
        }
        final RunPhase whole = clock.whole(requests.get());
        final long elapsed = whole.elapsedNanos();
        final RunPhase warmup = clock.warmup(whole);
        final Throwable failed = failure.get();
        if (failed instanceof ClientProcessException)
        {
            throw new ClientProcessException(clientText(failedClient) + ": " + failed.getMessage(), failed);
        }
        if (failed != null)
        {
            throw new IllegalStateException(clientText(failedClient) + " failed: " + failed.getMessage(), failed);
        }
        final Histogram all = new Histogram(3_600_000_000L, 3);
        for (final Histogram histogram : histograms)
        {
            all.add(histogram);
        }
        final Map<String, Long> counters = new LinkedHashMap<>();
        for (final Map.Entry<EngineCounter, Long> counter : engine.snapshot().entrySet())
        {
            counters.put(counter.getKey().label(), counter.getValue());
        }
        final Map<ClientStep, Long> steps = new EnumMap<>(ClientStep.class);
        for (final ClientStep step : ClientStep.values())
        {
            steps.put(step, clientNanos.get(step.ordinal()));
        }
        return new WorkloadReport(requests.get(), options.clients(), pagesRequested.get(), hitL2.get(), hitL3.get(), written.get(),
            verified.get(), corrupt.get(), notCached.get(), engine.pool().pageSize(), elapsed,
            all.getValueAtPercentile(50) / 1000, all.getValueAtPercentile(99) / 1000, all.getValueAtPercentile(99.9) / 1000,
            all.getMaxValue() / 1000, counters, steps, warmup, warmup.until(whole));
    }

    /** @return "workload client 2 of 3", for the client at {@code index} */
    private String clientText(final int index)
    {
        return "workload client " + (index + 1) + " of " + options.clients();
    }

    /**
     * @return after {@link #run}, a round trip's legs summed over every client that can tell them ({@link
     *         WorkloadClient#roundTripLegs}); null when none can
     */
    public io.kvtier.engine.Session.RoundTripLegs roundTripLegs()
    {
        return legs.get();
    }

    /**
     * @return after {@link #run}, the CPU time of the threads that served the requests, over the whole run, warm-up
     *         included: the clients' own work where they are sessions in this process, only the threads that speak for
     *         them where they are processes of their own; -1 where the JVM cannot tell
     */
    public long clientCpuNanos()
    {
        return clientCpuNanos.get();
    }

    private void runClient(final int index, final WorkloadClient client, final Histogram histogram)
    {
        final ChatWorkload.Request request = new ChatWorkload.Request();
        final RequestTally tally = new RequestTally();
        try (client)
        {
            runRequests(client, tally, request, histogram, index);
            ThreadsCpu.addCurrentThread(clientCpuNanos);
            final io.kvtier.engine.Session.RoundTripLegs told = client.roundTripLegs();
            if (told != null)
            {
                legs.accumulateAndGet(told, (sum, more) -> sum == null ? more : sum.plus(more));
            }
        }
        catch (final RuntimeException | Error ex)
        {
            if (failure.compareAndSet(null, ex))
            {
                failedClient = index;
            }
        }
    }

    private void runRequests(final WorkloadClient client, final RequestTally tally, final ChatWorkload.Request request, final Histogram histogram,
                             final int index)
    {
        try
        {
            while (failure.get() == null)
            {
                if (!workload.next(request))
                {
                    if (workload.finished())
                    {
                        return;
                    }
                    LockSupport.parkNanos(100_000);
                    continue;
                }
                tally.reset();
                client.serve(request, tally);
                hitL2.addAndGet(tally.hitL2);
                hitL3.addAndGet(tally.hitL3);
                verified.addAndGet(tally.verified);
                corrupt.addAndGet(tally.corrupt);
                notCached.addAndGet(tally.notCached);
                written.addAndGet(tally.written);
                for (int step = 0; step < tally.stepNanos.length; step++)
                {
                    clientNanos.getAndAdd(step, tally.stepNanos[step]);
                }
                histogram.recordValue(Math.min(tally.latencyNanos, histogram.getHighestTrackableValue()));
                pagesRequested.addAndGet(tally.pagesRequested);
                clock.answered(requests.incrementAndGet());
                workload.answered(request);
            }
        }
        catch (final RuntimeException | Error ex)
        {
            if (failure.compareAndSet(null, ex))
            {
                failedClient = index;
            }
        }
    }
}
