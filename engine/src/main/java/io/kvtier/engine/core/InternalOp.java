package io.kvtier.engine.core;

import io.kvtier.client.protocol.MessageType;

/**
 * The request codes the engine carries besides the protocol's operations ({@link MessageType}): those
 * with no wire form. A request event carries either kind; the codes do not overlap.
 */
public final class InternalOp
{
    /** Register the session with the engine: the socket's accept does this for a client process. */
    public static final int OPEN = 1;
    /** Renew the lease: a client process's Client Heartbeat does this. */
    public static final int KEEP_ALIVE = 12;
    /**
     * The client is gone without a word (its process died, or it was dropped): its pins are dropped
     * and its reservations go through quarantine, since it may have been writing them.
     */
    public static final int DISCONNECT = 64;

    private InternalOp()
    {
    }

    /**
     * @param op a protocol operation or one of these codes
     * @return its name, as the engine's messages print it
     */
    public static String name(final int op)
    {
        return switch (op)
        {
            case OPEN -> "open";
            case MessageType.LOOKUP -> "lookup";
            case MessageType.ACQUIRE -> "acquire";
            case MessageType.RELEASE -> "release";
            case MessageType.RESERVE -> "reserve";
            case MessageType.COMMIT -> "commit";
            case MessageType.ABORT -> "abort";
            case MessageType.PREFETCH -> "prefetch";
            case MessageType.BACKUP -> "backup";
            case MessageType.FLUSH -> "flush";
            case MessageType.EVICT -> "evict";
            case MessageType.LOOKUP_AND_LOCK -> "lookup-and-lock";
            case MessageType.COMMIT_AND_RELEASE -> "commit-and-release";
            case KEEP_ALIVE -> "keep-alive";
            case MessageType.CLOSE -> "close";
            case DISCONNECT -> "disconnect";
            default -> "op" + op;
        };
    }
}
