package io.kvtier.bench.workload;

import io.kvtier.client.PageKeyChain;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.client.protocol.RequestDescriptor;
import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;

import java.lang.foreign.MemorySegment;

/** A workload client in the engine's own process, through a {@link Session}. */
final class SessionWorkloadClient implements WorkloadClient
{
    private final Session session;
    private final PageKeyChain keys;
    private final long rootHigh;
    private final long rootLow;
    private final int pageTokens;
    private final int pageSize;

    /**
     * @param engine     a running engine
     * @param root       the namespace root as {high, low}
     * @param pageTokens tokens per page
     */
    public SessionWorkloadClient(final Engine engine, final long[] root, final int pageTokens)
    {
        this.session = engine.openSession();
        this.keys = session.keys();
        this.rootHigh = root[0];
        this.rootLow = root[1];
        this.pageTokens = pageTokens;
        this.pageSize = (int)engine.pool().pageSize();
    }

    @Override
    public void serve(final ChatWorkload.Request request, final RequestTally tally)
    {
        final long t0 = System.nanoTime();
        keys.compute(rootHigh, rootLow, request.tokens(), request.length(), pageTokens, false);
        final int n = keys.size();
        long t = tally.clock(ClientStep.KEYS, t0);
        // Two round trips a request: the cached prefix pinned and the rest reserved, then the written
        // pages committed and the pins dropped (the five fine-grained requests are what bench requests
        // compares this with).
        final int cached = session.lookupAndLock(0, n, RequestDescriptor.RESERVE_ALL);
        t = tally.clock(ClientStep.ACQUIRE, t);
        tally.hitL2 += session.acquiredFromPool();
        tally.hitL3 += session.acquiredFromL3();
        for (int i = 0; i < cached; i++)
        {
            final MemorySegment page = session.page(i);
            if (session.payloadLength(i) == pageSize && PagePattern.matches(page, keys.high(i), keys.low(i), pageSize))
            {
                tally.verified++;
            }
            else
            {
                tally.corrupt++;
            }
        }
        t = tally.clock(ClientStep.VERIFY, t);
        for (int i = cached; i < n; i++)
        {
            if (session.status(i) == PageEntryStatus.RESERVED)
            {
                PagePattern.fill(session.page(i), keys.high(i), keys.low(i), pageSize);
                session.payloadLength(i, pageSize);
            }
            else if (session.status(i) != PageEntryStatus.EXISTS)
            {
                tally.notCached++;
            }
        }
        t = tally.clock(ClientStep.FILL, t);
        tally.written += session.commitAndRelease(0, n, false);
        tally.clock(ClientStep.COMMIT, t);
        tally.latencyNanos = System.nanoTime() - t0;
        tally.pagesRequested += n;
    }

    @Override
    public io.kvtier.engine.Session.RoundTripLegs roundTripLegs()
    {
        return session.roundTripLegs();
    }

    @Override
    public void close()
    {
        session.close();
    }
}
