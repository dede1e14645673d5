package io.kvtier.spi;

/**
 * The outcome of one key in a {@link TierBatch}. One key's failure never fails its batch: every key
 * gets its own status.
 */
public enum TierStatus
{
    /** The operation succeeded; for {@code exists}, the object is present. */
    OK,
    /** No object is stored under the key. */
    NOT_FOUND,
    /**
     * An object is stored but cannot be a whole page: its size differs from the segment, it is torn,
     * or the tier's own integrity check failed. The engine counts it and treats it as a miss.
     */
    CORRUPT,
    /** The backend failed (I/O error, lost connection, refused request). */
    IO_ERROR,
    /** A write did not fit: the tier is full and could not make room. */
    NO_SPACE,
    /** The backend did not answer in time. */
    TIMEOUT,
    /** The tier was closed before or while the key was processed. */
    CLOSED,
    /** The tier does not accept this request (for example a write to a read-only tier). */
    REJECTED;

    /** @return whether the operation succeeded for the key */
    public boolean isOk()
    {
        return this == OK;
    }
}
