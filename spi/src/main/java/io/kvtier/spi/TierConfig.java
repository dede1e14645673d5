package io.kvtier.spi;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The settings of one tier, as the operator wrote them under {@code tier.<name>.}, with typed
 * accessors whose errors name the fully qualified key, the value and what is allowed.
 */
public final class TierConfig
{
    private final String tierName;
    private final Map<String, String> values;

    /**
     * @param tierName the tier's configured name, used to qualify keys in messages
     * @param values   the settings without the {@code tier.<name>.} prefix
     */
    public TierConfig(final String tierName, final Map<String, String> values)
    {
        this.tierName = tierName;
        this.values = Collections.unmodifiableMap(new LinkedHashMap<>(values));
    }

    /** @return the tier's configured name */
    public String tierName()
    {
        return tierName;
    }

    /** @return every setting, without the prefix */
    public Map<String, String> values()
    {
        return values;
    }

    /**
     * @param key a setting without the prefix
     * @return the key as the operator wrote it, {@code tier.<name>.<key>}
     */
    public String qualified(final String key)
    {
        return "tier." + tierName + "." + key;
    }

    /**
     * Rejects settings the tier does not know, so a typo fails the start instead of being ignored.
     *
     * @param known every key the tier accepts
     * @throws TierConfigException naming the first unknown key and listing the known ones
     */
    public void rejectUnknown(final Set<String> known)
    {
        for (final String key : values.keySet())
        {
            if (!known.contains(key))
            {
                throw new TierConfigException(qualified(key),
                    "unknown setting " + qualified(key) + ": this tier accepts " + new TreeSet<>(known));
            }
        }
    }

    /**
     * @param key a setting
     * @return whether the operator set it
     */
    public boolean has(final String key)
    {
        return values.containsKey(key);
    }

    /**
     * @param key a required setting
     * @return its value, trimmed
     * @throws TierConfigException if it is missing or blank
     */
    public String string(final String key)
    {
        final String value = values.get(key);
        if (value == null || value.isBlank())
        {
            throw new TierConfigException(qualified(key), "missing setting " + qualified(key));
        }
        return value.trim();
    }

    /**
     * @param key          a setting
     * @param defaultValue used when the setting is absent
     * @return its value, trimmed, or the default
     */
    public String string(final String key, final String defaultValue)
    {
        return values.containsKey(key) ? string(key) : defaultValue;
    }

    /**
     * @param key a required setting holding a path
     * @return the path
     * @throws TierConfigException if it is missing or not a valid path
     */
    public Path path(final String key)
    {
        final String text = string(key);
        try
        {
            return Path.of(text);
        }
        catch (final InvalidPathException ex)
        {
            throw invalid(key, text, "a filesystem path", ex);
        }
    }

    /**
     * @param key          a setting holding a size
     * @param defaultValue used when the setting is absent
     * @param min          the smallest allowed size
     * @param max          the largest allowed size
     * @return the size in bytes
     * @throws TierConfigException if it is not a size or is out of range
     */
    public long size(final String key, final long defaultValue, final long min, final long max)
    {
        if (!values.containsKey(key))
        {
            return defaultValue;
        }
        final String text = string(key);
        final long size;
        try
        {
            size = ConfigValues.parseSize(text);
        }
        catch (final IllegalArgumentException ex)
        {
            throw invalid(key, text, ConfigValues.SIZE_SYNTAX, ex);
        }
        if (size < min || size > max)
        {
            throw invalid(key, text, "a size from " + ConfigValues.formatSize(min) + " to "
                + (max == Long.MAX_VALUE ? "unbounded" : ConfigValues.formatSize(max)), null);
        }
        return size;
    }

    /**
     * @param key          a setting holding a duration
     * @param defaultValue used when the setting is absent
     * @return the duration
     * @throws TierConfigException if it is not a duration
     */
    public Duration duration(final String key, final Duration defaultValue)
    {
        if (!values.containsKey(key))
        {
            return defaultValue;
        }
        final String text = string(key);
        try
        {
            return ConfigValues.parseDuration(text);
        }
        catch (final IllegalArgumentException ex)
        {
            throw invalid(key, text, ConfigValues.DURATION_SYNTAX, ex);
        }
    }

    /**
     * @param key          a setting holding a whole number
     * @param defaultValue used when the setting is absent
     * @param min          the smallest allowed value
     * @param max          the largest allowed value
     * @return the number
     * @throws TierConfigException if it is not a whole number in range
     */
    public int integer(final String key, final int defaultValue, final int min, final int max)
    {
        if (!values.containsKey(key))
        {
            return defaultValue;
        }
        final String text = string(key);
        final int value;
        try
        {
            value = Integer.parseInt(text);
        }
        catch (final NumberFormatException ex)
        {
            throw invalid(key, text, "a whole number from " + min + " to " + max, ex);
        }
        if (value < min || value > max)
        {
            throw invalid(key, text, "a whole number from " + min + " to " + max, null);
        }
        return value;
    }

    /**
     * @param key          a setting holding a fraction or percentage
     * @param defaultValue used when the setting is absent
     * @return the fraction within [0, 1]
     * @throws TierConfigException if it is not a fraction within [0, 1]
     */
    public double ratio(final String key, final double defaultValue)
    {
        if (!values.containsKey(key))
        {
            return defaultValue;
        }
        final String text = string(key);
        try
        {
            return ConfigValues.parseRatio(text);
        }
        catch (final IllegalArgumentException ex)
        {
            throw invalid(key, text, "a fraction between 0 and 1 such as 0.9, or a percentage such as 90%", ex);
        }
    }

    /**
     * @param key          a setting holding a flag
     * @param defaultValue used when the setting is absent
     * @return the flag
     * @throws TierConfigException if it is not true or false
     */
    public boolean bool(final String key, final boolean defaultValue)
    {
        if (!values.containsKey(key))
        {
            return defaultValue;
        }
        final String text = string(key);
        try
        {
            return ConfigValues.parseBoolean(text);
        }
        catch (final IllegalArgumentException ex)
        {
            throw invalid(key, text, "true or false", ex);
        }
    }

    /**
     * Builds the standard error for a value the tier cannot use.
     *
     * @param key     the setting, without the prefix
     * @param value   the value the operator gave
     * @param allowed what would have been accepted
     * @param cause   the underlying error, or null
     * @return an exception whose message names the key, the value and what is allowed
     */
    public TierConfigException invalid(final String key, final String value, final String allowed, final Throwable cause)
    {
        return new TierConfigException(qualified(key),
            "invalid " + qualified(key) + " = \"" + value + "\": expected " + allowed, cause);
    }

    @Override
    public String toString()
    {
        return "TierConfig[" + tierName + ": " + values + "]";
    }
}
