package io.kvtier.client;

import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.MessageType;

/**
 * The engine answered a request, or the handshake, with an error code of docs/ipc-protocol.md
 * section 6, or dropped the client (its Disconnect Reason). The message names the code.
 */
public final class KvtierException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final int code;
    private final int operation;

    /**
     * @param code      the code on the wire
     * @param operation the request's Type, or 0 for the handshake or a disconnect
     * @param detail    more, or null
     */
    public KvtierException(final int code, final int operation, final String detail)
    {
        super(message(code, operation, detail));
        this.code = code;
        this.operation = operation;
    }

    private static String message(final int code, final int operation, final String detail)
    {
        final ErrorCode known = ErrorCode.of(code);
        return (operation == 0 ? "kvtier" : MessageType.name(operation)) + ": " + ErrorCode.nameOf(code) + " (" + code + ")"
            + (known == null ? "" : ": " + known.meaning()) + (detail == null || detail.isEmpty() ? "" : ": " + detail);
    }

    /** @return the code on the wire */
    public int code()
    {
        return code;
    }

    /** @return the code's constant, or null for a code this client does not know */
    public ErrorCode errorCode()
    {
        return ErrorCode.of(code);
    }

    /** @return the request's Type ({@link MessageType}), or 0 for the handshake or a disconnect */
    public int operation()
    {
        return operation;
    }
}
