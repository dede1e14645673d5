package io.kvtier.spi;

/**
 * A tier setting is missing, unknown or out of range. The message names the fully qualified key
 * ({@code tier.<name>.<key>}), the value given and what is allowed.
 */
public final class TierConfigException extends IllegalArgumentException
{
    private static final long serialVersionUID = 1L;

    private final String key;

    /**
     * @param key     the fully qualified key at fault
     * @param message the whole message, which already names the key
     */
    public TierConfigException(final String key, final String message)
    {
        super(message);
        this.key = key;
    }

    /**
     * @param key     the fully qualified key at fault
     * @param message the whole message, which already names the key
     * @param cause   what went wrong underneath
     */
    public TierConfigException(final String key, final String message, final Throwable cause)
    {
        super(message, cause);
        this.key = key;
    }

    /** @return the fully qualified key at fault */
    public String key()
    {
        return key;
    }
}
