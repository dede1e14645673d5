package io.kvtier.engine.ipc;

import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.core.Pipeline;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.engine.pool.Reservation;

/**
 * The {@code kvtier-ipc-seal} thread: seals the pages of IPC commits (COMMIT and COMMIT_AND_RELEASE: CRC32C of
 * the payload, the frame trailer) and then hands each commit to the engine through its ring, as an in-process session seals
 * on its own thread before it publishes. The engine thread reads the commit from the client's ring and
 * gives it here, so that no per-byte work lands on the thread every client waits on (a 2 MiB page is
 * some hundred microseconds of CRC).
 *
 * <p>The client is not looked at by the engine thread until its commit completes.
 */
final class CommitSealer extends ClientRequestThread
{
    private static final System.Logger LOG = System.getLogger(CommitSealer.class.getName());

    private final PagePool pool;
    private final Pipeline pipeline;

    CommitSealer(final PagePool pool, final Pipeline pipeline, final int maxClients, final io.kvtier.engine.status.ThreadWatch watch)
    {
        super("kvtier-ipc-seal", maxClients, watch);
        this.pool = pool;
        this.pipeline = pipeline;
        start();
    }

    @Override
    void serve(final RemoteClient client)
    {
        try
        {
            seal(client, client.requestFirst(), client.requestCount());
        }
        catch (final RuntimeException | Error ex)
        {
            // The commit still goes to the engine, which answers pages whose seal is missing as corrupt: none becomes
            // visible. An Error too: a pool truncated under the mapping faults here (SIGBUS, an InternalError).
            LOG.log(System.Logger.Level.ERROR, "sealing a commit of IPC client " + client.clientId() + " failed", ex);
        }
        handedOn();
        if (!pipeline.publish(client, client.requestOp(), client.requestFirst(), client.requestCount()))
        {
            client.complete(ErrorCode.CLOSED, 0, 0, 0, 0, 0);
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
            if (statuses[slot] != PageEntryStatus.RESERVED || lengths[slot] < 1 || lengths[slot] > pool.pageSize())
            {
                continue; // the engine answers it NONE or INVALID
            }
            final int page = pageIds[slot];
            final long word = pool.metadata().stateWordAcquire(page);
            if (Reservation.isHeldBy(pool.metadata(), page, word, generations[slot], client.clientId()))
            {
                pool.frames().seal(page, pool.metadata().keyHighPlain(page), pool.metadata().keyLowPlain(page), lengths[slot]);
            }
        }
    }
}
