package io.kvtier.engine;

import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.PageEntryStatus;

/**
 * A session request did not complete: the lease expired, the engine is closing, or the engine
 * failed on it. Per-key outcomes of completed requests are {@link PageEntryStatus}es, not exceptions.
 */
public final class SessionException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final ErrorCode status;

    /**
     * @param status  what happened
     * @param message says what and why
     */
    public SessionException(final ErrorCode status, final String message)
    {
        super(message);
        this.status = status;
    }

    /** @return what happened */
    public ErrorCode status()
    {
        return status;
    }
}
