package io.kvtier.bench.workload;

/**
 * One client of the workload, as an inference engine would be: for each request it keys the prompt,
 * pins the cached prefix and reserves the rest (LOOKUP_AND_LOCK), checks every byte of the prefix, writes
 * the pages that were missing, then commits them and drops the pins (COMMIT_AND_RELEASE). The {@link WorkloadRunner} runs one per client
 * thread; whether the client talks to the engine in-process or from another process is its own affair.
 */
public interface WorkloadClient extends AutoCloseable
{
    /**
     * Serves one request.
     *
     * @param request the prompt
     * @param tally   reset; to fill with what this request did, its latency included
     */
    void serve(ChatWorkload.Request request, RequestTally tally);

    /**
     * @return a round trip's legs summed over this client's requests, where the client can tell them (a session in the
     *         engine's process, on the engine's clock); else null
     */
    default io.kvtier.engine.Session.RoundTripLegs roundTripLegs()
    {
        return null;
    }

    /** Gives back whatever the client holds. */
    @Override
    void close();
}
