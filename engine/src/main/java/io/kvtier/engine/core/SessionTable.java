package io.kvtier.engine.core;

import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;

/**
 * The open clients and their leases: a record per client slot, handed out when a client opens and
 * taken back when it closes, or when it has sent nothing for {@code lease.session-timeout} (its pins
 * are dropped and its reservations reclaimed through quarantine). Owns the records and the free slot
 * ids.
 */
final class SessionTable implements SessionRecords, TimedPart
{
    private static final System.Logger LOG = System.getLogger(SessionTable.class.getName());

    private final EngineCounters counters;
    private final long sessionTimeoutNanos;
    private final ClientRecord[] records;
    private final int[] freeIds;
    private int freeCount;
    private final EngineSteps steps;
    private final PageSpace space;

    SessionTable(final EngineCounters counters, final long sessionTimeoutNanos, final int maxClients, final PageSpace space, final EngineSteps steps)
    {
        this.space = space;
        this.steps = steps;
        this.counters = counters;
        this.sessionTimeoutNanos = sessionTimeoutNanos;
        this.records = new ClientRecord[maxClients + 1];
        for (int id = 0; id < records.length; id++)
        {
            records[id] = new ClientRecord(id, counters.histograms());
        }
        this.freeIds = new int[maxClients];
        for (int i = 0; i < maxClients; i++)
        {
            freeIds[i] = maxClients - i;
        }
        this.freeCount = maxClients;
    }

    /** @return client slots the engine has (ids 1 to this) */
    int capacity()
    {
        return records.length - 1;
    }

    /** @return the record of a client id; slot 0 is never handed out, so it is never registered */
    @Override
    public ClientRecord record(final int id)
    {
        return records[id];
    }

    /** @return the record of an open client, or null when the port is not open (closed, expired, never opened) */
    ClientRecord recordOf(final ClientPort port)
    {
        final int id = port.clientId();
        if (id <= 0 || id >= records.length)
        {
            return null;
        }
        final ClientRecord r = records[id];
        return r.registered && r.port == port ? r : null;
    }

    /** Opens a client: it gets a free slot, or INVALID when every slot is taken. */
    void open(final ClientPort port, final long nowNanos)
    {
        if (freeCount == 0)
        {
            LOG.log(System.Logger.Level.WARNING, "no client slot left: all {0} are open", capacity());
            port.complete(ErrorCode.INVALID, 0, 0, 0, 0, 0);
            return;
        }
        final ClientRecord r = records[freeIds[--freeCount]];
        r.bind(port, nowNanos);
        port.complete(ErrorCode.OK, 0, 0, 0, 0, 0);
    }

    /** Closes a client at its own request: its pins go, its reservations are freed at once. */
    void close(final ClientRecord r)
    {
        final ClientPort port = r.port;
        releaseEverything(r, false);
        r.answered();
        unregister(r);
        port.complete(ErrorCode.OK, 0, 0, 0, 0, 0);
    }

    /**
     * Ends a client that is gone without a word (a shared-memory client whose process died or that was
     * dropped): its pins go, and its reservations go through quarantine as an expired lease's do, since
     * a half-written page must never become visible and the writer may still hold its mapping.
     */
    void disconnect(final ClientRecord r)
    {
        final ClientPort port = r.port;
        releaseEverything(r, true);
        unregister(r);
        port.complete(ErrorCode.OK, 0, 0, 0, 0, 0);
    }

    private void releaseEverything(final ClientRecord r, final boolean expired)
    {
        steps.release(r, 0, r.holdLimit);
        steps.abort(r, 0, r.holdLimit, expired);
        r.holdLimit = 0;
    }

    private void unregister(final ClientRecord r)
    {
        if (r.registered)
        {
            space.forgetWaiter(r);
            r.unbind();
            freeIds[freeCount++] = r.id;
        }
    }

    /** The engine stops: every request still in flight is answered CLOSED. */
    void closeAll()
    {
        for (int id = 1; id < records.length; id++)
        {
            final ClientRecord r = records[id];
            if (r.registered && r.inFlight)
            {
                r.complete(ErrorCode.CLOSED);
            }
        }
    }

    @Override
    public void onTime(final long nowNanos)
    {
        for (int id = 1; id < records.length; id++)
        {
            final ClientRecord r = records[id];
            if (r.registered && !r.inFlight && nowNanos - r.lastActivityNanos > sessionTimeoutNanos)
            {
                LOG.log(System.Logger.Level.INFO, "client {0} silent for {1} ms: lease expired, its pins and reservations reclaimed",
                    id, (nowNanos - r.lastActivityNanos) / 1_000_000);
                final ClientPort port = r.port;
                releaseEverything(r, true);
                unregister(r);
                port.expired();
                counters.increment(EngineCounter.SESSIONS_EXPIRED);
            }
        }
    }
}
