package io.kvtier.engine.core;

/**
 * One ring slot: what to do and to what, never payload bytes. Slots are preallocated and reused;
 * {@link #clear()} drops references once the event is handled so a slot never keeps a client or a
 * batch alive.
 */
final class EngineEvent
{
    /** A client's request; {@link #op} says which. */
    static final int CLIENT_REQUEST = 1;
    /** A tier finished a batch. */
    static final int TIER_BATCH_DONE = 2;
    /** A tier dropped an object by itself. */
    static final int TIER_OBJECT_REMOVED = 3;
    /** A pinned page was verified again: {@link #job} holds the answer. */
    static final int PAGE_REVERIFIED = 5;
    /** An operator's call (the admin API): {@link #call} runs on the engine thread. */
    static final int ADMIN_CALL = 6;
    /** The warm restart's adopter answered: {@link #adoptJob} holds the answer. */
    static final int PAGE_ADOPTED = 7;

    int type;
    ClientPort client;
    int op;
    int from;
    int count;
    TierIoBatch batch;
    ReverifyJob job;
    AdoptJob adoptJob;
    int tier;
    long keyHigh;
    long keyLow;
    Runnable call;

    void clear()
    {
        type = 0;
        client = null;
        batch = null;
        job = null;
        adoptJob = null;
        call = null;
    }

    /**
     * Fills the slot with a client's request.
     *
     * @param port  the requesting client
     * @param op    the operation, a {@link io.kvtier.client.protocol.MessageType} or {@link InternalOp} code
     * @param from  first key index
     * @param count number of keys
     */
    void request(final ClientPort port, final int op, final int from, final int count)
    {
        this.type = CLIENT_REQUEST;
        this.client = port;
        this.op = op;
        this.from = from;
        this.count = count;
    }
}
