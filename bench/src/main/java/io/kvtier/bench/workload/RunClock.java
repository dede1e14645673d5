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
    private final long pageSize;
    private final LongSupplier pagesRead;
    private final LongSupplier pagesWritten;
    /** The counts when the warm-up ended, the time counted from the start; null while it lasts. */
    private final AtomicReference<RunPhase> warmupEnd = new AtomicReference<>();
    private final long start;

    /**
     * Starts the clock.
     *
     * @param warmupRequests the request whose answer ends the warm-up (counted from 1), 0 for none
     * @param pageSize       payload bytes per page
     * @param pagesRead      the pages read so far, read when the warm-up ends and at the end
     * @param pagesWritten   the pages written so far, likewise
     */
    RunClock(final long warmupRequests, final long pageSize, final LongSupplier pagesRead, final LongSupplier pagesWritten)
    {
        this.warmupRequests = warmupRequests;
        this.pageSize = pageSize;
        this.pagesRead = pagesRead;
        this.pagesWritten = pagesWritten;
        if (warmupRequests == 0)
        {
            warmupEnd.set(new RunPhase(0, 0, 0, pageSize, 0));
        }
        this.start = System.nanoTime();
    }

    /**
     * Told of every answered request; the one that ends the warm-up records the counts. Requests other clients are
     * in the middle of count in the steady state, when they end.
     *
     * @param request the answered request's number, counted from 1
     */
    void answered(final long request)
    {
        if (request == warmupRequests)
        {
            warmupEnd.set(new RunPhase(warmupRequests, pagesRead.getAsLong(), pagesWritten.getAsLong(), pageSize, elapsedNanos()));
        }
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
        return new RunPhase(requests, pagesRead.getAsLong(), pagesWritten.getAsLong(), pageSize, elapsedNanos());
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
