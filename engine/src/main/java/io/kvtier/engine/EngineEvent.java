package io.kvtier.engine;


/**
 * One ring slot: what to do and to what, never payload bytes. Slots are preallocated and reused;
 * {@link #clear()} drops references once the event is handled so a slot never keeps a session or a
 * batch alive.
 */
final class EngineEvent
{
    /** A session request; {@link #op} says which. */
    public static final int SESSION_REQUEST = 1;
    /** A tier finished a batch. */
    public static final int TIER_BATCH_DONE = 2;
    /** A tier dropped an object by itself. */
    public static final int TIER_OBJECT_REMOVED = 3;
    /** Housekeeping: leases, timeouts, heartbeat. */
    public static final int TICK = 4;

    int type;
    Session session;
    int op;
    int from;
    int count;
    TierIoBatch batch;
    int tier;
    long keyHigh;
    long keyLow;

    void clear()
    {
        type = 0;
        session = null;
        batch = null;
    }

    /**
     * Fills the slot with a session request.
     *
     * @param session the requesting session
     * @param op      the operation, one of {@link SessionOp}'s codes
     * @param from    first key index
     * @param count   number of keys
     */
    public void request(final Session session, final int op, final int from, final int count)
    {
        this.type = SESSION_REQUEST;
        this.session = session;
        this.op = op;
        this.from = from;
        this.count = count;
    }
}
