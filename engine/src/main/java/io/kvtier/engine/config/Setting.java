package io.kvtier.engine.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * One engine setting, declared once: its key, its type, its default (a value, or derived from other
 * settings), the range it allows, and one line of documentation. Parsing, validation messages, the
 * default and the table in {@code docs/config.md} all come from this declaration; the declarations
 * themselves are in {@link EngineSettings}.
 *
 * <pre>{@code
 * public static final Setting<Long> POOL_PAGE_SIZE = Setting.size("pool.page-size")
 *     .byDefault(256 * KIB)
 *     .range(4 * KIB, GIB)
 *     .rule("a multiple of 4KiB", size -> size % (4 * KIB) == 0)
 *     .documented("payload bytes per page (one page of KV for one key)");
 * }</pre>
 *
 * @param <T> the type of the value
 */
public final class Setting<T>
{
    /** Gives the values of other settings to a derived default or bound. */
    public interface Lookup
    {
        /**
         * @param setting another setting
         * @param <V>     its type
         * @return its validated value
         * @throws ConfigException if its value is not valid
         */
        <V> V get(Setting<V> setting);
    }

    /**
     * A value derived from other settings, with the words that document it.
     *
     * @param text  how documentation says it, e.g. {@code max(4 x pages, 65536)} or {@code session.max-keys}
     * @param value computes it from the other settings
     * @param <V>   its type
     */
    public record Derived<V>(String text, Function<Lookup, V> value)
    {
    }

    /** One end of a range: a value or a derived one, included or not. */
    private record Bound<V>(V fixed, Derived<V> derived, boolean inclusive)
    {
        V value(final Lookup lookup)
        {
            return fixed != null ? fixed : derived.value().apply(lookup);
        }
    }

    private final String key;
    private final SettingType<T> type;
    private final T defaultValue;
    private final Derived<T> derivedDefault;
    private final Bound<T> lower;
    private final Bound<T> upper;
    private final String ruleNoun;
    private final Predicate<T> rule;
    private final List<String> notes;
    private final String meaning;

    private Setting(final Builder<T> b, final String meaning)
    {
        this.key = b.key;
        this.type = b.type;
        this.defaultValue = b.defaultValue;
        this.derivedDefault = b.derivedDefault;
        this.lower = b.lower;
        this.upper = b.upper;
        this.ruleNoun = b.ruleNoun;
        this.rule = b.rule;
        this.notes = List.copyOf(b.notes);
        this.meaning = meaning;
    }

    /**
     * @param key the setting's key
     * @return a size setting: bytes, with units
     */
    public static Builder<Long> size(final String key)
    {
        return new Builder<>(key, SettingType.SIZE);
    }

    /**
     * @param key the setting's key
     * @return a duration setting
     */
    public static Builder<Duration> duration(final String key)
    {
        return new Builder<>(key, SettingType.DURATION);
    }

    /**
     * @param key the setting's key
     * @return a fraction setting, in [0, 1] unless narrowed
     */
    public static Builder<Double> fraction(final String key)
    {
        return new Builder<>(key, SettingType.FRACTION).range(0.0, 1.0);
    }

    /**
     * @param key the setting's key
     * @return a whole-number setting that fits an int
     */
    public static Builder<Integer> integer(final String key)
    {
        return new Builder<>(key, SettingType.INT);
    }

    /**
     * @param key the setting's key
     * @return a whole-number setting that fits a long
     */
    public static Builder<Long> longInteger(final String key)
    {
        return new Builder<>(key, SettingType.LONG);
    }

    /**
     * @param key the setting's key
     * @return a file-path setting
     */
    public static Builder<Path> path(final String key)
    {
        return new Builder<>(key, SettingType.PATH);
    }

    /**
     * @param key the setting's key
     * @return a true-or-false setting
     */
    public static Builder<Boolean> flag(final String key)
    {
        return new Builder<>(key, SettingType.BOOLEAN);
    }

    /**
     * @param key the setting's key
     * @return a free-text setting
     */
    public static Builder<String> text(final String key)
    {
        return new Builder<>(key, SettingType.TEXT);
    }

    /**
     * @param key the setting's key
     * @return a setting listing numeric ids
     */
    public static Builder<int[]> ids(final String key)
    {
        return new Builder<>(key, SettingType.ID_LIST);
    }

    /**
     * @param key    the setting's key
     * @param values the choices, in documentation order
     * @param name   each choice's name in settings
     * @param <E>    the enum
     * @return a setting that takes one of the choices
     */
    public static <E extends Enum<E>> Builder<E> choice(final String key, final E[] values, final Function<E, String> name)
    {
        return new Builder<>(key, SettingType.choice(values, name));
    }

    /**
     * @param key   the setting's key
     * @param names the names allowed, in documentation order, lower case
     * @return a setting that takes one of the names
     */
    public static Builder<String> oneOf(final String key, final java.util.List<String> names)
    {
        return new Builder<>(key, SettingType.oneOf(names));
    }

    /** @return the key, e.g. {@code pool.page-size} */
    public String key()
    {
        return key;
    }

    /** @return the type of the value */
    public SettingType<T> type()
    {
        return type;
    }

    /** @return one line saying what the setting does */
    public String meaning()
    {
        return meaning;
    }

    /** @return whether the default derives from other settings */
    public boolean isDerived()
    {
        return derivedDefault != null;
    }

    /** @return the default as documented: the value's text, or how it derives from other settings */
    public String defaultText()
    {
        return derivedDefault != null ? derivedDefault.text() : type.toText(defaultValue);
    }

    /** @return what the setting allows, as documented, e.g. {@code a multiple of 4KiB from 4KiB to 1GiB} */
    public String allowed()
    {
        return describe(null);
    }

    /**
     * Reads the setting.
     *
     * @param text   its text, or null when it is not set
     * @param lookup the other settings, for derived defaults and bounds
     * @return the value, or the default when the text is null
     * @throws ConfigException naming the key, the value and what is allowed
     */
    T read(final String text, final Lookup lookup)
    {
        return readAs(key, text, lookup);
    }

    /**
     * @param text a setting's text
     * @return the text without the ASCII blanks (space, tab, line ends) around it; unlike {@link String#trim()}, other
     *         control characters stay, so that a value of a NUL alone is refused naming its key, not read as empty
     */
    static String trimAsciiBlanks(final String text)
    {
        int from = 0;
        int to = text.length();
        while (from < to && isAsciiBlank(text.charAt(from)))
        {
            from++;
        }
        while (to > from && isAsciiBlank(text.charAt(to - 1)))
        {
            to--;
        }
        return text.substring(from, to);
    }

    private static boolean isAsciiBlank(final char c)
    {
        return c <= ' ' && Character.isWhitespace(c);
    }

    /**
     * Reads the value of a setting declared once for many names ({@code migration.<source>.trigger}) under
     * the key it was set with, so that an error names that key.
     *
     * @param key    the key as set, e.g. migration.nvme.trigger
     * @param text   its text, or null for the default
     * @param lookup the other settings
     * @return the value
     */
    T readAs(final String key, final String text, final Lookup lookup)
    {
        final String trimmed = text == null ? null : trimAsciiBlanks(text);
        final T value;
        if (trimmed == null)
        {
            value = derivedDefault != null ? derivedDefault.value().apply(lookup) : defaultValue;
        }
        else
        {
            try
            {
                value = Objects.requireNonNull(type.parse(trimmed));
            }
            catch (final IllegalArgumentException ex)
            {
                throw new ConfigException(key, "invalid " + key + " = \"" + trimmed + "\": expected "
                    + (type.syntax() != null ? type.syntax() : describe(lookup)), ex);
            }
        }
        if (!allows(value, lookup))
        {
            final String shown = trimmed != null ? "\"" + trimmed + "\""
                : "\"" + type.toText(value) + "\" (the default" + (derivedDefault != null ? ", " + derivedDefault.text() : "") + ")";
            throw new ConfigException(key, "invalid " + key + " = " + shown + ": expected " + describe(lookup));
        }
        return value;
    }

    private boolean allows(final T value, final Lookup lookup)
    {
        if (lower != null)
        {
            final int c = type.order().compare(value, lower.value(lookup));
            if (c < 0 || (c == 0 && !lower.inclusive()))
            {
                return false;
            }
        }
        if (upper != null)
        {
            final int c = type.order().compare(value, upper.value(lookup));
            if (c > 0 || (c == 0 && !upper.inclusive()))
            {
                return false;
            }
        }
        return rule == null || rule.test(value);
    }

    /**
     * @param lookup the other settings, to show derived bounds' values; null for documentation
     * @return what is allowed, e.g. {@code a whole number from 0 to session.max-keys (16384)}
     */
    private String describe(final Lookup lookup)
    {
        final String noun = ruleNoun != null ? ruleNoun : type.noun();
        final StringBuilder text = new StringBuilder(noun);
        if (type.interval())
        {
            text.append(" in ").append(lower.inclusive() ? '[' : '(').append(boundText(lower, lookup)).append(", ")
                .append(boundText(upper, lookup)).append(upper.inclusive() ? ']' : ')');
        }
        else if (lower != null && upper != null)
        {
            text.append(" from ").append(boundText(lower, lookup)).append(" to ").append(boundText(upper, lookup));
        }
        else if (lower != null)
        {
            text.append(" of at least ").append(boundText(lower, lookup));
        }
        else if (upper != null)
        {
            text.append(" of at most ").append(boundText(upper, lookup));
        }
        for (final String note : notes)
        {
            text.append(", ").append(note);
        }
        return text.toString();
    }

    private String boundText(final Bound<T> bound, final Lookup lookup)
    {
        if (bound.fixed() != null)
        {
            return type.toText(bound.fixed());
        }
        return lookup == null ? bound.derived().text() : bound.derived().text() + " (" + type.toText(bound.value(lookup)) + ")";
    }

    @Override
    public String toString()
    {
        return key;
    }

    /**
     * Declares a setting; {@link #documented(String)} ends the declaration.
     *
     * @param <T> the type of the value
     */
    public static final class Builder<T>
    {
        private final String key;
        private final SettingType<T> type;
        private T defaultValue;
        private Derived<T> derivedDefault;
        private Bound<T> lower;
        private Bound<T> upper;
        private String ruleNoun;
        private Predicate<T> rule;
        private final List<String> notes = new ArrayList<>();

        private Builder(final String key, final SettingType<T> type)
        {
            this.key = Objects.requireNonNull(key);
            this.type = type;
        }

        /**
         * @param value the default
         * @return this
         */
        public Builder<T> byDefault(final T value)
        {
            this.defaultValue = Objects.requireNonNull(value);
            this.derivedDefault = null;
            return this;
        }

        /**
         * @param text  how the documentation says it, e.g. {@code lease.reservation-timeout}
         * @param value computes it from other settings
         * @return this
         */
        public Builder<T> byDefault(final String text, final Function<Lookup, T> value)
        {
            this.derivedDefault = new Derived<>(text, value);
            this.defaultValue = null;
            return this;
        }

        /**
         * @param min smallest value allowed
         * @param max largest value allowed
         * @return this
         */
        public Builder<T> range(final T min, final T max)
        {
            return min(min).max(max);
        }

        /**
         * @param min smallest value allowed
         * @return this
         */
        public Builder<T> min(final T min)
        {
            lower = new Bound<>(Objects.requireNonNull(min), null, true);
            return this;
        }

        /**
         * @param text how the documentation says it, e.g. {@code 2 pages}
         * @param min  computes the smallest value allowed from other settings
         * @return this
         */
        public Builder<T> min(final String text, final Function<Lookup, T> min)
        {
            lower = new Bound<>(null, new Derived<>(text, min), true);
            return this;
        }

        /**
         * @param max largest value allowed
         * @return this
         */
        public Builder<T> max(final T max)
        {
            upper = new Bound<>(Objects.requireNonNull(max), null, true);
            return this;
        }

        /**
         * @param text how the documentation says it, e.g. {@code session.max-keys}
         * @param max  computes the largest value allowed from other settings
         * @return this
         */
        public Builder<T> max(final String text, final Function<Lookup, T> max)
        {
            upper = new Bound<>(null, new Derived<>(text, max), true);
            return this;
        }

        /**
         * @param min values must be above this (only for types written as intervals)
         * @return this
         */
        public Builder<T> above(final T min)
        {
            lower = new Bound<>(Objects.requireNonNull(min), null, false);
            return this;
        }

        /**
         * @param max values must be below this (only for types written as intervals)
         * @return this
         */
        public Builder<T> below(final T max)
        {
            upper = new Bound<>(Objects.requireNonNull(max), null, false);
            return this;
        }

        /**
         * @param noun what a value that passes is, replacing the type's noun, e.g. {@code a power of two}
         * @param test whether a value passes
         * @return this
         */
        public Builder<T> rule(final String noun, final Predicate<T> test)
        {
            this.ruleNoun = noun;
            this.rule = test;
            return this;
        }

        /**
         * @param note a condition checked together with other settings, or a remark, e.g. {@code above pool.evict-low};
         *             documented after the range and shown in range errors
         * @return this
         */
        public Builder<T> note(final String note)
        {
            notes.add(note);
            return this;
        }

        /**
         * Ends the declaration.
         *
         * @param meaning one line saying what the setting does
         * @return the setting
         * @throws IllegalStateException if the declaration is incomplete or its default is outside its range
         */
        public Setting<T> documented(final String meaning)
        {
            if (defaultValue == null && derivedDefault == null)
            {
                throw new IllegalStateException(key + " has no default");
            }
            if ((lower != null || upper != null) && type.order() == null)
            {
                throw new IllegalStateException(key + ": values of " + type.noun() + " have no order, so no range");
            }
            if (type.interval() ? lower == null || upper == null
                : (lower != null && !lower.inclusive()) || (upper != null && !upper.inclusive()))
            {
                throw new IllegalStateException(key + ": " + (type.interval() ? "an interval needs both ends" : "open bounds are for interval types"));
            }
            final Setting<T> setting = new Setting<>(this, Objects.requireNonNull(meaning));
            if (defaultValue != null && (lower == null || lower.fixed() != null) && (upper == null || upper.fixed() != null)
                && !setting.allows(defaultValue, null))
            {
                throw new IllegalStateException(key + ": the default " + setting.defaultText() + " is not " + setting.allowed());
            }
            return setting;
        }
    }
}
