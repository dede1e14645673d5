package io.kvtier.engine.status;

import io.kvtier.client.pool.CountersDescriptor;
import io.kvtier.engine.index.PageIndex;

/**
 * The engine's latency histograms, made once and read by any thread (the metrics endpoint): per tier,
 * how long its read batches and its write batches took from submission to completion, and per message
 * type, how long a request took from the moment the engine took it until it was answered. They live on
 * the heap of the engine's process, not in the pool's shared memory: only an in-process reader sees them.
 *
 * <p>The engine thread is the only writer of every histogram here: it takes the requests and answers
 * them, and it submits the tiers' batches and handles their completions. Nothing else may record into them.
 */
public final class EngineHistograms
{
    /** Tiers with histograms: as many as the engine supports. */
    public static final int MAX_TIERS = PageIndex.MAX_TIERS;

    private final LatencyHistogram[] tierReads = new LatencyHistogram[MAX_TIERS];
    private final LatencyHistogram[] tierWrites = new LatencyHistogram[MAX_TIERS];
    private final LatencyHistogram[] requests = new LatencyHistogram[CountersDescriptor.REQUEST_TYPES];

    /** Makes every histogram now, so that recording never allocates. */
    public EngineHistograms()
    {
        for (int t = 0; t < MAX_TIERS; t++)
        {
            tierReads[t] = new LatencyHistogram();
            tierWrites[t] = new LatencyHistogram();
        }
        for (int type = 0; type < requests.length; type++)
        {
            requests[type] = new LatencyHistogram();
        }
    }

    /**
     * @param tier a tier's index in configuration order
     * @return the latency of its read batches, submission to completion; engine thread writes
     */
    public LatencyHistogram tierRead(final int tier)
    {
        return tierReads[checkTier(tier)];
    }

    /**
     * @param tier a tier's index in configuration order
     * @return the latency of its write batches (backups, migrations), submission to completion; engine thread writes
     */
    public LatencyHistogram tierWrite(final int tier)
    {
        return tierWrites[checkTier(tier)];
    }

    /**
     * @param type a message type, below {@link CountersDescriptor#REQUEST_TYPES}
     * @return the latency of its requests, taken to answered; engine thread writes
     */
    public LatencyHistogram request(final int type)
    {
        if (type < 0 || type >= requests.length)
        {
            throw new IllegalArgumentException("message type=" + type + " outside [0, " + requests.length + ")");
        }
        return requests[type];
    }

    /**
     * Records a request's latency when its type has a histogram; an internal operation (open, keep-alive,
     * disconnect) has none and is skipped. Engine thread only.
     *
     * @param type  the request's message type
     * @param nanos taken to answered, in nanoseconds
     */
    public void recordRequest(final int type, final long nanos)
    {
        if (type >= 0 && type < requests.length)
        {
            requests[type].record(nanos);
        }
    }

    private static int checkTier(final int tier)
    {
        if (tier < 0 || tier >= MAX_TIERS)
        {
            throw new IllegalArgumentException("tier=" + tier + " outside [0, " + MAX_TIERS + ")");
        }
        return tier;
    }
}
