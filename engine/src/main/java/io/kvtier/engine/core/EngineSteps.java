package io.kvtier.engine.core;

/**
 * Steps of one part that another part takes on a request's behalf, through the conductor (which
 * implements this and hands each to its owner), so that no part holds another: a load that ended pins
 * its page for the acquire that waited ({@link Acquires}), probes that ended let an acquire's walk go on,
 * and a session that ends gives back its pins and its reservations ({@link Reservations}). Engine thread only.
 */
interface EngineSteps
{
    /**
     * Pins a resident page for a request's key.
     *
     * @param r    the request
     * @param key  the key's index in its chain
     * @param page the page
     * @param as   how the key's slot reads once pinned
     * @return whether it was pinned
     */
    boolean pin(ClientRecord r, int key, int page, int as);

    /**
     * Goes on with an acquire's walk down its chain.
     *
     * @param r the request
     */
    void walk(ClientRecord r);

    /**
     * Releases the pins a client holds in {@code [from, end)}.
     *
     * @return pins released
     */
    int release(ClientRecord r, int from, int end);

    /**
     * Gives back the reservations a client holds in {@code [from, end)}.
     *
     * @param expired whether its lease expired (its pages rest in quarantine) rather than it aborting
     * @return reservations the client aborted
     */
    int abort(ClientRecord r, int from, int end, boolean expired);

    /**
     * A LOOKUP_AND_LOCK pinned its prefix: it goes on to reserve pages for the keys after it, and is
     * answered once it has.
     *
     * @param r the request, its acquire's counts recorded
     */
    void reserveAfterPrefix(ClientRecord r);

    /**
     * The index dropped a tier's copy of a key that the tier may still hold (a read whose outcome is unknown):
     * lookups probe that tier again ({@link Probes#indexMayMiss}).
     *
     * @param tier the tier's index
     * @param why  what happened, for the log
     */
    void indexMayMiss(int tier, String why);
}
