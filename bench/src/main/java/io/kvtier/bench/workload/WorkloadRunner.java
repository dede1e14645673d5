package io.kvtier.bench.workload;

import io.kvtier.engine.Engine;
import io.kvtier.engine.client.PageStatus;
import io.kvtier.engine.Session;
import io.kvtier.engine.key.KeyChain;
import io.kvtier.engine.key.KeyNamespace;
import io.kvtier.engine.status.EngineCounter;
import org.HdrHistogram.Histogram;

import java.lang.foreign.MemorySegment;
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
 * client threads, each with its own session: key the prompt, look it up, acquire the cached prefix
 * and check every byte of it, then compute, write and commit the pages that were missing.
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
     * @param clients    concurrent client sessions
     * @param pageTokens tokens per page
     * @param namespace  the key namespace of the pages
     */
    public record Options(int clients, int pageTokens, KeyNamespace namespace)
    {
    }

    private final Engine engine;
    private final ChatWorkload workload;
    private final Options options;
    private final AtomicLong requests = new AtomicLong();
    private final AtomicLong pagesRequested = new AtomicLong();
    private final AtomicLong hitL2 = new AtomicLong();
    private final AtomicLong hitL3 = new AtomicLong();
    private final AtomicLong written = new AtomicLong();
    private final AtomicLong verified = new AtomicLong();
    private final AtomicLong corrupt = new AtomicLong();
    private final AtomicLong notCached = new AtomicLong();
    private final AtomicLongArray clientNanos = new AtomicLongArray(ClientStep.values().length);
    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    /**
     * @param engine   a running engine
     * @param workload the requests to make
     * @param options  how to run
     */
    public WorkloadRunner(final Engine engine, final ChatWorkload workload, final Options options)
    {
        this.engine = engine;
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
        final long[] root = options.namespace().root();
        final List<Thread> clients = new ArrayList<>();
        final List<Histogram> histograms = new ArrayList<>();
        final long start = System.nanoTime();
        for (int c = 0; c < options.clients(); c++)
        {
            final Histogram histogram = new Histogram(3_600_000_000L, 3);
            histograms.add(histogram);
            final Thread client = Thread.ofPlatform().name("kvtier-client-" + c).start(() -> runClient(root, histogram));
            clients.add(client);
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
                listener.progress(requests.get(), Math.max(expected, requests.get()), pagesRequested.get(), hitL2.get(), hitL3.get(), System.nanoTime() - start);
            }
            if (!alive)
            {
                break;
            }
        }
        final long elapsed = System.nanoTime() - start;
        final Throwable failed = failure.get();
        if (failed != null)
        {
            throw new IllegalStateException("a workload client failed: " + failed.getMessage(), failed);
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
            all.getMaxValue() / 1000, counters, steps);
    }

    /**
     * Adds the time since {@code since} to a step's total.
     *
     * @param step  the step that just ended
     * @param since when it began
     * @return now, when the next step begins
     */
    private long clock(final ClientStep step, final long since)
    {
        final long now = System.nanoTime();
        clientNanos.getAndAdd(step.ordinal(), now - since);
        return now;
    }

    private void runClient(final long[] root, final Histogram histogram)
    {
        final int pageSize = (int)engine.pool().pageSize();
        final ChatWorkload.Request request = new ChatWorkload.Request();
        try (Session session = engine.openSession())
        {
            final KeyChain keys = session.keys();
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
                final long t0 = System.nanoTime();
                keys.compute(root[0], root[1], request.tokens(), request.length(), options.pageTokens(), false);
                final int n = keys.size();
                long t = clock(ClientStep.KEYS, t0);
                session.lookup(0, n);
                t = clock(ClientStep.LOOKUP, t);
                final int cached = session.acquire(0, n);
                t = clock(ClientStep.ACQUIRE, t);
                hitL2.addAndGet(session.acquiredFromPool());
                hitL3.addAndGet(session.acquiredFromL3());
                for (int i = 0; i < cached; i++)
                {
                    final MemorySegment page = session.page(i);
                    if (session.payloadLength(i) == pageSize && PagePattern.matches(page, keys.high(i), keys.low(i), pageSize))
                    {
                        verified.incrementAndGet();
                    }
                    else
                    {
                        corrupt.incrementAndGet();
                    }
                }
                t = clock(ClientStep.VERIFY, t);
                session.release();
                t = clock(ClientStep.RELEASE, t);
                if (cached < n)
                {
                    session.reserve(cached, n - cached);
                    t = clock(ClientStep.RESERVE, t);
                    int mine = 0;
                    for (int i = cached; i < n; i++)
                    {
                        if (session.status(i) == PageStatus.RESERVED)
                        {
                            PagePattern.fill(session.page(i), keys.high(i), keys.low(i), pageSize);
                            session.payloadLength(i, pageSize);
                            mine++;
                        }
                        else if (session.status(i) != PageStatus.EXISTS)
                        {
                            notCached.incrementAndGet();
                        }
                    }
                    t = clock(ClientStep.FILL, t);
                    if (mine > 0)
                    {
                        written.addAndGet(session.commit(cached, n - cached));
                        clock(ClientStep.COMMIT, t);
                    }
                }
                histogram.recordValue(Math.min(System.nanoTime() - t0, histogram.getHighestTrackableValue()));
                pagesRequested.addAndGet(n);
                requests.incrementAndGet();
                workload.answered(request);
            }
        }
        catch (final RuntimeException | Error ex)
        {
            failure.compareAndSet(null, ex);
        }
    }
}
