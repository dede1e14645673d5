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

    /** The counts before the step times in a tally on the wire (pages requested to latency). */
    static final int COUNTS = 8;
    /** The steps a tally on the wire has: the demo's client processes write this many step times. */
    static final int STEPS = ClientStep.values().length;
    /** Bytes of a tally on the wire after its READY word: the step count, the counts, the step times. */
    static final int WIRE_BYTES = Integer.BYTES + (COUNTS + STEPS) * Long.BYTES;

    /**
     * Writes the tally for a client in another process, big-endian: the number of steps ({@link #STEPS}),
     * the eight counts, then each step's time in {@link ClientStep} order, so a reader built for another step
     * list finds out from the first word instead of reading the wrong fields.
     */
    void writeTo(final java.io.DataOutputStream out) throws java.io.IOException
    {
        out.writeInt(stepNanos.length);
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

    /**
     * Checks the first word of a tally on the wire, before the rest is waited for.
     *
     * @param steps the step count it starts with
     * @return null, or what is wrong with it: a client written for another tally format, whose fields cannot be read
     */
    static String stepCountProblem(final int steps)
    {
        if (steps == STEPS)
        {
            return null;
        }
        return "its tally has " + Integer.toUnsignedString(steps) + " steps where the demo's has " + STEPS + " ("
            + java.util.Arrays.stream(ClientStep.values()).map(ClientStep::label).collect(java.util.stream.Collectors.joining(", "))
            + "): a client written for another tally format";
    }

    /**
     * Reads a tally {@link #writeTo written} by a client in another process, whose step count
     * {@link #stepCountProblem} found right.
     *
     * @param wire   {@link #WIRE_BYTES} bytes as they came
     * @param offset where they start
     */
    void readFrom(final byte[] wire, final int offset)
    {
        int at = offset + Integer.BYTES;
        pagesRequested = (long)LONG.get(wire, at);
        hitL2 = (long)LONG.get(wire, at += Long.BYTES);
        hitL3 = (long)LONG.get(wire, at += Long.BYTES);
        written = (long)LONG.get(wire, at += Long.BYTES);
        verified = (long)LONG.get(wire, at += Long.BYTES);
        corrupt = (long)LONG.get(wire, at += Long.BYTES);
        notCached = (long)LONG.get(wire, at += Long.BYTES);
        latencyNanos = (long)LONG.get(wire, at += Long.BYTES);
        for (int i = 0; i < stepNanos.length; i++)
        {
            stepNanos[i] = (long)LONG.get(wire, at += Long.BYTES);
        }
    }

    /**
     * Checks that the tally can describe a request of {@code pages} pages, so that garbage from a broken client
     * process is not added to the demo's figures: every count from 0 to the pages, the pages read, the pages
     * hit and the pages after the cached prefix each at most the pages, and the steps, which are spans of the
     * request, together at most its latency.
     *
     * @param pages the request's pages, as the prompt's length and the page size give them
     * @return null, or what cannot be right, naming the fields and their values
     */
    String implausibility(final long pages)
    {
        if (pagesRequested != pages)
        {
            return "pages_requested " + pagesRequested + " where the prompt has " + pages;
        }
        final long[] counts = {hitL2, hitL3, written, verified, corrupt, notCached};
        final String[] names = {"hit_l2", "hit_l3", "written", "verified", "corrupt", "not_cached"};
        for (int i = 0; i < counts.length; i++)
        {
            if (counts[i] < 0 || counts[i] > pages)
            {
                return names[i] + " " + counts[i] + " is not from 0 to the prompt's " + pages + " pages";
            }
        }
        if (hitL2 + hitL3 > pages)
        {
            return "hit_l2 " + hitL2 + " + hit_l3 " + hitL3 + " exceed the prompt's " + pages + " pages";
        }
        if (verified + corrupt + written + notCached > pages)
        {
            return "verified " + verified + " + corrupt " + corrupt + " + written " + written + " + not_cached " + notCached
                + " exceed the prompt's " + pages + " pages";
        }
        if (latencyNanos < 0)
        {
            return "latency " + latencyNanos + " ns";
        }
        long steps = 0;
        for (final ClientStep step : ClientStep.values())
        {
            final long nanos = stepNanos[step.ordinal()];
            // compared with what is left of the latency, so that garbage cannot overflow the sum
            if (nanos < 0 || nanos > latencyNanos - steps)
            {
                return "step " + step.label() + " took " + nanos + " ns where the request's latency is " + latencyNanos
                    + " ns and the steps before it took " + steps + " ns";
            }
            steps += nanos;
        }
        return null;
    }

    private static final java.lang.invoke.VarHandle INT =
        java.lang.invoke.MethodHandles.byteArrayViewVarHandle(int[].class, java.nio.ByteOrder.BIG_ENDIAN);
    private static final java.lang.invoke.VarHandle LONG =
        java.lang.invoke.MethodHandles.byteArrayViewVarHandle(long[].class, java.nio.ByteOrder.BIG_ENDIAN);
}
