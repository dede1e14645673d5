package io.kvtier.engine.ipc;

import io.kvtier.collections.ParkingQueue;
import io.kvtier.engine.client.PageStatus;
import io.kvtier.engine.client.RequestOp;
import io.kvtier.engine.client.RequestStatus;
import io.kvtier.engine.core.Pipeline;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.engine.pool.PageStateWord;

/**
 * The {@code kvtier-ipc-seal} thread: seals the pages of IPC commits (CRC32C of the payload, the frame
 * trailer) and then hands each commit to the engine through its ring, as an in-process session seals
 * on its own thread before it publishes. The engine thread reads the commit from the client's ring and
 * gives it here, so that no per-byte work lands on the thread every client waits on (a 2 MiB page is
 * some hundred microseconds of CRC).
 *
 * <p>A client has at most one request in flight, so the queue, sized for every client slot, never
 * fills; the client is not looked at by the engine thread until its commit completes.
 */
final class CommitSealer implements Runnable
{
    private static final System.Logger LOG = System.getLogger(CommitSealer.class.getName());

    private final PagePool pool;
    private final Pipeline pipeline;
    private final ParkingQueue<RemoteClient> queue;
    private final Thread thread;
    private volatile boolean running = true;

    CommitSealer(final PagePool pool, final Pipeline pipeline, final int maxClients)
    {
        this.pool = pool;
        this.pipeline = pipeline;
        this.queue = new ParkingQueue<>(Math.max(2, maxClients), 1);
        this.thread = Thread.ofPlatform().name("kvtier-ipc-seal").daemon(true).unstarted(this);
        thread.start();
    }

    /**
     * Takes a commit whose request is already begun on the client ({@link RemoteClient#beginRequest}).
     *
     * @return false if the queue is full, which one request per client rules out
     */
    boolean offer(final RemoteClient client)
    {
        return queue.offer(client);
    }

    @Override
    public void run()
    {
        while (running)
        {
            final RemoteClient client;
            try
            {
                client = queue.take(0);
            }
            catch (final InterruptedException ex)
            {
                break;
            }
            if (client == null)
            {
                continue;
            }
            try
            {
                seal(client, client.requestFirst(), client.requestCount());
            }
            catch (final RuntimeException ex)
            {
                // The commit still goes to the engine, which answers pages whose seal is missing as corrupt.
                LOG.log(System.Logger.Level.ERROR, "sealing a commit of IPC client " + client.clientId() + " failed", ex);
            }
            if (!pipeline.publish(client, RequestOp.COMMIT, client.requestFirst(), client.requestCount()))
            {
                client.complete(RequestStatus.CLOSED, 0, 0, 0, 0, 0);
            }
        }
    }

    /** Seals each reserved page of the commit, as {@code Session.commit} does on the client's thread. */
    private void seal(final RemoteClient client, final int first, final int count)
    {
        final byte[] statuses = client.statuses();
        final int[] pageIds = client.pageIds();
        final int[] generations = client.generations();
        final int[] lengths = client.lengths();
        for (int slot = first; slot < first + count; slot++)
        {
            if (statuses[slot] != PageStatus.RESERVED.ordinal() || lengths[slot] < 1 || lengths[slot] > pool.pageSize())
            {
                continue; // the engine answers it NONE or INVALID
            }
            final int page = pageIds[slot];
            final long word = pool.metadata().stateWordAcquire(page);
            if (PageStateWord.state(word) == PageStateWord.WRITING && PageStateWord.generation(word) == generations[slot]
                && pool.metadata().ownerPlain(page) == client.clientId())
            {
                pool.frames().seal(page, pool.metadata().keyHighPlain(page), pool.metadata().keyLowPlain(page), lengths[slot]);
            }
        }
    }

    /** Stops the thread; commits still queued are answered CLOSED. */
    void stop()
    {
        running = false;
        thread.interrupt();
        try
        {
            thread.join(5_000);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        RemoteClient left;
        while ((left = queue.poll()) != null)
        {
            left.complete(RequestStatus.CLOSED, 0, 0, 0, 0, 0);
        }
    }
}
