package io.kvtier.engine.operations;

import java.io.Serial;

/**
 * An operator's call the engine refused: it names the field that was wrong, or {@code null} when the
 * refusal is about the engine's state rather than one field. Nothing changed.
 */
public final class OperationException extends RuntimeException
{
    @Serial
    private static final long serialVersionUID = 1L;

    /** What kind of refusal: the admin API answers each with its own HTTP status. */
    public enum Kind
    {
        /** The request is malformed or breaks a rule (400). */
        INVALID,
        /** The request names something the engine does not have: a tier, a migration, a mark (404). */
        NOT_FOUND,
        /** The engine cannot do it now: closing, or too many migrations running (409 or 503). */
        UNAVAILABLE
    }

    private final Kind kind;
    private final String field;

    /**
     * @param kind    what kind of refusal
     * @param field   the request's field that was wrong, or {@code null}
     * @param message what was wrong and what is allowed
     */
    public OperationException(final Kind kind, final String field, final String message)
    {
        super(message);
        this.kind = kind;
        this.field = field;
    }

    /** @return what kind of refusal */
    public Kind kind()
    {
        return kind;
    }

    /** @return the field that was wrong, or {@code null} */
    public String field()
    {
        return field;
    }
}
