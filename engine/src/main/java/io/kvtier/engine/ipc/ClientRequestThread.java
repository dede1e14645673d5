package io.kvtier.engine.ipc;

import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.collections.ParkingQueue;
import io.kvtier.engine.status.ThreadWatch;

/**
 * A thread of its own that the engine thread hands IPC requests to, so that work per byte (sealing a
 * commit, copying KV) never runs on the thread every client waits on. A client has at most one
 * request in flight, so the queue, sized for every client, never fills, and nobody else touches the
 * client until the request is answered.
 *
 * <p>The thread must outlive anything a request does to it: whatever a request throws, an
 * {@code Error} included (a fault HotSpot turned into an {@code InternalError} when a client
 * truncated a file under a mapping, a full {@code /dev/shm}), the request is answered INTERNAL_ERROR,
 * counted, and the thread takes the next. It is watched ({@link ThreadWatch}), so that if it dies
 * anyway or hangs in one request, {@code kvtier stat} says so.
 */
abstract class ClientRequestThread implements Runnable
{
    private static final System.Logger LOG = System.getLogger(ClientRequestThread.class.getName());
    /**
     * The longest this thread parks with no request: it is woken for each one, and stopped by an interrupt, so
     * the bound only limits what a lost wake-up would cost. The queue's own 1 ms bound woke the idle sealer and
     * device threads about 850 times a second each, and on two cores every one of those wake-ups took a core
     * from the engine thread or from a client spinning on its answer.
     */
    static final long IDLE_PARK_NANOS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(100);

    private final ParkingQueue<RemoteClient> queue;
    private final Thread thread;
    private final ThreadWatch.Watched watched;
    private volatile boolean running = true;
    /** Whether the request being served was handed on (to the engine): from then on it is not this thread's to answer. */
    private boolean handedOn;

    /**
     * @param name       the thread's name
     * @param maxClients clients that may be connected at once
     * @param watch      watches the thread
     */
    ClientRequestThread(final String name, final int maxClients, final ThreadWatch watch)
    {
        this.queue = new ParkingQueue<>(Math.max(2, maxClients), 1, IDLE_PARK_NANOS);
        this.thread = Thread.ofPlatform().name(name).daemon(true).unstarted(this);
        this.watched = watch.watch(name);
        watched.thread(thread);
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
                handedOn = false;
                watched.begin();
                try
                {
                    serve(client);
                }
                catch (final Throwable failure)
                {
                    failed(client, failure);
                }
                finally
                {
                    watched.end();
                }
            }
        }
    }

    /** The request went on to another thread, which answers it. */
    final void handedOn()
    {
        handedOn = true;
    }

    private void failed(final RemoteClient client, final Throwable failure)
    {
        watched.failed();
        try
        {
            LOG.log(System.Logger.Level.ERROR, "thread " + thread.getName() + " failed on a request of IPC client " + client.clientId()
                + "; it is answered INTERNAL_ERROR and the thread carries on", failure);
            if (!handedOn && client.inFlightAcquire())
            {
                client.complete(ErrorCode.INTERNAL_ERROR, 0, 0, 0, 0, 0);
            }
        }
        catch (final Throwable again)
        {
            // The answer itself failed (its ring faulted too): the engine drops the client when it next looks at it.
            LOG.log(System.Logger.Level.ERROR, "answering the failed request of IPC client " + client.clientId() + " failed too", again);
        }
    }

    /**
     * Does the client's request and answers it, or hands it on ({@link #handedOn}); on this thread.
     * Whatever it throws is answered INTERNAL_ERROR unless the request was handed on.
     *
     * @param client the client
     */
    abstract void serve(RemoteClient client);

    /** @return whether its thread is still running (for tests: after {@link #stop()} it is not) */
    boolean alive()
    {
        return thread.isAlive();
    }

    /** Stops the thread; requests still queued are answered CLOSED. */
    void stop()
    {
        running = false;
        watched.stopping();
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
            left.complete(ErrorCode.CLOSED, 0, 0, 0, 0, 0);
        }
    }
}
