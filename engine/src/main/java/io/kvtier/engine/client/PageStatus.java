package io.kvtier.engine.client;

/**
 * What the last request did for one key of a session.
 */
public enum PageStatus
{
    /** Nothing held. */
    NONE,
    /** Pinned, found in the pool. */
    PINNED,
    /** Pinned, loaded from L3 and verified, and first used by this request (loaded for it or prefetched). */
    PINNED_FROM_L3,
    /** Reserved: write the page, then commit or abort. */
    RESERVED,
    /** Committed and visible. */
    COMMITTED,
    /** Not reserved: the pool already holds this page. */
    EXISTS,
    /** Not reserved: someone else is writing or loading it. */
    BUSY,
    /** Not reserved: no free page and nothing evictable. */
    POOL_FULL,
    /** Not found, or its load failed verification or I/O. */
    MISS,
    /** The reservation lapsed before the commit; the page was never visible. */
    EXPIRED,
    /** The request's arguments for this key were invalid (e.g. payload length). */
    INVALID,
    /** Engine-internal: waiting for a load. */
    WAITING,
    /** Loaded into the pool by a prefetch this request waited for. */
    LOADED;

    private static final PageStatus[] VALUES = values();

    /**
     * @param code a status's ordinal
     * @return the status, without allocating
     */
    public static PageStatus of(final int code)
    {
        return VALUES[code];
    }

    /** @return whether the session holds a pin on the page */
    public boolean isPinned()
    {
        return this == PINNED || this == PINNED_FROM_L3;
    }
}
