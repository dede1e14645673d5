package io.kvtier.bench.replay;

import java.util.Arrays;

/**
 * One request of a Mooncake-format trace.
 *
 * <p>The array is shared, not copied, so that a replay of millions of blocks does not copy each one
 * twice: callers must not modify it.
 *
 * @param timestamp    arrival time in ms from the start of the trace
 * @param inputLength  prompt length in tokens
 * @param outputLength generated length in tokens
 * @param hashIds      the prompt's prefix-block hash ids, one per block of 512 tokens, first to last
 */
public record TraceRequest(long timestamp, long inputLength, long outputLength, long[] hashIds)
{
    /**
     * @param timestamp    arrival time in ms from the start of the trace
     * @param inputLength  prompt length in tokens
     * @param outputLength generated length in tokens
     * @param hashIds      the prompt's prefix-block hash ids, first to last
     */
    public TraceRequest
    {
        if (hashIds == null)
        {
            throw new NullPointerException("hashIds");
        }
    }

    /** @return the number of blocks in the request */
    public int blocks()
    {
        return hashIds.length;
    }

    @Override
    public boolean equals(final Object other)
    {
        // The record default compares the array by identity, which makes equal requests unequal.
        return other instanceof final TraceRequest that &&
            timestamp == that.timestamp &&
            inputLength == that.inputLength &&
            outputLength == that.outputLength &&
            Arrays.equals(hashIds, that.hashIds);
    }

    @Override
    public int hashCode()
    {
        return 31 * (31 * (31 * Long.hashCode(timestamp) + Long.hashCode(inputLength)) + Long.hashCode(outputLength)) +
            Arrays.hashCode(hashIds);
    }

    @Override
    public String toString()
    {
        return "TraceRequest[timestamp=" + timestamp + ", inputLength=" + inputLength + ", outputLength=" + outputLength +
            ", hashIds=" + Arrays.toString(hashIds) + "]";
    }
}
