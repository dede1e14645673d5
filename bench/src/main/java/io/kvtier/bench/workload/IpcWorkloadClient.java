package io.kvtier.bench.workload;

import io.kvtier.client.ClientOptions;
import io.kvtier.client.KvtierClient;
import io.kvtier.client.Namespace;
import io.kvtier.client.PageKeyChain;
import io.kvtier.client.LockedPages;
import io.kvtier.client.protocol.PageEntryStatus;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * A workload client attached over the IPC protocol with the Java client ({@link KvtierClient}): the
 * same two requests as {@link SessionWorkloadClient}, with keys computed by the client library and pages read
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
        // Two round trips a request, as SessionWorkloadClient makes them.
        try (LockedPages locked = client.lookupAndLock(keys))
        {
            t = tally.clock(ClientStep.ACQUIRE, t);
            final int cached = locked.pinnedCount();
            tally.hitL2 += locked.fromPool();
            tally.hitL3 += locked.fromL3();
            for (int i = 0; i < cached; i++)
            {
                final MemorySegment page = locked.page(i);
                if (locked.payloadLength(i) == pageSize && PagePattern.matches(page, keys.high(i), keys.low(i), pageSize))
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
                if (locked.isReserved(i))
                {
                    PagePattern.fill(locked.page(i), keys.high(i), keys.low(i), pageSize);
                }
                else if (locked.status(i) != PageEntryStatus.EXISTS)
                {
                    tally.notCached++;
                }
            }
            t = tally.clock(ClientStep.FILL, t);
            tally.written += locked.commitAndRelease(pageSize);
            tally.clock(ClientStep.COMMIT, t);
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
