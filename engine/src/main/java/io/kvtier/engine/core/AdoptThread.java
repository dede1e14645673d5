package io.kvtier.engine.core;

import io.kvtier.client.pool.PageMetadataReader;
import io.kvtier.client.pool.PageStateWord;
import io.kvtier.collections.ParkingQueue;
import io.kvtier.engine.pool.PageFrames;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.engine.pool.PreviousPool;
import io.kvtier.engine.status.ThreadWatch;
import io.kvtier.spi.PageKey;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Comparator;

/**
 * The thread that adopts a dead engine's pages at a warm restart, {@code kvtier-adopt}: the per-byte work
 * of {@link Adoptions}, kept off the engine thread as the re-verification thread keeps its checks.
 *
 * <p>It first lists the old pool's SERVING pages, most recently used first (the pages a restarted
 * workload is likeliest to ask for again), then, for each page of the new pool the engine lends it,
 * takes the next of them: reads the old page's state word, copies its whole frame into the lent page,
 * gives the lent page the old key and namespace tag, and verifies the copy there exactly as a load from
 * L3 is verified (trailer magic and version, page size, trailer CRC32C, key, length, payload CRC32C,
 * namespace tag), then checks that the old metadata's length and CRC32C agree with the trailer's and that
 * the old state word has not moved. A page that fails is counted corrupt and the next one is tried in
 * the same lent page; one that passes goes back to the engine thread through the ring ({@link Sink}).
 * Because only the copy is verified and only the copy is served, a process of the dead engine's that
 * still maps the old file cannot change a served byte by writing into it.
 *
 * <p>It closes the old pool's mapping when it ends, which gives its memory back.
 */
final class AdoptThread implements Runnable
{
    /** Where adopted pages go: the engine's ring. */
    interface Sink
    {
        /**
         * @param job a job with its answer; the engine's again
         */
        void adopted(AdoptJob job);
    }

    private static final System.Logger LOG = System.getLogger(AdoptThread.class.getName());
    /** Corrupt pages named one by one in the log; the rest are counted only. */
    private static final int LOGGED_CORRUPT = 10;

    private final PagePool pool;
    private final PreviousPool previous;
    private final Sink sink;
    private final ParkingQueue<AdoptJob> queue;
    private final Thread thread;
    private final ThreadWatch.Watched watched;
    private volatile boolean running = true;
    private volatile boolean started;
    private int[] order;
    private int cursor;
    private int corruptLogged;

    /**
     * @param pool     the new pool
     * @param previous the dead engine's pool; this thread closes it
     * @param jobs     how many jobs exist (the queue's capacity)
     * @param sink     where answers go
     * @param watch    the engine's watch of its threads
     */
    AdoptThread(final PagePool pool, final PreviousPool previous, final int jobs, final Sink sink, final ThreadWatch watch)
    {
        this.pool = pool;
        this.previous = previous;
        this.sink = sink;
        this.queue = new ParkingQueue<>(jobs, 1);
        this.thread = Thread.ofPlatform().name("kvtier-adopt").daemon(true).unstarted(this);
        this.watched = watch.watch(thread.getName());
        watched.thread(thread);
    }

    /** Starts the thread. */
    void start()
    {
        started = true;
        thread.start();
    }

    /**
     * @param job a job with a lent page
     * @return false when the queue is full
     */
    boolean submit(final AdoptJob job)
    {
        return queue.offer(job);
    }

    @Override
    public void run()
    {
        try
        {
            order = committedPagesMostRecentFirst();
            while (running)
            {
                final AdoptJob job;
                try
                {
                    job = queue.take(0);
                }
                catch (final InterruptedException ex)
                {
                    continue; // stop() interrupts
                }
                watched.begin();
                try
                {
                    fill(job);
                }
                catch (final RuntimeException | Error ex)
                {
                    // A page that cannot be read (the old mapping gone at close) ends adoption; nothing half done is served.
                    watched.failed();
                    LOG.log(System.Logger.Level.ERROR, "adopting the dead engine's pages failed; adoption ends here", ex);
                    job.adopted = false;
                    job.last = true;
                    cursor = order.length;
                }
                finally
                {
                    watched.end();
                }
                sink.adopted(job);
            }
        }
        finally
        {
            watched.stopping();
            previous.close();
        }
    }

    /** Finds the next old page that verifies, copied into the job's page; or says there is none left. */
    private void fill(final AdoptJob job)
    {
        job.adopted = false;
        job.last = false;
        job.corrupt = 0;
        job.changed = 0;
        job.candidates = order.length;
        final PageMetadataReader old = previous.metadata();
        final PageFrames frames = pool.frames();
        final MemorySegment target = frames.frame(job.page);
        while (cursor < order.length && running)
        {
            final int page = order[cursor++];
            final long before = old.stateWordAcquire(page);
            if (PageStateWord.state(before) != PageStateWord.SERVING)
            {
                job.changed++;
                continue;
            }
            final long high = old.keyHighPlain(page);
            final long low = old.keyLowPlain(page);
            final long tag = old.namespaceTagPlain(page);
            final int length = old.payloadLengthPlain(page);
            final int crc = old.payloadCrcPlain(page);
            MemorySegment.copy(previous.frame(page), 0, target, 0, target.byteSize());
            pool.metadata().keyPlain(job.page, high, low);
            pool.metadata().namespaceTagPlain(job.page, tag);
            final PageFrames.FrameCheck check = frames.verify(job.page, high, low);
            final long after = old.stateWordAcquire(page);
            if (check != PageFrames.FrameCheck.VALID || pool.metadata().payloadLengthPlain(job.page) != length
                || pool.metadata().payloadCrcPlain(job.page) != crc)
            {
                job.corrupt++;
                if (corruptLogged++ < LOGGED_CORRUPT)
                {
                    LOG.log(System.Logger.Level.WARNING, "warm restart: page {0} of the dead engine''s pool ({1}) failed verification ({2}); dropped,"
                        + " never served", page, new PageKey(high, low), check == PageFrames.FrameCheck.VALID
                        ? "its metadata's length or CRC32C differs from its trailer's" : check);
                }
                continue;
            }
            if (PageStateWord.state(after) != PageStateWord.SERVING || PageStateWord.generation(after) != PageStateWord.generation(before))
            {
                job.changed++;
                continue;
            }
            job.keyHigh = high;
            job.keyLow = low;
            job.adopted = true;
            return;
        }
        job.last = true;
    }

    /** @return the old pool's SERVING pages, the most recently used first */
    private int[] committedPagesMostRecentFirst()
    {
        final PageMetadataReader old = previous.metadata();
        final int count = previous.pageCount();
        Integer[] serving = new Integer[count];
        int n = 0;
        for (int page = 0; page < count; page++)
        {
            if (PageStateWord.state(old.stateWordAcquire(page)) == PageStateWord.SERVING)
            {
                serving[n++] = page;
            }
        }
        serving = Arrays.copyOf(serving, n);
        // Last Access is CLOCK_MONOTONIC of this boot, as the dead engine recorded it: comparable across the restart.
        Arrays.sort(serving, Comparator.comparingLong((Integer page) -> old.lastAccessPlain(page)).reversed());
        final int[] order = new int[n];
        for (int i = 0; i < n; i++)
        {
            order[i] = serving[i];
        }
        return order;
    }

    /** Lets the thread end once it has answered the job in hand, without waiting for it; it closes the old pool's mapping as it ends. */
    void end()
    {
        running = false;
        watched.stopping();
        if (started)
        {
            thread.interrupt();
        }
        else
        {
            previous.close();
        }
    }

    /**
     * Stops the thread and waits for it; it closes the old pool's mapping as it ends.
     *
     * @param waitMillis how long to wait
     * @return whether it ended
     */
    boolean stop(final long waitMillis)
    {
        running = false;
        watched.stopping();
        if (!started)
        {
            previous.close();
            return true;
        }
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
