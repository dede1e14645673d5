package io.kvtier.tier.mooncake;

/**
 * The Mooncake Store cannot be used: the library is missing, of the wrong version or fails to load,
 * or the master cannot be reached. The message names what was looked for and how to fix it.
 */
public final class MooncakeUnavailableException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param message what is wrong and what to install or set
     */
    public MooncakeUnavailableException(final String message)
    {
        super(message);
    }

    /**
     * @param message what is wrong and what to install or set
     * @param cause   the underlying failure
     */
    public MooncakeUnavailableException(final String message, final Throwable cause)
    {
        super(message, cause);
    }
}
