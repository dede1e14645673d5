package io.kvtier.client.protocol;

/**
 * The rules of docs/ipc-protocol.md section 4 that need nothing but the record and what the handshake
 * fixed, checked in this order, the first broken one answered:
 * <ol>
 *   <li>Length at least the 32-byte request header [MALFORMED] and at most Max Message Length [TOO_LONG];</li>
 *   <li>Type an operation of the table [UNKNOWN_TYPE];</li>
 *   <li>Flags: only {@code KEYS_IN_SLOTS}, and only on an operation that carries keys, and {@code BACKUP}, only on
 *       COMMIT_AND_RELEASE [MALFORMED];</li>
 *   <li>{@code 0 <= First}, {@code 0 <= Count}, {@code First + Count <= Max Keys}, and both 0 for FLUSH,
 *       CLOSE and STATS [SLOT_RANGE];</li>
 *   <li>Length exactly {@code 32 + body} for the Type and Count [MALFORMED];</li>
 *   <li>every Reserved field 0: the header's (except a LOOKUP_AND_LOCK's, where it is the Reserve Limit), and those
 *       of REGISTER_KV's and the device copies' bodies [MALFORMED];</li>
 *   <li>Request Id greater (unsigned) than the last one accepted [STALE_REQUEST_ID];</li>
 *   <li>Namespace Index below the HELLO's N, or 0 when N was 0 [NAMESPACE_DENIED].</li>
 * </ol>
 * SLOT_HELD depends on what the client's slots hold, which only the engine knows; it checks it after
 * these, after the session's minor version (an operation the client's version does not know is
 * UNKNOWN_TYPE) and after a LOOKUP_AND_LOCK's Reserve Limit ({@link #reserveLimitValid}, INVALID). Stateless and allocation-free; never throws, whatever the bytes.
 */
public final class RequestValidator
{
    private RequestValidator()
    {
    }

    /**
     * @param request          the record, wrapped with the Length its ring checked
     * @param lastRequestId    the last request id accepted from this client (0 before the first)
     * @param maxKeys          the client's slots (WELCOME's Max Keys)
     * @param namespaceCount   N of the client's HELLO
     * @param maxMessageLength WELCOME's Max Message Length
     * @return {@link ErrorCode#OK}, or the rule broken
     */
    public static ErrorCode validate(final RequestDecoder request, final long lastRequestId, final int maxKeys, final int namespaceCount,
                                     final int maxMessageLength)
    {
        final int length = request.limit();
        if (length < RequestDescriptor.HEADER_LENGTH)
        {
            return ErrorCode.MALFORMED;
        }
        if (length > maxMessageLength)
        {
            return ErrorCode.TOO_LONG;
        }
        final int type = request.type();
        if (!MessageType.isOperation(type))
        {
            return ErrorCode.UNKNOWN_TYPE;
        }
        final int flags = request.flags();
        if ((flags & ~RequestDescriptor.KNOWN_FLAGS) != 0
            || ((flags & RequestDescriptor.FLAG_KEYS_IN_SLOTS) != 0 && !MessageType.carriesKeys(type))
            || ((flags & RequestDescriptor.FLAG_BACKUP) != 0 && type != MessageType.COMMIT_AND_RELEASE))
        {
            return ErrorCode.MALFORMED;
        }
        final int first = request.firstSlot();
        final int count = request.count();
        if (first < 0 || count < 0 || (long)first + count > maxKeys || (MessageType.isSlotless(type) && (first != 0 || count != 0)))
        {
            return ErrorCode.SLOT_RANGE;
        }
        final long expected = type == MessageType.REGISTER_KV ? registerLength(request) : RequestDescriptor.expectedLength(type, count, flags);
        if (request.length() != length || expected != length || !reservedZero(request, type))
        {
            return ErrorCode.MALFORMED;
        }
        if (Long.compareUnsigned(request.requestId(), lastRequestId) <= 0)
        {
            return ErrorCode.STALE_REQUEST_ID;
        }
        if (request.namespaceIndex() >= Math.max(1, namespaceCount))
        {
            return ErrorCode.NAMESPACE_DENIED;
        }
        return ErrorCode.OK;
    }

    /**
     * @param request a request that {@link #validate} accepted
     * @return whether, for a LOOKUP_AND_LOCK, its Reserve Limit is {@link RequestDescriptor#RESERVE_ALL} or
     *         within {@code 0..Count} (always true for another Type)
     */
    public static boolean reserveLimitValid(final RequestDecoder request)
    {
        if (request.type() != MessageType.LOOKUP_AND_LOCK)
        {
            return true;
        }
        final int limit = request.reserveLimit();
        return limit >= RequestDescriptor.RESERVE_ALL && limit <= request.count();
    }

    /** Every Reserved field of the record is 0: a client that sends anything else there speaks a protocol this engine does not. */
    private static boolean reservedZero(final RequestDecoder request, final int type)
    {
        if (type != MessageType.LOOKUP_AND_LOCK && request.intAt(RequestDescriptor.RESERVED_OFFSET) != 0)
        {
            return false;
        }
        if (type == MessageType.REGISTER_KV)
        {
            return request.shortAt(DeviceRequestDescriptor.ARRANGEMENT_OFFSET + 2) == 0
                && request.intAt(DeviceRequestDescriptor.ALLOCATION_COUNT_OFFSET + 4) == 0;
        }
        if (type == MessageType.DEVICE_LOAD || type == MessageType.DEVICE_SAVE)
        {
            return request.intAt(DeviceRequestDescriptor.LAYOUT_ID_OFFSET + 4) == 0;
        }
        return true;
    }

    /** The Length a REGISTER_KV must have for the Allocation Count its body names, or -1 for a count out of range. */
    private static long registerLength(final RequestDecoder request)
    {
        final int allocations = request.allocationCount();
        return allocations < 0 || allocations > DeviceRequestDescriptor.MAX_ALLOCATIONS ? -1 : DeviceRequestDescriptor.registerLength(allocations);
    }
}
