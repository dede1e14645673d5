package io.kvtier.engine.config;

/**
 * A setting is missing, unknown, malformed or does not fit. The message names the key, the value
 * and what is allowed (and the file and line when it came from a file).
 */
public final class ConfigException extends IllegalArgumentException
{
    private static final long serialVersionUID = 1L;

    private final String key;

    /**
     * @param key     the setting at fault, or null for a syntax error
     * @param message the whole message
     */
    public ConfigException(final String key, final String message)
    {
        super(message);
        this.key = key;
    }

    /**
     * @param key     the setting at fault
     * @param message the whole message
     * @param cause   what went wrong underneath
     */
    public ConfigException(final String key, final String message, final Throwable cause)
    {
        super(message, cause);
        this.key = key;
    }

    /** @return the setting at fault, or null for a syntax error */
    public String key()
    {
        return key;
    }
}
