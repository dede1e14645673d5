package io.kvtier.bench.warm;

import io.kvtier.bench.replay.SyntheticTraces;
import io.kvtier.bench.replay.TraceRequest;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.Session;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

/**
 * The requests {@code kvtier bench restart} replays, before the crash and after the restart, and what one
 * request does: as an inference engine does with its prompt's blocks, it acquires the longest cached prefix
 * (the hits), checks each hit page's first word against its block, releases them, then reserves, writes and
 * commits the blocks it had to compute. The trace is the synthetic {@code chat} one ({@link SyntheticTraces#chat}):
 * multi-turn conversations that come back to their whole history.
 */
final class RestartWorkload
{
    /** The high half of every page key: the low half is the block's hash id. */
    static final long KEY_HIGH = 0x5245535441525421L;
    /** A turn starts a new conversation with this probability. */
    static final double END_PROBABILITY = 0.15;

    private final long pageBytes;
    long requests;
    long blocks;
    long hits;
    long wrong;

    /**
     * @param pageBytes the pool's page size
     */
    RestartWorkload(final long pageBytes)
    {
        this.pageBytes = pageBytes;
    }

    /**
     * @param seed          the trace's seed
     * @param requests      how many requests in all (before the crash and after the restart)
     * @param conversations conversation slots
     * @return the trace
     */
    static List<TraceRequest> trace(final long seed, final int requests, final int conversations)
    {
        return SyntheticTraces.chat(seed, requests, conversations, END_PROBABILITY);
    }

    /**
     * Replays one request on a session and counts its blocks and hits.
     *
     * @param session the session, with key slots for the request's blocks
     * @param request the request
     */
    void replay(final Session session, final TraceRequest request)
    {
        final long[] ids = request.hashIds();
        final int n = Math.min(ids.length, session.keys().capacity());
        session.keys().clear();
        for (int k = 0; k < n; k++)
        {
            session.keys().add(KEY_HIGH, ids[k]);
        }
        final int hit = session.acquire(0, n);
        for (int k = 0; k < hit; k++)
        {
            final MemorySegment page = session.page(k);
            if (page.get(ValueLayout.JAVA_LONG_UNALIGNED, 0) != ids[k] || session.payloadLength(k) != pageBytes)
            {
                wrong++;
            }
        }
        if (hit > 0)
        {
            session.release(0, hit);
        }
        requests++;
        blocks += n;
        hits += hit;
        if (hit == n)
        {
            return;
        }
        session.reserve(hit, n - hit);
        int reserved = 0;
        for (int k = hit; k < n; k++)
        {
            if (session.status(k) == PageEntryStatus.RESERVED)
            {
                session.page(k).set(ValueLayout.JAVA_LONG_UNALIGNED, 0, ids[k]);
                session.payloadLength(k, (int)pageBytes);
                reserved++;
            }
        }
        if (reserved > 0)
        {
            session.commit(hit, n - hit);
        }
    }
}
