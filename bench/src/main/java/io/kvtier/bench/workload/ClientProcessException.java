package io.kvtier.bench.workload;

/**
 * A demo client process that broke the pipe protocol of {@link WorkloadClientProcess}: it failed, ended, answered
 * something that is not a tally, or did not answer in time. The message names the client, its library and what
 * was wrong; the process is gone by the time this is thrown.
 */
public final class ClientProcessException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param message the client, its library and what was wrong
     * @param cause   the I/O failure behind it, or null
     */
    public ClientProcessException(final String message, final Throwable cause)
    {
        super(message, cause);
    }
}
