package io.kvtier.admin.json;

import java.io.Serial;

/**
 * A request the admin API refuses before it reaches the engine: the HTTP status, the field that was wrong
 * (or {@code null}), and what was wrong and what is allowed. Nothing changed.
 */
public final class RequestException extends RuntimeException
{
    @Serial
    private static final long serialVersionUID = 1L;

    private final int status;
    private final String field;

    /**
     * @param status  the HTTP status to answer
     * @param field   the request's field that was wrong, or {@code null}
     * @param message what was wrong and what is allowed
     */
    public RequestException(final int status, final String field, final String message)
    {
        super(message);
        this.status = status;
        this.field = field;
    }

    /** @return the HTTP status to answer */
    public int status()
    {
        return status;
    }

    /** @return the field that was wrong, or {@code null} */
    public String field()
    {
        return field;
    }
}
