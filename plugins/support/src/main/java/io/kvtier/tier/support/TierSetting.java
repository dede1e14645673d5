package io.kvtier.tier.support;

import io.kvtier.spi.ConfigValues;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierConfigException;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * One setting of a tier, {@code tier.<name>.<key>}, declared once: its key, its type, its default, what
 * it allows and its documentation, in the style of the engine's own settings. Reading it from a
 * {@link TierConfig} parses and validates it, and every error names the qualified key, the value and
 * what is allowed; {@link #keys} gives the keys for {@link TierConfig#rejectUnknown}, and {@link #table}
 * renders the declarations as the settings table of the tier's docs ({@link SettingsTable} keeps the
 * file in step). A rule that involves another setting or the engine (a water level below another, a
 * directory that must exist) stays in the tier's code; its declaration says it in a {@linkplain
 * Builder#note note}, so the docs still show it.
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

    /** Where the value comes from when the operator sets none. */
    private enum Fallback
    {
        /** Nowhere: the setting is required. */
        REQUIRED,
        /** The declared default. */
        VALUE,
        /** The tier computes it from other settings or its surroundings, as the declaration's text says. */
        DERIVED
    }

    private final String key;
    private final Parser<T> parser;
    private final boolean verbatim;
    private final Fallback fallback;
    private final T defaultValue;
    private final String defaultText;
    private final Predicate<T> rule;
    private final String allowed;
    private final String parseAllowed;
    private final List<String> notes;
    private final String meaning;

    private TierSetting(final Builder<T> b, final String meaning)
    {
        this.key = b.key;
        this.parser = b.parser;
        this.verbatim = b.verbatim;
        this.fallback = b.fallback;
        this.defaultValue = b.defaultValue;
        this.defaultText = b.defaultText;
        this.rule = b.rule;
        this.allowed = b.allowed;
        this.parseAllowed = b.parseAllowed;
        this.notes = List.copyOf(b.notes);
        this.meaning = Objects.requireNonNull(meaning, "meaning");
    }

    /**
     * @param key the key, without {@code tier.<name>.}
     * @return a size setting: bytes with an optional unit
     */
    public static Builder<Long> size(final String key)
    {
        return new Builder<>(key, ConfigValues::parseSize, "a size", ConfigValues.SIZE_SYNTAX, ConfigValues::formatSize);
    }

    /**
     * @param key the key
     * @return a duration setting
     */
    public static Builder<Duration> duration(final String key)
    {
        return new Builder<>(key, ConfigValues::parseDuration, "a duration", ConfigValues.DURATION_SYNTAX, TierSetting::formatDuration);
    }

    /**
     * @param key the key
     * @return a whole-number setting
     */
    public static Builder<Integer> integer(final String key)
    {
        return new Builder<>(key, text -> Integer.parseInt(text), "a whole number", "a whole number", String::valueOf);
    }

    /**
     * @param key the key
     * @return a fraction setting, within [0, 1], written as 0.9 or 90%
     */
    public static Builder<Double> ratio(final String key)
    {
        return new Builder<>(key, ConfigValues::parseRatio, "a fraction",
            "a fraction between 0 and 1 such as 0.9, or a percentage such as 90%", String::valueOf);
    }

    /**
     * @param key the key
     * @return a flag
     */
    public static Builder<Boolean> bool(final String key)
    {
        return new Builder<>(key, ConfigValues::parseBoolean, "true or false", "true or false", String::valueOf);
    }

    /**
     * @param key the key
     * @return a text setting, taken as written (trimmed)
     */
    public static Builder<String> string(final String key)
    {
        return new Builder<>(key, text -> text, "text", "text", text -> text);
    }

    /**
     * @param key the key
     * @return a text setting taken exactly as written: not trimmed, and possibly empty
     */
    public static Builder<String> verbatim(final String key)
    {
        final Builder<String> builder = new Builder<>(key, text -> text, "text", "text", text -> text);
        builder.verbatim = true;
        return builder;
    }

    /**
     * A setting of the tier's own type.
     *
     * @param key    the key
     * @param parser parses the trimmed text; throws {@link IllegalArgumentException} when it is not a value
     * @param syntax what a value looks like, as error messages say it
     * @param format writes a value as the docs show it
     * @param <T>    the type of the value
     * @return the declaration in progress
     */
    public static <T> Builder<T> custom(final String key, final Parser<T> parser, final String syntax, final Function<T, String> format)
    {
        return new Builder<>(key, parser, syntax, syntax, format);
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
        }, "a filesystem path", "a filesystem path", Path::toString);
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
        final String choices = names.size() == 1 ? names.getFirst() : String.join(", ", names.subList(0, names.size() - 1)) + " or " + names.getLast();
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
        }, choices, choices, TierSetting::settingName);
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

    /** @return what the setting allows and what the tier checks against other settings, as the docs say it */
    public String documentedAllowed()
    {
        return notes.isEmpty() ? allowed : allowed + "; " + String.join("; ", notes);
    }

    /** @return the setting's documentation */
    public String meaning()
    {
        return meaning;
    }

    /** @return whether the operator must set it */
    public boolean isRequired()
    {
        return fallback == Fallback.REQUIRED;
    }

    /** @return whether the tier computes the default, so {@link #get(TierConfig, Supplier)} reads it */
    public boolean isDerived()
    {
        return fallback == Fallback.DERIVED;
    }

    /**
     * @param config the tier's settings
     * @return the value the operator set, validated, or the default
     * @throws TierConfigException   naming {@code tier.<name>.<key>}, the value and what is allowed, when
     *                               the value is not one, or the setting is required and missing
     * @throws IllegalStateException when the default is derived: the tier must supply it
     */
    public T get(final TierConfig config)
    {
        if (fallback == Fallback.DERIVED)
        {
            throw new IllegalStateException("setting " + key + " has a derived default: read it with get(config, derived)");
        }
        return find(config).orElseGet(() ->
        {
            if (fallback == Fallback.REQUIRED)
            {
                throw new TierConfigException(config.qualified(key), "missing setting " + config.qualified(key) + ": expected " + allowed);
            }
            return defaultValue;
        });
    }

    /**
     * @param config  the tier's settings
     * @param derived computes the default the declaration describes, when the operator sets none
     * @return the value the operator set, validated, or the derived default
     * @throws TierConfigException naming {@code tier.<name>.<key>}, the value and what is allowed
     */
    public T get(final TierConfig config, final Supplier<T> derived)
    {
        return find(config).orElseGet(derived);
    }

    /**
     * @param config the tier's settings
     * @return the value the operator set, validated, or empty when it is not set
     * @throws TierConfigException naming {@code tier.<name>.<key>}, the value and what is allowed
     */
    public Optional<T> find(final TierConfig config)
    {
        if (!config.has(key))
        {
            return Optional.empty();
        }
        final String text = verbatim ? config.values().get(key) : config.string(key);
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
        return Optional.of(value);
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
     * @return the Markdown table of the tier's docs: key, default, what is allowed, meaning
     */
    public static String table(final List<TierSetting<?>> settings)
    {
        final StringBuilder table = new StringBuilder("| key | default | allowed | meaning |\n|---|---|---|---|\n");
        for (final TierSetting<?> setting : settings)
        {
            table.append("| `").append(setting.key).append("` | ").append(cell(setting.documentedDefault())).append(" | ")
                .append(cell(setting.documentedAllowed())).append(" | ").append(cell(setting.meaning)).append(" |\n");
        }
        return table.toString();
    }

    private String documentedDefault()
    {
        // A value is code, shown as such; a derived default is a phrase written in Markdown by its declaration.
        return switch (fallback)
        {
            case REQUIRED -> "required";
            case VALUE -> defaultText.isEmpty() ? "empty" : "`" + defaultText + "`";
            case DERIVED -> defaultText;
        };
    }

    private static String cell(final String text)
    {
        return text.replace("|", "\\|").replace("\n", " ");
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
        private final String noun;
        private final String syntax;
        private final Function<T, String> format;
        private final List<String> notes = new ArrayList<>();
        private boolean verbatim;
        private Fallback fallback = Fallback.REQUIRED;
        private T defaultValue;
        private String defaultText = "required";
        private Predicate<T> rule = value -> true;
        private String allowed;
        private String parseAllowed;

        private Builder(final String key, final Parser<T> parser, final String noun, final String syntax, final Function<T, String> format)
        {
            this.key = Objects.requireNonNull(key, "key");
            this.parser = parser;
            this.noun = noun;
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
            this.fallback = Fallback.VALUE;
            this.defaultValue = Objects.requireNonNull(value, "value");
            this.defaultText = text;
            return this;
        }

        /**
         * The default is not one value: the tier computes it (from other settings, the engine or the
         * environment) and reads the setting with {@link TierSetting#get(TierConfig, Supplier)}.
         *
         * @param text how the docs say it, in Markdown: {@code `8 × io-threads`}, {@code see above}
         * @return this
         */
        public Builder<T> derivedDefault(final String text)
        {
            this.fallback = Fallback.DERIVED;
            this.defaultValue = null;
            this.defaultText = Objects.requireNonNull(text, "text");
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
            rule(noun + " from " + from + " to " + to, value -> ((C)value).compareTo(min) >= 0 && ((C)value).compareTo(max) <= 0);
            if (noun.equals(syntax))
            {
                // A value that does not parse is told the range too: "a whole number from 1 to 64". A size or a
                // duration is told its syntax instead, since the units are what it most likely got wrong.
                parseAllowed = allowed;
            }
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
         * A rule the tier checks in its own code, because it involves another setting or the engine
         * ({@code below evict-high}, {@code an existing directory}); the docs' allowed column shows it.
         *
         * @param text the rule, as the docs say it
         * @return this
         */
        public Builder<T> note(final String text)
        {
            notes.add(Objects.requireNonNull(text, "text"));
            return this;
        }

        /**
         * @param meaning the docs' description, in Markdown on one line
         * @return the setting
         */
        public TierSetting<T> documented(final String meaning)
        {
            return new TierSetting<>(this, meaning);
        }
    }
}
