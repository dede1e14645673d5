package io.kvtier.client.protocol;

/**
 * The status and error codes of docs/ipc-protocol.md section 6: a response's Status, a WELCOME's
 * Status, and the Disconnect Reason of a ring file. {@link #OK} is 0 everywhere.
 */
public enum ErrorCode
{
    /** Done; see the entries. */
    OK(0, "done; see the entries"),
    /** The client was silent past its timeout: its pins and reservations were reclaimed. */
    LEASE_EXPIRED(1, "the client was silent past its timeout: its pins and reservations were reclaimed"),
    /** The engine is shutting down. */
    CLOSED(2, "the engine is shutting down"),
    /** The engine rejected the request's arguments. */
    INVALID(3, "the engine rejected the request's arguments"),
    /** The engine failed on this request; it is logged and the engine runs on. */
    INTERNAL_ERROR(4, "the engine failed on this request; it is logged and the engine runs on"),
    /** Length does not match the Type's body, or a record is shorter than its header. */
    MALFORMED(16, "Length does not match the Type's body, or a record is shorter than its header"),
    /** No such operation. */
    UNKNOWN_TYPE(17, "no such operation"),
    /** Request Id not greater than the last one seen (a replay). */
    STALE_REQUEST_ID(18, "Request Id not greater than the last one seen (a replay)"),
    /** Slots outside {@code [0, Max Keys)}. */
    SLOT_RANGE(19, "slots outside [0, Max Keys)"),
    /** Keys would overwrite slots that hold a pin or reservation of other keys. */
    SLOT_HELD(20, "keys would overwrite slots that hold a pin or reservation of other keys"),
    /** The namespace index names no namespace of this client. */
    NAMESPACE_DENIED(21, "the namespace index names no namespace of this client"),
    /** A record longer than Max Message Length, or one that does not fit the ring. */
    TOO_LONG(22, "a record longer than Max Message Length, or one that does not fit the ring"),
    /** The response ring stayed full past Client Timeout: the client stopped reading. */
    NOT_READING(23, "the response ring stayed full past Client Timeout: the client stopped reading"),
    /** No Client Heartbeat change for Client Timeout. */
    TIMED_OUT(24, "no Client Heartbeat change for Client Timeout"),
    /** The HELLO's Major Version is not one the engine speaks. */
    VERSION(32, "the HELLO's Major Version is not one the engine speaks"),
    /** The peer's uid and gid are not on the allow-lists. */
    NOT_ALLOWED(33, "the peer's uid and gid are not on the allow-lists"),
    /** Every client slot is taken. */
    TOO_MANY_CLIENTS(34, "every client slot is taken"),
    /** Wrong magic, size or field values in the HELLO. */
    BAD_HELLO(35, "wrong magic, size or field values");

    private static final ErrorCode[] BY_CODE = new ErrorCode[64];

    static
    {
        for (final ErrorCode value : values())
        {
            BY_CODE[value.code] = value;
        }
    }

    private final int code;
    private final String meaning;

    ErrorCode(final int code, final String meaning)
    {
        this.code = code;
        this.meaning = meaning;
    }

    /** @return the code on the wire */
    public int code()
    {
        return code;
    }

    /** @return what it means, one line */
    public String meaning()
    {
        return meaning;
    }

    /**
     * @param code a code read from the wire
     * @return its constant, or null when the protocol defines no such code
     */
    public static ErrorCode of(final int code)
    {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }

    /**
     * @param code a code read from the wire
     * @return its name, or {@code CODE_n} for a code the protocol does not define
     */
    public static String nameOf(final int code)
    {
        final ErrorCode known = of(code);
        return known == null ? "CODE_" + code : known.name();
    }
}
