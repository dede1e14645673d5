package io.kvtier.engine.ipc;

import io.kvtier.collections.ParkingQueue;
import io.kvtier.engine.client.RequestStatus;

/**
 * A thread of its own that the engine thread hands IPC requests to, so that work per byte (sealing a
 * commit, copying KV) never runs on the thread every client waits on. A client has at most one
 * request in flight, so the queue, sized for every client, never fills, and nobody else touches the
 * client until the request is answered.
 */
abstract class ClientRequestThread implements Runnable
{
    private final ParkingQueue<RemoteClient> queue;
    private final Thread thread;
    private volatile boolean running = true;

    /**
     * @param name       the thread's name
     * @param maxClients clients that may be connected at once
     */
    ClientRequestThread(final String name, final int maxClients)
    {
        this.queue = new ParkingQueue<>(Math.max(2, maxClients), 1);
        this.thread = Thread.ofPlatform().name(name).daemon(true).unstarted(this);
    }

    /** Starts the thread: the last thing a subclass's constructor does, once its own fields are set. */
    final void start()
    {
        thread.start();
    }

    /**
     * Takes a client whose request is already begun ({@link RemoteClient#beginRequest}).
     *
     * @return false if the queue is full, which one request per client rules out
     */
    final boolean offer(final RemoteClient client)
    {
        return queue.offer(client);
    }

    @Override
    public final void run()
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
            if (client != null)
            {
                serve(client);
            }
        }
    }

    /**
     * Does the client's request and answers it, or hands it on; on this thread, and must not throw.
     *
     * @param client the client
     */
    abstract void serve(RemoteClient client);

    /** Stops the thread; requests still queued are answered CLOSED. */
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
