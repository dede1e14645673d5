package io.kvtier.client;

import io.kvtier.client.protocol.ErrorCode;

import java.io.IOException;

/**
 * The engine refused the handshake, or dropped the client (its Disconnect Reason), or stopped.
 */
public final class IpcException extends IOException
{
    private static final long serialVersionUID = 1L;

    private final int code;

    /**
     * @param code    the protocol's code (an {@link ErrorCode}'s, or one this version does not know)
     * @param message what happened
     */
    public IpcException(final int code, final String message)
    {
        super(message + " (" + ErrorCode.nameOf(code) + ")");
        this.code = code;
    }

    /** @return the code on the wire */
    public int code()
    {
        return code;
    }

    /** @return the code's constant, or null for a code this version does not know */
    public ErrorCode errorCode()
    {
        return ErrorCode.of(code);
    }
}
