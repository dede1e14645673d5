package io.kvtier.bench.workload;

import io.kvtier.client.ClientOptions;
import io.kvtier.client.KvtierClient;
import io.kvtier.client.Namespace;
import io.kvtier.client.PageKeyChain;
import io.kvtier.client.PinnedPages;
import io.kvtier.client.ReservedPages;
import io.kvtier.client.protocol.PageEntryStatus;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * A workload client attached over the IPC protocol with the Java client ({@link KvtierClient}): the
 * same steps as {@link SessionWorkloadClient}, with keys computed by the client library and pages read
 * and written in place in the mapped pool.
 */
public final class IpcWorkloadClient implements WorkloadClient
{
    /** Slots the client asks for: the longest demo prompt's pages, with room to spare. */
    static final int MAX_KEYS = 4096;

    private final KvtierClient client;
    private final PageKeyChain keys = new PageKeyChain(MAX_KEYS);
    private final long rootHigh;
    private final long rootLow;
    private final int pageTokens;
    private final int pageSize;

    /**
     * @param socketPath the engine's IPC socket
     * @param namespace  the pages' namespace
     * @param pageTokens tokens per page
     * @throws IOException if the engine cannot be reached
     */
    public IpcWorkloadClient(final Path socketPath, final Namespace namespace, final int pageTokens) throws IOException
    {
        this.client = KvtierClient.connect(socketPath, ClientOptions.of(MAX_KEYS, namespace));
        this.rootHigh = namespace.rootHigh();
        this.rootLow = namespace.rootLow();
        this.pageTokens = pageTokens;
        this.pageSize = client.pageSize();
    }

    @Override
    public void serve(final ChatWorkload.Request request, final RequestTally tally)
    {
        final long t0 = System.nanoTime();
        keys.compute(rootHigh, rootLow, request.tokens(), request.length(), pageTokens, false);
        final int n = keys.size();
        long t = tally.clock(ClientStep.KEYS, t0);
        client.lookup(keys);
        t = tally.clock(ClientStep.LOOKUP, t);
        final int cached;
        try (PinnedPages pinned = client.acquire(keys))
        {
            t = tally.clock(ClientStep.ACQUIRE, t);
            cached = pinned.count();
            tally.hitL2 += pinned.fromPool();
            tally.hitL3 += pinned.fromL3();
            for (int i = 0; i < cached; i++)
            {
                final MemorySegment page = pinned.page(i);
                if (pinned.payloadLength(i) == pageSize && PagePattern.matches(page, keys.high(i), keys.low(i), pageSize))
                {
                    tally.verified++;
                }
                else
                {
                    tally.corrupt++;
                }
            }
            t = tally.clock(ClientStep.VERIFY, t);
        }
        t = tally.clock(ClientStep.RELEASE, t);
        if (cached < n)
        {
            try (ReservedPages fresh = client.reserve(keys, cached, n - cached))
            {
                t = tally.clock(ClientStep.RESERVE, t);
                int mine = 0;
                for (int i = 0; i < fresh.size(); i++)
                {
                    if (fresh.isReserved(i))
                    {
                        PagePattern.fill(fresh.page(i), keys.high(cached + i), keys.low(cached + i), pageSize);
                        mine++;
                    }
                    else if (fresh.status(i) != PageEntryStatus.EXISTS)
                    {
                        tally.notCached++;
                    }
                }
                t = tally.clock(ClientStep.FILL, t);
                if (mine > 0)
                {
                    tally.written += fresh.commit(pageSize);
                    tally.clock(ClientStep.COMMIT, t);
                }
            }
        }
        tally.latencyNanos = System.nanoTime() - t0;
        tally.pagesRequested += n;
    }

    @Override
    public void close()
    {
        client.close();
    }
}
