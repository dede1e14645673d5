package io.kvtier.tier.support;

import io.kvtier.spi.ConfigValues;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierConfigException;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * One setting of a tier, {@code tier.<name>.<key>}, declared once: its key, its type, its default, what
 * it allows and one line of documentation, in the style of the engine's own settings. Reading it from a
 * {@link TierConfig} parses and validates it, and every error names the qualified key, the value and
 * what is allowed; {@link #table} renders the declarations as the settings table of the tier's docs.
 *
 * <pre>{@code
 * static final TierSetting<Integer> IO_THREADS = TierSetting.integer("io-threads")
 *     .byDefault(2)
 *     .range(1, 64)
 *     .documented("worker threads doing the file I/O");
 * }</pre>
 *
 * @param <T> the type of the value
 */
public final class TierSetting<T>
{
    /** Parses the text of a value; throws {@link IllegalArgumentException} when it is not one. */
    @FunctionalInterface
    public interface Parser<T>
    {
        /**
         * @param text the value as written, trimmed
         * @return the value
         */
        T parse(String text);
    }

    private final String key;
    private final Parser<T> parser;
    private final String syntax;
    private final T defaultValue;
    private final String defaultText;
    private final Predicate<T> rule;
    private final String allowed;
    private final String parseAllowed;
    private final String meaning;

    private TierSetting(final Builder<T> b, final String meaning)
    {
        this.key = b.key;
        this.parser = b.parser;
        this.syntax = b.syntax;
        this.defaultValue = b.defaultValue;
        this.defaultText = b.defaultText;
        this.rule = b.rule;
        this.allowed = b.allowed;
        this.parseAllowed = b.parseAllowed;
        this.meaning = meaning;
    }

    /**
     * @param key the key, without {@code tier.<name>.}
     * @return a size setting: bytes with an optional unit
     */
    public static Builder<Long> size(final String key)
    {
        return new Builder<>(key, ConfigValues::parseSize, ConfigValues.SIZE_SYNTAX, ConfigValues::formatSize);
    }

    /**
     * @param key the key
     * @return a duration setting
     */
    public static Builder<Duration> duration(final String key)
    {
        return new Builder<>(key, ConfigValues::parseDuration, ConfigValues.DURATION_SYNTAX, TierSetting::formatDuration);
    }

    /**
     * @param key the key
     * @return a whole-number setting
     */
    public static Builder<Integer> integer(final String key)
    {
        return new Builder<>(key, text -> Integer.parseInt(text), "a whole number", String::valueOf);
    }

    /**
     * @param key the key
     * @return a fraction setting, within [0, 1], written as 0.9 or 90%
     */
    public static Builder<Double> ratio(final String key)
    {
        return new Builder<>(key, ConfigValues::parseRatio, "a fraction between 0 and 1 such as 0.9, or a percentage such as 90%",
            String::valueOf);
    }

    /**
     * @param key the key
     * @return a flag
     */
    public static Builder<Boolean> bool(final String key)
    {
        return new Builder<>(key, ConfigValues::parseBoolean, "true or false", String::valueOf);
    }

    /**
     * @param key the key
     * @return a text setting, taken as written (trimmed)
     */
    public static Builder<String> string(final String key)
    {
        return new Builder<>(key, text -> text, "text", text -> text);
    }

    /**
     * @param key the key
     * @return a filesystem path
     */
    public static Builder<Path> path(final String key)
    {
        return new Builder<>(key, text ->
        {
            try
            {
                return Path.of(text);
            }
            catch (final InvalidPathException ex)
            {
                throw new IllegalArgumentException(ex.getMessage(), ex);
            }
        }, "a filesystem path", Path::toString);
    }

    /**
     * @param key    the key
     * @param values the choices; the setting is written as a constant's name in lower case with dashes (any case is accepted)
     * @param <E>    the enum
     * @return a setting choosing one of them
     */
    public static <E extends Enum<E>> Builder<E> choice(final String key, final Class<E> values)
    {
        final List<String> names = java.util.Arrays.stream(values.getEnumConstants()).map(TierSetting::settingName).toList();
        return new Builder<>(key, text ->
        {
            for (final E value : values.getEnumConstants())
            {
                if (settingName(value).equalsIgnoreCase(text))
                {
                    return value;
                }
            }
            throw new IllegalArgumentException("not one of " + names);
        }, names.size() == 1 ? names.getFirst() : String.join(", ", names.subList(0, names.size() - 1)) + " or " + names.getLast(),
            TierSetting::settingName);
    }

    /**
     * @param value an enum constant
     * @return how a setting writes it: {@code IO_URING} as {@code io-uring}
     */
    public static String settingName(final Enum<?> value)
    {
        return value.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** @return the key, without {@code tier.<name>.} */
    public String key()
    {
        return key;
    }

    /** @return the default as the docs show it, or {@code required} */
    public String defaultText()
    {
        return defaultText;
    }

    /** @return what the setting allows, as error messages say it */
    public String allowed()
    {
        return allowed;
    }

    /** @return the setting's documentation */
    public String meaning()
    {
        return meaning;
    }

    /** @return whether the operator must set it */
    public boolean isRequired()
    {
        return defaultValue == null;
    }

    /**
     * @param config the tier's settings
     * @return the value the operator set, validated, or the default
     * @throws TierConfigException naming {@code tier.<name>.<key>}, the value and what is allowed, when
     *                             the value is not one, or the setting is required and missing
     */
    public T get(final TierConfig config)
    {
        if (!config.has(key))
        {
            if (defaultValue == null)
            {
                throw new TierConfigException(config.qualified(key), "missing setting " + config.qualified(key) + ": expected " + allowed);
            }
            return defaultValue;
        }
        final String text = config.string(key);
        final T value;
        try
        {
            value = parser.parse(text);
        }
        catch (final IllegalArgumentException ex)
        {
            throw config.invalid(key, text, parseAllowed, ex);
        }
        if (!rule.test(value))
        {
            throw config.invalid(key, text, allowed, null);
        }
        return value;
    }

    /**
     * @param settings every setting of a tier
     * @return their keys, for {@link TierConfig#rejectUnknown}
     */
    public static Set<String> keys(final List<TierSetting<?>> settings)
    {
        final Set<String> keys = new LinkedHashSet<>();
        for (final TierSetting<?> setting : settings)
        {
            if (!keys.add(setting.key))
            {
                throw new IllegalArgumentException("setting " + setting.key + " is declared twice");
            }
        }
        return keys;
    }

    /**
     * @param settings every setting of a tier, in the order the docs list them
     * @return the Markdown table of the tier's docs: key, default, meaning
     */
    public static String table(final List<TierSetting<?>> settings)
    {
        final StringBuilder table = new StringBuilder("| key | default | meaning |\n|---|---|---|\n");
        for (final TierSetting<?> setting : settings)
        {
            table.append("| `").append(setting.key).append("` | ")
                .append(setting.isRequired() ? "required" : "`" + setting.defaultText + "`").append(" | ")
                .append(setting.meaning).append(" |\n");
        }
        return table.toString();
    }

    private static String formatDuration(final Duration duration)
    {
        if (duration.toNanos() % 1_000_000_000L != 0)
        {
            return duration.toMillis() + "ms";
        }
        final long seconds = duration.toSeconds();
        if (seconds != 0 && seconds % 3600 == 0)
        {
            return seconds / 3600 + "h";
        }
        if (seconds != 0 && seconds % 60 == 0)
        {
            return seconds / 60 + "m";
        }
        return seconds + "s";
    }

    /**
     * The declaration in progress.
     *
     * @param <T> the type of the value
     */
    public static final class Builder<T>
    {
        private final String key;
        private final Parser<T> parser;
        private final String syntax;
        private final Function<T, String> format;
        private T defaultValue;
        private String defaultText = "required";
        private Predicate<T> rule = value -> true;
        private String allowed;
        private String parseAllowed;

        private Builder(final String key, final Parser<T> parser, final String syntax, final Function<T, String> format)
        {
            this.key = Objects.requireNonNull(key, "key");
            this.parser = parser;
            this.syntax = syntax;
            this.format = format;
            this.allowed = syntax;
            this.parseAllowed = syntax;
        }

        /**
         * @param value the value when the operator sets none
         * @return this
         */
        public Builder<T> byDefault(final T value)
        {
            return byDefault(value, format.apply(value));
        }

        /**
         * @param value the value when the operator sets none
         * @param text  how the docs say it, for a default that is not a plain value ({@code unbounded}, {@code 8 × io-threads})
         * @return this
         */
        public Builder<T> byDefault(final T value, final String text)
        {
            this.defaultValue = Objects.requireNonNull(value, "value");
            this.defaultText = text;
            return this;
        }

        /**
         * @param min the smallest allowed value
         * @param max the largest allowed value
         * @param <C> the comparable type
         * @return this, allowing only {@code [min, max]}
         */
        @SuppressWarnings("unchecked")
        public <C extends Comparable<C>> Builder<T> range(final C min, final C max)
        {
            final String from = format.apply((T)min);
            final String to = max instanceof Long l && l == Long.MAX_VALUE ? "unbounded" : format.apply((T)max);
            rule(syntax + " from " + from + " to " + to, value -> ((C)value).compareTo(min) >= 0 && ((C)value).compareTo(max) <= 0);
            // A value that does not parse is told the range too: "a whole number from 1 to 64".
            parseAllowed = allowed;
            return this;
        }

        /**
         * A rule past the syntax and range; a value that does not parse is still told the syntax (and range).
         *
         * @param allowedText what the rule allows, as the error message says it (replaces the syntax)
         * @param test        the rule; values failing it are rejected
         * @return this
         */
        public Builder<T> rule(final String allowedText, final Predicate<T> test)
        {
            final Predicate<T> before = rule;
            this.rule = value -> before.test(value) && test.test(value);
            this.allowed = allowedText;
            return this;
        }

        /**
         * @param meaning one line for the docs' table
         * @return the setting
         */
        public TierSetting<T> documented(final String meaning)
        {
            return new TierSetting<>(this, meaning);
        }
    }
}
