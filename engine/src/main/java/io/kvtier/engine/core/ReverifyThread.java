package io.kvtier.engine.core;

import io.kvtier.engine.status.ThreadWatch;

import io.kvtier.collections.ParkingQueue;
import io.kvtier.engine.EngineClock;
import io.kvtier.engine.pool.PagePool;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The thread that verifies sampled pages again, {@code kvtier-reverify}: the per-byte work of
 * {@link Reverifications}, kept off the engine thread as the IPC commit sealer keeps a commit's. It
 * takes jobs from a bounded queue that allocates nothing, checks the page's payload against the CRC32C
 * recorded when its load was verified ({@code PageFrames.payloadIntact}), and hands each answer back
 * through the ring ({@link Sink}). Like a tier's call thread, it records when its current job started
 * and how many it finished, for a watchdog.
 */
final class ReverifyThread implements Reverifications.Verifier, Runnable
{
    /** Where answers go: the engine's ring. */
    interface Sink
    {
        /**
         * @param job a job with its answer; the engine's again
         */
        void reverified(ReverifyJob job);
    }

    private static final VarHandle JOB_STARTED;
    private static final VarHandle JOBS_FINISHED;

    static
    {
        try
        {
            final MethodHandles.Lookup lookup = MethodHandles.lookup();
            JOB_STARTED = lookup.findVarHandle(ReverifyThread.class, "jobStarted", long.class);
            JOBS_FINISHED = lookup.findVarHandle(ReverifyThread.class, "jobsFinished", long.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final PagePool pool;
    private final EngineClock clock;
    private final Sink sink;
    private final ParkingQueue<ReverifyJob> queue;
    private static final System.Logger LOG = System.getLogger(ReverifyThread.class.getName());

    private final Thread thread;
    private final ThreadWatch.Watched watched;
    private volatile boolean running = true;
    @SuppressWarnings("unused") // through JOB_STARTED
    private volatile long jobStarted;
    @SuppressWarnings("unused") // through JOBS_FINISHED
    private volatile long jobsFinished;

    /**
     * @param pool  the pool whose pages it checks
     * @param clock the engine's clock, on which a job's start is recorded
     * @param jobs  how many jobs exist (the queue's capacity)
     * @param sink  where answers go
     */
    ReverifyThread(final PagePool pool, final EngineClock clock, final int jobs, final Sink sink, final ThreadWatch watch)
    {
        this.pool = pool;
        this.clock = clock;
        this.sink = sink;
        this.queue = new ParkingQueue<>(jobs, 1);
        this.thread = Thread.ofPlatform().name("kvtier-reverify").daemon(true).unstarted(this);
        this.watched = watch.watch(thread.getName());
        watched.thread(thread);
    }

    /** Starts the thread. */
    void start()
    {
        thread.start();
    }

    @Override
    public boolean submit(final ReverifyJob job)
    {
        return queue.offer(job);
    }

    /** @return when the job in progress started, on the engine's clock (acquire); 0 when idle */
    long jobStartedNanos()
    {
        return (long)JOB_STARTED.getAcquire(this);
    }

    /** @return jobs answered since start (acquire) */
    long jobsFinished()
    {
        return (long)JOBS_FINISHED.getAcquire(this);
    }

    /** @return the thread, for a watchdog that reports it */
    Thread thread()
    {
        return thread;
    }

    @Override
    public void run()
    {
        while (running)
        {
            final ReverifyJob job;
            try
            {
                job = queue.take(0);
            }
            catch (final InterruptedException ex)
            {
                continue; // stop() interrupts
            }
            final long now = clock.nanoTime();
            JOB_STARTED.setRelease(this, now == 0 ? 1 : now);
            watched.begin();
            try
            {
                job.intact = pool.frames().payloadIntact(job.page);
            }
            catch (final RuntimeException | Error ex)
            {
                // A page that cannot even be read (a pool truncated under the mapping faults here) is not served.
                job.intact = false;
                watched.failed();
                LOG.log(System.Logger.Level.ERROR, "re-verifying page " + job.page + " failed; it counts as changed and is not served", ex);
            }
            finally
            {
                watched.end();
            }
            JOB_STARTED.setRelease(this, 0L);
            JOBS_FINISHED.setRelease(this, (long)JOBS_FINISHED.get(this) + 1);
            sink.reverified(job);
        }
    }

    /**
     * Stops the thread and waits for it.
     *
     * @param waitMillis how long to wait
     * @return whether it ended
     */
    boolean stop(final long waitMillis)
    {
        running = false;
        watched.stopping();
        thread.interrupt();
        try
        {
            thread.join(Math.max(1, waitMillis));
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        return !thread.isAlive();
    }
}
