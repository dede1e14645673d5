package io.kvtier.engine;

import io.kvtier.engine.client.PageStatus;
import io.kvtier.engine.client.RequestStatus;

/**
 * A session request did not complete: the lease expired, the engine is closing, or the engine
 * failed on it. Per-key outcomes of completed requests are {@link PageStatus}es, not exceptions.
 */
public final class SessionException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final RequestStatus status;

    /**
     * @param status  what happened
     * @param message says what and why
     */
    public SessionException(final RequestStatus status, final String message)
    {
        super(message);
        this.status = status;
    }

    /** @return what happened */
    public RequestStatus status()
    {
        return status;
    }
}
