package io.kvtier.engine.config;

import io.kvtier.spi.ConfigValues;

import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * The type of a {@link Setting}'s value: how its text is parsed and written back, how values are
 * ordered (for ranges), and what it is called in documentation and messages.
 *
 * @param javaType the values' class
 * @param noun     what a value is, e.g. {@code a size}; the start of the "allowed" text
 * @param parser   text to value; throws {@link IllegalArgumentException} for text that is not one
 * @param format   value to text that {@code parser} reads back
 * @param order    how values compare, or null if they have no order (then a setting has no range)
 * @param syntax   what the text may look like, for parse errors; null to say what is allowed instead
 * @param interval whether ranges are written as intervals, {@code (0, 1]}, instead of {@code from a to b}
 * @param <T> the values' type
 */
record SettingType<T>(Class<T> javaType, String noun, Function<String, T> parser, Function<T, String> format, Comparator<T> order,
    String syntax, boolean interval)
{
    /** Bytes, with binary or decimal units: {@code 256KiB}, {@code 4GB}. */
    public static final SettingType<Long> SIZE = new SettingType<>(Long.class, "a size", ConfigValues::parseSize, ConfigValues::formatSize,
        Comparator.naturalOrder(), ConfigValues.SIZE_SYNTAX, false);

    /** A duration with a unit: {@code 500ms}, {@code 30s}; {@code 0} alone needs none. */
    public static final SettingType<Duration> DURATION = new SettingType<>(Duration.class, "a duration", ConfigValues::parseDuration,
        SettingType::formatDuration, Comparator.naturalOrder(), ConfigValues.DURATION_SYNTAX, false);

    /** A fraction in [0, 1]: {@code 0.9} or {@code 90%}. */
    public static final SettingType<Double> FRACTION = new SettingType<>(Double.class, "a fraction", ConfigValues::parseRatio,
        value -> BigDecimal.valueOf(value).stripTrailingZeros().toPlainString(), Comparator.naturalOrder(),
        "a fraction between 0 and 1 such as 0.9, or a percentage such as 90%", true);

    /** A whole number that fits an int; {@code _} may group digits. */
    public static final SettingType<Integer> INT = new SettingType<>(Integer.class, "a whole number",
        text -> Integer.parseInt(asciiNumber(text).replace("_", "")), String::valueOf, Comparator.naturalOrder(), null, false);

    /** A whole number that fits a long; {@code _} may group digits. */
    public static final SettingType<Long> LONG = new SettingType<>(Long.class, "a whole number",
        text -> Long.parseLong(asciiNumber(text).replace("_", "")), String::valueOf, Comparator.naturalOrder(), null, false);

    /** A file path. */
    public static final SettingType<Path> PATH = new SettingType<>(Path.class, "a file path", Path::of, Path::toString, null,
        "a file path", false);

    /** {@code true} or {@code false}. */
    public static final SettingType<Boolean> BOOLEAN = new SettingType<>(Boolean.class, "true or false", text ->
    {
        return switch (text.toLowerCase(Locale.ROOT))
        {
            case "true" -> Boolean.TRUE;
            case "false" -> Boolean.FALSE;
            default -> throw new IllegalArgumentException("not true or false: " + text);
        };
    }, String::valueOf, null, "true or false", false);

    /** Free text, such as a group name; may be empty. */
    public static final SettingType<String> TEXT = new SettingType<>(String.class, "a name", Function.identity(), Function.identity(), null, null, false);

    /**
     * Numeric user or group ids, comma-separated, e.g. {@code 1000,1001}; empty for none. Kept as an
     * {@code int[]} (a copy per read is the caller's business: settings are read once, at start).
     */
    public static final SettingType<int[]> ID_LIST = new SettingType<>(int[].class, "a comma-separated list of numeric ids", text ->
    {
        // Empty only: the text comes trimmed of ASCII spaces, and a blank of another script (an em space) is not "no ids".
        if (text.isEmpty())
        {
            return new int[0];
        }
        final String[] parts = text.split(",");
        final int[] ids = new int[parts.length];
        for (int i = 0; i < parts.length; i++)
        {
            ids[i] = Integer.parseInt(asciiNumber(parts[i].trim()));
            if (ids[i] < 0)
            {
                throw new IllegalArgumentException("negative id " + ids[i]);
            }
        }
        return ids;
    }, ids -> java.util.Arrays.stream(ids).mapToObj(String::valueOf).collect(java.util.stream.Collectors.joining(",")), null,
        "numeric ids separated by commas, such as 1000,1001, or nothing", false);

    /**
     * @param values the choices, in documentation order
     * @param name   each choice's name in settings; matched ignoring case
     * @param <E>    the enum
     * @return a type whose values are the choices
     */
    public static <E extends Enum<E>> SettingType<E> choice(final E[] values, final Function<E, String> name)
    {
        final List<String> names = new ArrayList<>();
        for (final E value : values)
        {
            names.add(name.apply(value));
        }
        final Function<String, E> parser = text ->
        {
            for (final E value : values)
            {
                if (name.apply(value).equals(text.toLowerCase(Locale.ROOT)))
                {
                    return value;
                }
            }
            throw new IllegalArgumentException("no such choice: " + text);
        };
        return new SettingType<>(values[0].getDeclaringClass(), "one of " + String.join(", ", names), parser, name, null, null, false);
    }

    /**
     * @param names the names allowed, in documentation order, lower case
     * @return a type whose values are those names, matched ignoring case and given back in lower case
     */
    public static SettingType<String> oneOf(final List<String> names)
    {
        final List<String> allowed = List.copyOf(names);
        final Function<String, String> parser = text ->
        {
            final String name = text.toLowerCase(Locale.ROOT);
            if (!allowed.contains(name))
            {
                throw new IllegalArgumentException("no such choice: " + text);
            }
            return name;
        };
        return new SettingType<>(String.class, "one of " + String.join(", ", allowed), parser, Function.identity(), null, null, false);
    }

    /**
     * @param duration a non-negative duration
     * @return it in the largest of s, ms, us, ns that keeps it exact, e.g. {@code 60s}, {@code 100ms}; {@code 0} for zero
     */
    public static String formatDuration(final Duration duration)
    {
        final long nanos = duration.toNanos();
        if (nanos == 0)
        {
            return "0";
        }
        final long[] perUnit = {1_000_000_000L, 1_000_000L, 1_000L, 1L};
        final String[] units = {"s", "ms", "us", "ns"};
        for (int i = 0; i < perUnit.length; i++)
        {
            if (nanos % perUnit[i] == 0)
            {
                return nanos / perUnit[i] + units[i];
            }
        }
        throw new AssertionError("unreachable: every duration is a whole number of nanoseconds");
    }

    /**
     * @param text a value's text
     * @return the value
     * @throws IllegalArgumentException if the text is not a value of this type
     */
    public T parse(final String text)
    {
        return parser.apply(text);
    }

    /**
     * @param value a value of this type
     * @return its text, which {@link #parse} reads back
     */
    public String toText(final T value)
    {
        return format.apply(value);
    }

    /**
     * @param text a whole number's text: an optional sign, then ASCII digits, {@code _} grouping them
     * @return the text
     * @throws IllegalArgumentException for anything else, such as another script's digits, which Integer.parseInt reads as digits
     */
    private static String asciiNumber(final String text)
    {
        if (!text.matches("[-+]?[0-9][0-9_]*"))
        {
            throw new IllegalArgumentException("not a whole number in ASCII digits: " + text);
        }
        return text;
    }
}
