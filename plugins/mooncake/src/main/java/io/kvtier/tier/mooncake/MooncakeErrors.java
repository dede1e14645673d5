package io.kvtier.tier.mooncake;

import io.kvtier.spi.TierStatus;

/**
 * Mooncake Store's {@code ErrorCode} values (mooncake-store/include/types.h) as the C ABI returns
 * them, negated into ints, and what each means for one key of a batch.
 */
final class MooncakeErrors
{
    static final int INTERNAL_ERROR = -1;
    static final int BUFFER_OVERFLOW = -10;
    static final int SEGMENT_NOT_FOUND = -101;
    static final int NO_AVAILABLE_HANDLE = -200;
    static final int INVALID_KEY = -400;
    static final int WRITE_FAIL = -500;
    static final int INVALID_PARAMS = -600;
    static final int INVALID_WRITE = -700;
    static final int INVALID_READ = -701;
    static final int REPLICA_IS_NOT_READY = -703;
    static final int OBJECT_NOT_FOUND = -704;
    static final int OBJECT_ALREADY_EXISTS = -705;
    static final int OBJECT_HAS_LEASE = -706;
    static final int LEASE_EXPIRED = -707;
    static final int REPLICA_NOT_FOUND = -710;
    static final int REPLICA_IS_GONE = -712;
    static final int OBJECT_REPLICA_BUSY = -714;
    static final int TRANSFER_FAIL = -800;
    static final int CHECKSUM_MISMATCH = -801;
    static final int RPC_FAIL = -900;
    static final int RPC_TIMEOUT = -901;
    static final int TENANT_QUOTA_EXCEEDED = -1700;

    private MooncakeErrors()
    {
    }

    /**
     * @param code a negative return code
     * @return its ErrorCode name, for logs
     */
    static String name(final long code)
    {
        return switch ((int)code)
        {
            case INTERNAL_ERROR -> "INTERNAL_ERROR";
            case BUFFER_OVERFLOW -> "BUFFER_OVERFLOW";
            case SEGMENT_NOT_FOUND -> "SEGMENT_NOT_FOUND";
            case NO_AVAILABLE_HANDLE -> "NO_AVAILABLE_HANDLE";
            case INVALID_KEY -> "INVALID_KEY";
            case WRITE_FAIL -> "WRITE_FAIL";
            case INVALID_PARAMS -> "INVALID_PARAMS";
            case INVALID_WRITE -> "INVALID_WRITE";
            case INVALID_READ -> "INVALID_READ";
            case REPLICA_IS_NOT_READY -> "REPLICA_IS_NOT_READY";
            case OBJECT_NOT_FOUND -> "OBJECT_NOT_FOUND";
            case OBJECT_ALREADY_EXISTS -> "OBJECT_ALREADY_EXISTS";
            case OBJECT_HAS_LEASE -> "OBJECT_HAS_LEASE";
            case LEASE_EXPIRED -> "LEASE_EXPIRED";
            case REPLICA_NOT_FOUND -> "REPLICA_NOT_FOUND";
            case REPLICA_IS_GONE -> "REPLICA_IS_GONE";
            case OBJECT_REPLICA_BUSY -> "OBJECT_REPLICA_BUSY";
            case TRANSFER_FAIL -> "TRANSFER_FAIL";
            case CHECKSUM_MISMATCH -> "CHECKSUM_MISMATCH";
            case RPC_FAIL -> "RPC_FAIL";
            case RPC_TIMEOUT -> "RPC_TIMEOUT";
            case TENANT_QUOTA_EXCEEDED -> "TENANT_QUOTA_EXCEEDED";
            default -> "error";
        } + " (" + code + ")";
    }

    /**
     * A put the store refused for want of room: the master found no segment with space (eviction
     * frees some at its high watermark, so a later attempt may succeed), or the cluster has no
     * segment at all.
     *
     * @param code a negative return code of a put
     * @return whether it says the store is full
     */
    static boolean isFull(final long code)
    {
        return code == NO_AVAILABLE_HANDLE || code == BUFFER_OVERFLOW || code == SEGMENT_NOT_FOUND || code == TENANT_QUOTA_EXCEEDED;
    }

    /**
     * @param code a negative return code of a get
     * @return whether the object is simply not there (never written, removed, evicted, still being
     *         written, or its lease ran out mid-transfer): a miss, never an error
     */
    static boolean isMiss(final long code)
    {
        return code == OBJECT_NOT_FOUND || code == REPLICA_NOT_FOUND || code == REPLICA_IS_GONE || code == REPLICA_IS_NOT_READY
            || code == LEASE_EXPIRED;
    }

    /**
     * @param code a negative return code that is neither a miss nor a full store
     * @return the status of the key
     */
    static TierStatus failure(final long code)
    {
        return switch ((int)code)
        {
            case CHECKSUM_MISMATCH -> TierStatus.CORRUPT;
            case RPC_TIMEOUT -> TierStatus.TIMEOUT;
            case INVALID_KEY, INVALID_PARAMS, INVALID_WRITE, INVALID_READ -> TierStatus.REJECTED;
            default -> TierStatus.IO_ERROR;
        };
    }
}
