package io.kvtier.engine.core;

import io.kvtier.client.PageKeyChain;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.status.EngineHistograms;

/**
 * The engine's record of one open client and of its request in flight: everything the engine thread
 * keeps about a client, so that the client's handle ({@link ClientPort}) holds only what the client
 * itself reads and writes. One record per client slot, made at start and reused; the engine thread
 * alone reads and writes it.
 */
final class ClientRecord
{
    /** The request is not waiting for anything. */
    static final int PHASE_NONE = 0;
    /** A lookup waits for L3 probes. */
    static final int PHASE_PROBING = 1;
    /** A lookup waits for the loads it prefetched. */
    static final int PHASE_PREFETCH_WAIT = 2;
    /** A reserve or an acquire waits for write-back evictions to free pages. */
    static final int PHASE_SPACE_WAIT = 3;
    /** An acquire's walk waits for L3 probes. */
    static final int PHASE_ACQUIRE_PROBING = 4;

    final int id;
    /** Where the latency of each request is recorded when it is answered; null records none. */
    private final EngineHistograms histograms;
    ClientPort port;
    PageKeyChain keys;
    int[] lengths;
    byte[] status;
    int[] pageIds;
    int[] generations;
    boolean registered;
    long lastActivityNanos;
    /** One past the last key the client may hold a pin or a reservation on. */
    int holdLimit;

    // The request in flight.
    int opSeq;
    int op;
    int from;
    int count;
    boolean inFlight;
    /** Loads (or prefetches) the request waits for. */
    int pending;
    /** Probe answers the request waits for. */
    int probePending;
    /** Keys before this one were probed during this request; they are not probed again. */
    int probedUntil;
    int phase;
    int cursor;
    int lookupRun;
    int lookupTotal;
    long spaceDeadlineNanos;

    // Its results, handed to the port at completion.
    int resultCount;
    int l2Pages;
    int l3Pages;
    int acquiredFromPool;
    int acquiredFromL3;
    /** The request's namespace tag: what pages it reserves carry and what pages it may be given. */
    long namespaceTag;
    /** The request may be given pages of any namespace (a trusted in-process session). */
    boolean allNamespaces;
    /** A LOOKUP_AND_LOCK's Reserve Limit, as its port gave it: at most this many keys after the prefix are reserved (-1: all). */
    int reserveLimit;
    /** A COMMIT_AND_RELEASE asks for each page it commits to be copied to L3. */
    boolean backupOnCommit;
    /** A LOOKUP_AND_LOCK has pinned its prefix and is reserving pages after it, up to {@link #reserveEnd}. */
    boolean reserving;
    /** One past the last key a LOOKUP_AND_LOCK reserves a page for. */
    int reserveEnd;
    /** The keys a LOOKUP_AND_LOCK pinned: its Result Count. */
    int lockedPrefix;
    /** When the engine took the request in flight, by the system's clock: its latency is measured from here. */
    long beganNanos;

    ClientRecord(final int id)
    {
        this(id, null);
    }

    ClientRecord(final int id, final EngineHistograms histograms)
    {
        this.id = id;
        this.histograms = histograms;
    }

    void bind(final ClientPort client, final long nowNanos)
    {
        port = client;
        keys = client.keys();
        lengths = client.lengths();
        status = client.statuses();
        pageIds = client.pageIds();
        generations = client.generations();
        registered = true;
        lastActivityNanos = nowNanos;
        holdLimit = 0;
        inFlight = false;
        client.clientId(id);
    }

    void unbind()
    {
        registered = false;
        port = null;
        keys = null;
        lengths = null;
        status = null;
        pageIds = null;
        generations = null;
    }

    /**
     * Starts a request: resets what the previous one left.
     *
     * @param nowNanos    the engine clock's time
     * @param systemNanos {@link System#nanoTime()} read for this request: a latency is real time even when a test
     *                    drives the engine's clock, and where the engine's clock is the system's one read serves both
     */
    void begin(final int requestOp, final int requestFrom, final int requestCount, final long nowNanos, final long systemNanos)
    {
        opSeq++;
        op = requestOp;
        from = requestFrom;
        count = requestCount;
        inFlight = true;
        pending = 0;
        probePending = 0;
        probedUntil = requestFrom;
        phase = PHASE_NONE;
        cursor = requestFrom;
        resultCount = 0;
        l2Pages = 0;
        l3Pages = 0;
        acquiredFromPool = 0;
        acquiredFromL3 = 0;
        reserving = false;
        reserveEnd = requestFrom + requestCount;
        lockedPrefix = 0;
        lastActivityNanos = nowNanos;
        beganNanos = systemNanos;
    }

    /**
     * Clears the request's slots of what an earlier request said about them, keeping what they hold:
     * an outcome (COMMITTED, EXISTS, MISS, ...) is never read back by a later request, a slot that
     * holds nothing names no page and no generation, and a pin is PINNED, since "from L3" describes only
     * the request that pinned it (docs/ipc-protocol.md section 4, the entries).
     */
    void resetStatuses()
    {
        for (int i = from; i < from + count; i++)
        {
            final int was = status[i];
            if (PageEntryStatus.isPinned(was))
            {
                status[i] = (byte)PageEntryStatus.PINNED;
            }
            else if (was != PageEntryStatus.RESERVED)
            {
                status[i] = (byte)PageEntryStatus.NONE;
                pageIds[i] = -1;
                generations[i] = 0;
            }
        }
    }

    void hold(final int key)
    {
        if (key + 1 > holdLimit)
        {
            holdLimit = key + 1;
        }
    }

    /** Ends the request in flight with {@code outcome} and its results. */
    void complete(final ErrorCode outcome)
    {
        inFlight = false;
        phase = PHASE_NONE;
        // The answer goes out before the clock is read for its latency, unless the port reads the times once answered:
        // a read costs tens of nanoseconds (30-40 here: ClockReadBenchmark), which a client would otherwise wait for on every round trip.
        final boolean timesFirst = port.wantsEngineTimes();
        if (timesFirst)
        {
            answered();
        }
        port.complete(outcome, resultCount, l2Pages, l3Pages, acquiredFromPool, acquiredFromL3);
        if (!timesFirst)
        {
            answered();
        }
    }

    /** Records the latency of the request in flight as it is answered: by {@link #complete}, or by a close, which answers its port itself. */
    void answered()
    {
        final long now = System.nanoTime();
        if (histograms != null)
        {
            histograms.recordRequest(op, now - beganNanos);
        }
        if (port != null)
        {
            port.engineTimes(beganNanos, now);
        }
    }

    /** Ends the request in flight successfully with {@code result} as its count. */
    void finish(final int result)
    {
        resultCount = result;
        complete(ErrorCode.OK);
    }

    /** @return whether this record still stands for the request a waiter was registered for */
    boolean awaits(final int sequence)
    {
        return registered && inFlight && opSeq == sequence;
    }
}
