package io.kvtier.engine.client;

/**
 * Outcome of a whole request; per-key outcomes are {@link PageStatus}es.
 */
public enum RequestStatus
{
    /** Done; see the per-key statuses and counts. */
    OK,
    /** The session's lease expired: its pins and reservations were reclaimed. Open a new session. */
    LEASE_EXPIRED,
    /** The engine is shutting down or closed. */
    CLOSED,
    /** The request named keys outside the chain or was otherwise malformed. */
    INVALID,
    /** The engine failed on this request; it is logged and the engine keeps running. */
    INTERNAL_ERROR;

    private static final RequestStatus[] VALUES = values();

    /**
     * @param code an ordinal
     * @return the status with that ordinal
     */
    public static RequestStatus of(final int code)
    {
        return VALUES[code];
    }
}
