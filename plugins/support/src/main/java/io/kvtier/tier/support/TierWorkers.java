package io.kvtier.tier.support;

import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierStatus;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The worker threads of a tier and the protocol around them, written once: batches are queued as
 * jobs, worker threads claim their keys and hand each claim to the tier's {@link Handler}, and
 * {@link #close} answers everything it was handed. A tier supplies only what it does with a claim of
 * keys; what every tier must get right is here:
 * <ul>
 *   <li>{@link #submit} never blocks: a batch goes in whole or completes {@link TierStatus#REJECTED}
 *       (the lane is full) or {@link TierStatus#CLOSED} (close began), key by key, before it returns;</li>
 *   <li>reads and probes go in an urgent lane ahead of writes and removes, and a worker busy with a
 *       bulk job looks at the urgent lane between claims, so a read waits for at most the claim each
 *       worker is on ({@link JobLanes});</li>
 *   <li>a claim that throws completes its keys not yet completed {@link TierStatus#IO_ERROR}, and the
 *       worker goes on with the next one;</li>
 *   <li>once close begins, the keys no worker has started complete CLOSED; close waits for the
 *       workers up to a deadline and says whether they stopped, so the tier frees the memory they
 *       use only when nothing uses it any more.</li>
 * </ul>
 *
 * <h2>Jobs</h2>
 * A batch becomes one pooled job, queued once for each worker that will share it (at most one per
 * key). The workers claim its keys through the job's cursor, {@link Handler#claimSize} at a time, so
 * one slow key never holds up the others and nothing is allocated per batch in the steady state. The
 * last worker done with a job puts it back in the pool.
 *
 * <h2>Close</h2>
 * {@link #close} sets the closed flag, waits for submitters that read the flag before it was set (so
 * none of their jobs is missed), then queues one poison job per worker behind everything in the bulk
 * lane. A worker takes the urgent lane first and the bulk lane in order, so it meets its poison only
 * after every job queued before: those it answers CLOSED. Called from a completion callback on a worker
 * thread, close does not wait for that thread (it finishes its claim, answers the rest CLOSED and
 * meets its poison), and when a lane is full it answers a queued job itself to make room.
 */
public final class TierWorkers
{
    /** Operation of a probe ({@code StorageTier.exists}). */
    public static final int EXISTS = 0;
    /** Operation of a read. */
    public static final int READ = 1;
    /** Operation of a write. */
    public static final int WRITE = 2;
    /** Operation of a remove. */
    public static final int REMOVE = 3;

    private static final int JOB_POOL_SIZE = 256;
    private static final Job POISON = new Job();

    /** What a tier does with the keys a worker claimed; one per worker thread, called only from it. */
    public interface Handler
    {
        /**
         * @param operation {@link #EXISTS}, {@link #READ}, {@link #WRITE} or {@link #REMOVE}
         * @return how many keys of a batch this worker claims at a time for the operation (at least 1;
         *         {@code Integer.MAX_VALUE} takes the whole batch)
         */
        int claimSize(int operation);

        /**
         * How many keys of one job this worker claims at a time; {@link #claimSize(int)} unless the
         * handler would rather share a batch smaller than its claims among the workers it was queued for.
         *
         * @param operation {@link #EXISTS}, {@link #READ}, {@link #WRITE} or {@link #REMOVE}
         * @param jobSize   keys in the job
         * @param sharers   workers the job was queued for (at most one per key)
         * @return keys to claim at a time, at least 1
         */
        default int claimSize(final int operation, final int jobSize, final int sharers)
        {
            return claimSize(operation);
        }

        /**
         * Does the claim's operation on its keys {@code [from, to)} and completes each exactly once
         * through {@link Claim#complete} (or hands it on with {@link Claim#handOff}). A key left neither
         * completed nor handed on completes IO_ERROR; an exception completes the claim's remaining keys
         * IO_ERROR.
         *
         * @param claim the keys; valid only during this call
         */
        void serve(Claim claim);
    }

    /** Keys of a batch claimed by one worker: the handler's view of a job. Reused by its worker. */
    public static final class Claim
    {
        private final TierWorkers owner;
        private long[] done = new long[1];
        private int operation;
        private TierBatch batch;
        private int from;
        private int to;

        private Claim(final TierWorkers owner)
        {
            this.owner = owner;
        }

        private void reset(final int operation, final TierBatch batch, final int from, final int to)
        {
            this.operation = operation;
            this.batch = batch;
            this.from = from;
            this.to = to;
            final int words = ((to - from) >>> 6) + 1;
            if (done.length < words)
            {
                done = new long[words];
            }
            else
            {
                java.util.Arrays.fill(done, 0, words, 0L);
            }
        }

        /** @return {@link #EXISTS}, {@link #READ}, {@link #WRITE} or {@link #REMOVE} */
        public int operation()
        {
            return operation;
        }

        /** @return the batch the keys belong to */
        public TierBatch batch()
        {
            return batch;
        }

        /** @return the first key claimed */
        public int from()
        {
            return from;
        }

        /** @return one past the last key claimed */
        public int to()
        {
            return to;
        }

        /** @return whether the tier is closing: keys not started now should complete CLOSED */
        public boolean closing()
        {
            return owner.closed;
        }

        /**
         * Completes a key; a batch that refuses the completion is logged, never thrown through the worker.
         *
         * @param index  a key of this claim, not completed before
         * @param status its status
         */
        public void complete(final int index, final TierStatus status)
        {
            mark(index);
            owner.complete(batch, index, status);
        }

        /**
         * Marks a key as no longer this claim's to complete: another thread of the tier completes it.
         *
         * @param index a key of this claim
         */
        public void handOff(final int index)
        {
            mark(index);
        }

        /**
         * @param index a key of this claim
         * @return whether it was completed or handed off
         */
        public boolean handled(final int index)
        {
            final int bit = index - from;
            return (done[bit >>> 6] & (1L << bit)) != 0;
        }

        private void mark(final int index)
        {
            if (index < from || index >= to)
            {
                throw new IndexOutOfBoundsException("key " + index + " is outside the claim [" + from + ", " + to + ")");
            }
            final int bit = index - from;
            done[bit >>> 6] |= 1L << bit;
        }

        private void completeRest(final TierStatus status)
        {
            for (int i = from; i < to; i++)
            {
                if (!handled(i))
                {
                    complete(i, status);
                }
            }
        }
    }

    /** A batch handed to the workers; reused through the job pool. */
    private static final class Job
    {
        private final AtomicInteger cursor = new AtomicInteger();
        private final AtomicInteger holders = new AtomicInteger();
        private int operation;
        private boolean urgent;
        private int size;
        private int sharers;
        private TierBatch batch;
    }

    private final String label;
    private final System.Logger logger;
    private final IoErrorLog errors;
    private final JobLanes<Job> lanes;
    private final boolean urgentLane;
    private final LaneQueue<Job> jobPool = new LaneQueue<>(JOB_POOL_SIZE);
    private final Handler[] handlers;
    private final Thread[] threads;
    private final AtomicInteger submitting = new AtomicInteger();
    private final Object closeLock = new Object();
    private volatile boolean closed;
    private boolean poisoned;
    private Boolean stopped;

    /**
     * Makes the threads, one per handler; {@link #start} starts them.
     *
     * @param label         how logs name the tier, e.g. {@code posix tier nvme}
     * @param threadName    the threads' name prefix; each gets its index appended
     * @param handlers      one per worker thread
     * @param laneCapacity  the most jobs each lane holds (rounded up to a power of two); beyond it batches are REJECTED
     * @param urgentLane    whether reads and probes go ahead of writes and removes; false keeps one queue in submission order
     * @param logger        where failures are logged
     */
    public TierWorkers(final String label, final String threadName, final List<? extends Handler> handlers, final int laneCapacity,
        final boolean urgentLane, final System.Logger logger)
    {
        if (handlers.isEmpty())
        {
            throw new IllegalArgumentException(label + ": at least one worker is needed");
        }
        this.label = label;
        this.logger = logger;
        this.errors = new IoErrorLog(logger, 1, TimeUnit.SECONDS);
        this.handlers = handlers.toArray(new Handler[0]);
        this.urgentLane = urgentLane;
        this.lanes = new JobLanes<>(laneCapacity, this.handlers.length);
        for (int i = 0; i < JOB_POOL_SIZE; i++)
        {
            jobPool.offer(new Job());
        }
        threads = new Thread[this.handlers.length];
        for (int i = 0; i < threads.length; i++)
        {
            final Worker worker = new Worker(i, this.handlers[i]);
            threads[i] = new Thread(worker, threads.length == 1 ? threadName : threadName + "-" + i);
            threads[i].setDaemon(true);
        }
    }

    /** Starts the worker threads; once. */
    public void start()
    {
        for (final Thread thread : threads)
        {
            thread.start();
        }
    }

    /** @return the worker threads */
    public List<Thread> threads()
    {
        return List.of(threads);
    }

    /** @return the most jobs each lane holds */
    public int laneCapacity()
    {
        return lanes.capacity();
    }

    /** @return whether {@link #close} has begun */
    public boolean isClosed()
    {
        return closed;
    }

    /** @return whether the calling thread is one of the workers */
    public boolean onWorkerThread()
    {
        final Thread self = Thread.currentThread();
        for (final Thread thread : threads)
        {
            if (thread == self)
            {
                return true;
            }
        }
        return false;
    }

    /**
     * Brackets work a tier does on the caller's thread instead of queueing it (an answer from memory),
     * so that {@link #close} waits for it before the tier frees that memory. Never hold it across a
     * completion: a completion callback may close the tier.
     *
     * @return true, and the caller must call {@link #leave} once done; false, with nothing to leave,
     *         once close has begun (the caller answers CLOSED)
     */
    public boolean enter()
    {
        submitting.incrementAndGet();
        if (closed)
        {
            submitting.decrementAndGet();
            return false;
        }
        return true;
    }

    /** Ends what {@link #enter} began. */
    public void leave()
    {
        submitting.decrementAndGet();
    }

    /**
     * Hands a batch to the workers, or completes every key REJECTED or CLOSED. Never blocks.
     *
     * @param operation {@link #EXISTS}, {@link #READ}, {@link #WRITE} or {@link #REMOVE}
     * @param batch     the keys
     */
    public void submit(final int operation, final TierBatch batch)
    {
        final int size = batch.size();
        if (size == 0)
        {
            return;
        }
        // Counted before reading `closed`, so close() waits for this call and cannot miss its job.
        submitting.incrementAndGet();
        try
        {
            if (closed)
            {
                completeAll(batch, size, TierStatus.CLOSED);
                return;
            }
            Job job = jobPool.poll();
            if (job == null)
            {
                job = new Job();
            }
            final int share = Math.min(threads.length, size);
            job.operation = operation;
            job.urgent = urgentLane && (operation == READ || operation == EXISTS);
            job.batch = batch;
            job.size = size;
            job.sharers = share;
            job.cursor.set(0);
            job.holders.set(share);
            if (!offer(job))
            {
                job.batch = null;
                jobPool.offer(job);
                if (errors.shouldLog())
                {
                    final String kind = job.urgent ? " read and probe" : urgentLane ? " write and remove" : "";
                    errors.log(System.Logger.Level.WARNING, label + ": " + lanes.capacity() + kind + " batches already queued; rejecting a batch of "
                        + size + " keys");
                }
                completeAll(batch, size, TierStatus.REJECTED);
                return;
            }
            for (int i = 1; i < share; i++)
            {
                if (!offer(job))
                {
                    // Fewer workers share this batch; give back the holds nobody will take.
                    release(job, share - i);
                    break;
                }
            }
        }
        finally
        {
            submitting.decrementAndGet();
        }
    }

    private boolean offer(final Job job)
    {
        return job.urgent ? lanes.offerUrgent(job) : lanes.offerBulk(job);
    }

    private void release(final Job job, final int count)
    {
        if (job.holders.addAndGet(-count) == 0)
        {
            job.batch = null;
            jobPool.offer(job);
        }
    }

    private void completeAll(final TierBatch batch, final int size, final TierStatus status)
    {
        for (int i = 0; i < size; i++)
        {
            complete(batch, i, status);
        }
    }

    private void complete(final TierBatch batch, final int index, final TierStatus status)
    {
        try
        {
            batch.complete(index, status);
        }
        catch (final RuntimeException ex)
        {
            if (errors.shouldLog())
            {
                errors.log(System.Logger.Level.ERROR, label + ": the batch refused the completion of key " + index + " as " + status + ": " + ex);
            }
        }
    }

    /**
     * Stops accepting work (new keys complete CLOSED), lets each worker finish the claim it is on and
     * complete the remaining queued keys CLOSED, and waits for the workers to stop: {@link #beginClose}
     * then {@link #awaitStopped}. Idempotent; a second caller waits for the first and gets its answer.
     *
     * @param timeout how long to wait for the workers (a worker stuck in a hung call is left running)
     * @return whether every worker other than the calling one stopped: only then may the tier free
     *         what they use
     */
    public boolean close(final Duration timeout)
    {
        synchronized (closeLock)
        {
            beginClose();
            return awaitStopped(timeout);
        }
    }

    /**
     * The first half of {@link #close}, for a tier with several sets of workers that must all stop
     * accepting work at once: sets the closed flag, waits for submitters that read it before it was
     * set, and queues one poison job per worker behind everything queued. Idempotent.
     */
    public void beginClose()
    {
        synchronized (closeLock)
        {
            if (closed && poisoned)
            {
                return;
            }
            closed = true;
            while (submitting.get() != 0)
            {
                Thread.onSpinWait();
            }
            final boolean onWorker = onWorkerThread();
            for (int i = 0; i < threads.length; i++)
            {
                while (!lanes.offerBulk(POISON))
                {
                    if (onWorker)
                    {
                        // From a completion callback with the lane full: this worker cannot drain it while it waits here.
                        answerOneQueuedJobClosed();
                    }
                    else
                    {
                        // Full: the workers are completing queued keys CLOSED, which is quick.
                        Thread.yield();
                    }
                }
            }
            poisoned = true;
        }
    }

    /**
     * The second half of {@link #close}: waits for the workers, after {@link #beginClose}. When one does
     * not stop in time, answers what is still queued CLOSED itself. Idempotent: later calls return the
     * first answer.
     *
     * @param timeout how long to wait for the workers
     * @return whether every worker other than the calling one stopped
     */
    public boolean awaitStopped(final Duration timeout)
    {
        synchronized (closeLock)
        {
            if (!poisoned)
            {
                throw new IllegalStateException(label + ": awaitStopped before beginClose");
            }
            if (stopped != null)
            {
                return stopped;
            }
            boolean interrupted = false;
            final long deadline = System.nanoTime() + timeout.toNanos();
            boolean allStopped = true;
            for (final Thread thread : threads)
            {
                if (thread == Thread.currentThread())
                {
                    // From a completion callback: this worker finishes its claim, answers the rest CLOSED and meets its poison.
                    continue;
                }
                while (thread.isAlive() && System.nanoTime() - deadline < 0)
                {
                    try
                    {
                        thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
                    }
                    catch (final InterruptedException ex)
                    {
                        interrupted = true;
                    }
                }
                allStopped &= !thread.isAlive();
            }
            if (!allStopped)
            {
                // A worker stuck in a hung call cannot answer what is queued: answer it here, and leave it its poison.
                int poisons = 0;
                for (Job job = lanes.poll(); job != null; job = lanes.poll())
                {
                    if (job == POISON)
                    {
                        poisons++;
                    }
                    else
                    {
                        answerClosed(job);
                    }
                }
                for (int i = 0; i < poisons; i++)
                {
                    lanes.offerBulk(POISON);
                }
                logger.log(System.Logger.Level.WARNING, label + ": workers still busy " + timeout.toSeconds()
                    + "s after close (hung call?); their keys complete when the calls return");
            }
            stopped = allStopped;
            if (interrupted)
            {
                Thread.currentThread().interrupt();
            }
            return allStopped;
        }
    }

    private void answerOneQueuedJobClosed()
    {
        final Job job = lanes.poll();
        if (job == null)
        {
            return;
        }
        if (job == POISON)
        {
            while (!lanes.offerBulk(POISON))
            {
                Thread.onSpinWait();
            }
            return;
        }
        answerClosed(job);
    }

    private void answerClosed(final Job job)
    {
        final TierBatch batch = job.batch;
        for (int i = job.cursor.getAndIncrement(); i < job.size; i = job.cursor.getAndIncrement())
        {
            complete(batch, i, TierStatus.CLOSED);
        }
        release(job, 1);
    }

    /** One worker thread: takes jobs, claims keys and hands them to its handler. */
    private final class Worker implements Runnable
    {
        private final int consumerIndex;
        private final Handler handler;
        private final Claim claim = new Claim(TierWorkers.this);

        Worker(final int consumerIndex, final Handler handler)
        {
            this.consumerIndex = consumerIndex;
            this.handler = handler;
        }

        /**
         * Claims keys from the job it holds. After each claim of a bulk job it looks at the urgent lane:
         * an urgent job found there is served first, and the bulk job, set aside meanwhile, is resumed
         * once the urgent lane is empty. One loop and one call of the handler, not a nested call per
         * urgent job, so the JIT compiles the I/O path once.
         */
        @Override
        public void run()
        {
            Job job = null;
            Job setAside = null;
            while (true)
            {
                if (job == null)
                {
                    if (setAside != null)
                    {
                        job = lanes.pollUrgent();
                        if (job == null)
                        {
                            job = setAside;
                            setAside = null;
                        }
                    }
                    else
                    {
                        try
                        {
                            job = lanes.take(consumerIndex);
                        }
                        catch (final InterruptedException ex)
                        {
                            // Only close() stops a worker, with a poison job (only ever in the bulk lane).
                            continue;
                        }
                        if (job == POISON)
                        {
                            return;
                        }
                    }
                }
                final int size = Math.max(1, handler.claimSize(job.operation, job.size, job.sharers));
                final int i = size == 1 ? job.cursor.getAndIncrement() : job.cursor.getAndAdd(size);
                if (i >= job.size)
                {
                    release(job, 1);
                    job = null;
                    continue;
                }
                serve(job, i, (int)Math.min((long)i + size, job.size));
                if (!job.urgent && setAside == null)
                {
                    final Job urgent = lanes.pollUrgent();
                    if (urgent != null)
                    {
                        setAside = job;
                        job = urgent;
                    }
                }
            }
        }

        private void serve(final Job job, final int from, final int to)
        {
            claim.reset(job.operation, job.batch, from, to);
            if (closed)
            {
                claim.completeRest(TierStatus.CLOSED);
                return;
            }
            try
            {
                handler.serve(claim);
            }
            catch (final RuntimeException | Error ex)
            {
                if (errors.shouldLog())
                {
                    logger.log(System.Logger.Level.ERROR, label + ": unexpected failure on keys [" + from + ", " + to + ") -> IO_ERROR", ex);
                }
            }
            claim.completeRest(TierStatus.IO_ERROR);
        }
    }
}
