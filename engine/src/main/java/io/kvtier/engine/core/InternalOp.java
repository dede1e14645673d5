package io.kvtier.engine.core;

/**
 * Request codes carried by ring events.
 */
public final class InternalOp
{
    /** Register the session with the engine. */
    public static final int OPEN = 1;
    /** Count the prefix in the pool and in L3; may prefetch and probe. */
    public static final int LOOKUP = 2;
    /** Pin the longest available prefix, loading L3 pages into the pool. */
    public static final int ACQUIRE = 3;
    /** Drop pins. */
    public static final int RELEASE = 4;
    /** Reserve pages to write. */
    public static final int RESERVE = 5;
    /** Publish written pages. */
    public static final int COMMIT = 6;
    /** Give reserved pages back unwritten. */
    public static final int ABORT = 7;
    /** Load L3 pages of the prefix into the pool without waiting. */
    public static final int PREFETCH = 8;
    /** Copy pool pages to L3. */
    public static final int BACKUP = 9;
    /** Wait until every backup started so far has ended. */
    public static final int FLUSH = 10;
    /** Drop unpinned pages from the pool (admin). */
    public static final int EVICT = 11;
    /** Renew the lease. */
    public static final int KEEP_ALIVE = 12;
    /** Drop everything the session holds and unregister it. */
    public static final int CLOSE = 13;
    /**
     * Engine-internal: the client is gone without a word (its process died, or it was dropped): its pins
     * are dropped and its reservations go through quarantine, since it may have been writing them.
     * Not an IPC protocol operation.
     */
    public static final int DISCONNECT = 64;

    private InternalOp()
    {
    }

    /**
     * @param op a code
     * @return its name
     */
    public static String name(final int op)
    {
        return switch (op)
        {
            case OPEN -> "open";
            case LOOKUP -> "lookup";
            case ACQUIRE -> "acquire";
            case RELEASE -> "release";
            case RESERVE -> "reserve";
            case COMMIT -> "commit";
            case ABORT -> "abort";
            case PREFETCH -> "prefetch";
            case BACKUP -> "backup";
            case FLUSH -> "flush";
            case EVICT -> "evict";
            case KEEP_ALIVE -> "keep-alive";
            case CLOSE -> "close";
            case DISCONNECT -> "disconnect";
            default -> "op" + op;
        };
    }
}
