package io.kvtier.bench.workload;

import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * A run's clock and where its warm-up ends, kept alike for the demo ({@link WorkloadRunner}) and its no-engine
 * baseline ({@link ByteWorkBaseline}), whose figures are compared: the request that ends the warm-up records the
 * counts and the time then, from whichever client thread answers it.
 */
final class RunClock
{
    private final long warmupRequests;
    private final long warmupLimit;
    private final boolean untilJitSettles;
    private final JitSettling jit = new JitSettling();
    private final long pageSize;
    private final LongSupplier pagesRead;
    private final LongSupplier pagesWritten;
    /** The counts when the warm-up ended, the time counted from the start; null while it lasts. */
    private final AtomicReference<RunPhase> warmupEnd = new AtomicReference<>();
    private final long compileStart;
    private final long start;

    /**
     * Starts the clock.
     *
     * @param options        the run's warm-up: its share of the expected requests, and whether it waits for the JIT
     * @param expected       the requests the workload is expected to make
     * @param pageSize       payload bytes per page
     * @param pagesRead      the pages read so far, read when the warm-up ends and at the end
     * @param pagesWritten   the pages written so far, likewise
     */
    RunClock(final WorkloadRunner.Options options, final long expected, final long pageSize, final LongSupplier pagesRead,
             final LongSupplier pagesWritten)
    {
        this.warmupRequests = options.warmupRequests(expected);
        this.warmupLimit = options.warmupLimit(expected);
        this.untilJitSettles = options.untilJitSettles();
        this.pageSize = pageSize;
        this.pagesRead = pagesRead;
        this.pagesWritten = pagesWritten;
        this.compileStart = RunPhase.compileMillisSoFar();
        if (warmupRequests == 0)
        {
            warmupEnd.set(new RunPhase(0, 0, 0, pageSize, 0, compileStart < 0 ? -1 : 0));
        }
        this.start = System.nanoTime();
    }

    /**
     * Told of every answered request; the one that ends the warm-up records the counts: the request of the warm-up's
     * share, or when it waits for the JIT, the first from there on at which the compilers have quieted down (or the
     * limit). Requests other clients are in the middle of count in the steady state, when they end.
     *
     * @param request the answered request's number, counted from 1
     */
    void answered(final long request)
    {
        if (warmupEnd.get() == null && (untilJitSettles
            ? request >= warmupRequests && (request >= warmupLimit || jit.settled(System.nanoTime()))
            : request == warmupRequests))
        {
            warmupEnd.compareAndSet(null, new RunPhase(request, pagesRead.getAsLong(), pagesWritten.getAsLong(), pageSize, elapsedNanos(),
                compiledSinceStart()));
        }
    }

    /** @return this JVM's JIT compilers' CPU time since the run began, in milliseconds, or -1 when it is not known */
    private long compiledSinceStart()
    {
        final long now = RunPhase.compileMillisSoFar();
        return now < 0 || compileStart < 0 ? -1 : now - compileStart;
    }

    /** @return the time since the start */
    long elapsedNanos()
    {
        return System.nanoTime() - start;
    }

    /**
     * @param requests the requests answered in the whole run
     * @return the whole run, ended now
     */
    RunPhase whole(final long requests)
    {
        return new RunPhase(requests, pagesRead.getAsLong(), pagesWritten.getAsLong(), pageSize, elapsedNanos(), compiledSinceStart());
    }

    /**
     * @param whole the whole run
     * @return its warm-up; a run shorter than its warm-up has no steady state: all of it was warm-up
     */
    RunPhase warmup(final RunPhase whole)
    {
        final RunPhase end = warmupEnd.get();
        return end != null ? end : whole;
    }
}
