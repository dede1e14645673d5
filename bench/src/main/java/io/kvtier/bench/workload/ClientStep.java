package io.kvtier.bench.workload;

/**
 * The steps of one workload request as a client makes it, in order; the runner adds up the time
 * each takes, so a report can say where the clients' time went.
 */
enum ClientStep
{
    /** Hashing the prompt's tokens into page keys (no engine call). */
    KEYS("keys"),
    /** {@code session.lookup}: the prefix scan, including any L3 probes ({@code exists}) it waits for. */
    LOOKUP("lookup"),
    /**
     * {@code session.acquire}: pinning pool pages and loading L3 pages into the pool; for a client making
     * the combined requests (protocol 1.3), its {@code lookupAndLock}, which also reserves the rest.
     */
    ACQUIRE("acquire"),
    /** Checking every byte of the acquired pages against the pattern of their keys (no engine call). */
    VERIFY("verify"),
    /** {@code session.release}: unpinning. */
    RELEASE("release"),
    /** {@code session.reserve}: pool pages for the missing part of the prompt. */
    RESERVE("reserve"),
    /** Computing the missing pages, which the workload fakes by writing their pattern (no engine call). */
    FILL("fill"),
    /**
     * {@code session.commit}: publishing the written pages (and starting their backups); for a client making
     * the combined requests, its {@code commitAndRelease}, which also drops the pins. The steps are a fixed
     * list on the wire between the demo and its client processes (C and Python write these eight).
     */
    COMMIT("commit");

    private final String label;

    ClientStep(final String label)
    {
        this.label = label;
    }

    /** @return the step's name in reports */
    public String label()
    {
        return label;
    }
}
