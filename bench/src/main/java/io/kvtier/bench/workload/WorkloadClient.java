package io.kvtier.bench.workload;

/**
 * One client of the workload, as an inference engine would be: for each request it keys the prompt,
 * looks it up, acquires the cached prefix and checks every byte of it, releases it, then reserves,
 * writes and commits the pages that were missing. The {@link WorkloadRunner} runs one per client
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

    /** Gives back whatever the client holds. */
    @Override
    void close();
}
