package io.kvtier.nativeaccess.uring;

/**
 * A ring could not be set up, mapped or registered: carries the negative errno the kernel returned.
 */
public final class UringException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final int errno;

    /**
     * @param message what failed and why
     * @param errno   the error number, positive
     */
    public UringException(final String message, final int errno)
    {
        super(message);
        this.errno = errno;
    }

    /** @return the error number, positive */
    public int errno()
    {
        return errno;
    }
}
