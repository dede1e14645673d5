package io.kvtier.bench.workload;

/**
 * What a client did for one request, filled by a {@link WorkloadClient} and added up by the
 * {@link WorkloadRunner}. Reused from request to request, so a client allocates nothing for it.
 */
final class RequestTally
{
    long pagesRequested;
    long hitL2;
    long hitL3;
    long written;
    long verified;
    long corrupt;
    long notCached;
    long latencyNanos;
    final long[] stepNanos = new long[ClientStep.values().length];

    /** Zeroes every count, before a request. */
    public void reset()
    {
        pagesRequested = 0;
        hitL2 = 0;
        hitL3 = 0;
        written = 0;
        verified = 0;
        corrupt = 0;
        notCached = 0;
        latencyNanos = 0;
        java.util.Arrays.fill(stepNanos, 0);
    }

    /**
     * Adds the time since {@code since} to a step.
     *
     * @param step the step that just ended
     * @param since when it began
     * @return now, when the next step begins
     */
    long clock(final ClientStep step, final long since)
    {
        final long now = System.nanoTime();
        stepNanos[step.ordinal()] += now - since;
        return now;
    }

    /** @return the prompt's pages */
    public long pagesRequested()
    {
        return pagesRequested;
    }

    /** @return pages served from the pool */
    public long hitL2()
    {
        return hitL2;
    }

    /** @return pages served from L3 */
    public long hitL3()
    {
        return hitL3;
    }

    /** @return pages read back whose every byte matched */
    public long verified()
    {
        return verified;
    }

    /** @return pages read back wrong */
    public long corrupt()
    {
        return corrupt;
    }

    /** Writes the tally as longs, for a client in another process. */
    void writeTo(final java.io.DataOutputStream out) throws java.io.IOException
    {
        out.writeLong(pagesRequested);
        out.writeLong(hitL2);
        out.writeLong(hitL3);
        out.writeLong(written);
        out.writeLong(verified);
        out.writeLong(corrupt);
        out.writeLong(notCached);
        out.writeLong(latencyNanos);
        for (final long nanos : stepNanos)
        {
            out.writeLong(nanos);
        }
    }

    /** Reads a tally {@link #writeTo written} by a client in another process. */
    void readFrom(final java.io.DataInputStream in) throws java.io.IOException
    {
        pagesRequested = in.readLong();
        hitL2 = in.readLong();
        hitL3 = in.readLong();
        written = in.readLong();
        verified = in.readLong();
        corrupt = in.readLong();
        notCached = in.readLong();
        latencyNanos = in.readLong();
        for (int i = 0; i < stepNanos.length; i++)
        {
            stepNanos[i] = in.readLong();
        }
    }
}
