package io.kvtier.spi;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.Locale;

/**
 * Parses the value syntaxes shared by engine and tier settings: sizes with binary or decimal units,
 * durations, ratios and booleans. Errors are {@link IllegalArgumentException}s that say what was
 * expected; callers prefix the key.
 */
public final class ConfigValues
{
    private ConfigValues()
    {
    }

    /** What a size may look like, for error messages. */
    public static final String SIZE_SYNTAX = "a byte count with an optional unit: B, KiB, MiB, GiB, TiB (powers of 1024) or KB, MB, GB, TB (powers of 1000), e.g. 256KiB or 4GiB";

    /** What a duration may look like, for error messages. */
    public static final String DURATION_SYNTAX = "a number with a unit: ns, us, ms, s, m or h, e.g. 500ms or 30s";

    /**
     * @param text for example {@code 256KiB}, {@code 4 GiB}, {@code 1.5GB} or {@code 4096}
     * @return the size in bytes
     * @throws IllegalArgumentException if the text is not a non-negative size that fits in a long
     */
    public static long parseSize(final String text)
    {
        final String trimmed = text.trim();
        int split = 0;
        while (split < trimmed.length() && (isAsciiDigit(trimmed.charAt(split)) || trimmed.charAt(split) == '.'))
        {
            split++;
        }
        final String number = trimmed.substring(0, split);
        final String unit = trimmed.substring(split).trim().toLowerCase(Locale.ROOT);
        if (number.isEmpty())
        {
            throw new IllegalArgumentException("expected " + SIZE_SYNTAX);
        }
        final long multiplier = switch (unit)
        {
            case "", "b" -> 1L;
            case "kib", "k" -> 1L << 10;
            case "mib", "m" -> 1L << 20;
            case "gib", "g" -> 1L << 30;
            case "tib", "t" -> 1L << 40;
            case "kb" -> 1_000L;
            case "mb" -> 1_000_000L;
            case "gb" -> 1_000_000_000L;
            case "tb" -> 1_000_000_000_000L;
            default -> throw new IllegalArgumentException("unknown unit '" + unit + "': expected " + SIZE_SYNTAX);
        };
        try
        {
            return new BigDecimal(number).multiply(BigDecimal.valueOf(multiplier)).setScale(0, java.math.RoundingMode.FLOOR).longValueExact();
        }
        catch (final NumberFormatException | ArithmeticException ex)
        {
            throw new IllegalArgumentException("expected " + SIZE_SYNTAX, ex);
        }
    }

    /**
     * @param text for example {@code 500ms}, {@code 30s} or {@code 0}
     * @return the duration
     * @throws IllegalArgumentException if the text is not a non-negative duration with a unit
     */
    public static Duration parseDuration(final String text)
    {
        final String trimmed = text.trim().toLowerCase(Locale.ROOT);
        if (trimmed.equals("0"))
        {
            return Duration.ZERO;
        }
        int split = 0;
        while (split < trimmed.length() && (isAsciiDigit(trimmed.charAt(split)) || trimmed.charAt(split) == '.'))
        {
            split++;
        }
        final String number = trimmed.substring(0, split);
        final String unit = trimmed.substring(split).trim();
        if (number.isEmpty() || unit.isEmpty())
        {
            throw new IllegalArgumentException("expected " + DURATION_SYNTAX);
        }
        final long nanosPerUnit = switch (unit)
        {
            case "ns" -> 1L;
            case "us" -> 1_000L;
            case "ms" -> 1_000_000L;
            case "s" -> 1_000_000_000L;
            case "m", "min" -> 60_000_000_000L;
            case "h" -> 3_600_000_000_000L;
            default -> throw new IllegalArgumentException("unknown unit '" + unit + "': expected " + DURATION_SYNTAX);
        };
        try
        {
            return Duration.ofNanos(new BigDecimal(number).multiply(BigDecimal.valueOf(nanosPerUnit)).setScale(0, java.math.RoundingMode.FLOOR).longValueExact());
        }
        catch (final NumberFormatException | ArithmeticException ex)
        {
            throw new IllegalArgumentException("expected " + DURATION_SYNTAX, ex);
        }
    }

    /** Digits of other scripts are digits to {@link Character#isDigit} and {@link BigDecimal}, but not in a setting. */
    private static boolean isAsciiDigit(final char c)
    {
        return c >= '0' && c <= '9';
    }

    /**
     * @param text a fraction such as {@code 0.9} or a percentage such as {@code 90%}
     * @return the fraction, within [0, 1]
     * @throws IllegalArgumentException if the text is not a fraction within [0, 1]
     */
    public static double parseRatio(final String text)
    {
        final String trimmed = text.trim();
        final String number = trimmed.endsWith("%") ? trimmed.substring(0, trimmed.length() - 1).trim() : trimmed;
        // Decimal only: Double.parseDouble also reads hex floats (0x1p-1), type suffixes (0.9d) and NaN.
        if (!number.matches("([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][-+]?[0-9]+)?"))
        {
            throw new IllegalArgumentException("expected a fraction between 0 and 1 such as 0.9, or a percentage such as 90%");
        }
        final double value;
        try
        {
            value = trimmed.endsWith("%")
                ? Double.parseDouble(trimmed.substring(0, trimmed.length() - 1).trim()) / 100.0
                : Double.parseDouble(trimmed);
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("expected a fraction between 0 and 1 such as 0.9, or a percentage such as 90%", ex);
        }
        if (!(value >= 0.0 && value <= 1.0))
        {
            throw new IllegalArgumentException("expected a fraction between 0 and 1 such as 0.9, or a percentage such as 90%");
        }
        return value;
    }

    /**
     * @param text {@code true}, {@code false}, {@code yes}, {@code no}, {@code on} or {@code off}
     * @return the flag
     * @throws IllegalArgumentException for anything else
     */
    public static boolean parseBoolean(final String text)
    {
        return switch (text.trim().toLowerCase(Locale.ROOT))
        {
            case "true", "yes", "on" -> true;
            case "false", "no", "off" -> false;
            default -> throw new IllegalArgumentException("expected true or false");
        };
    }

    /**
     * @param bytes a size in bytes
     * @return the size in the largest binary unit that keeps it exact, e.g. {@code 256KiB}
     */
    public static String formatSize(final long bytes)
    {
        final String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        long value = bytes;
        int unit = 0;
        while (unit < units.length - 1 && value != 0 && (value & 1023) == 0)
        {
            value >>= 10;
            unit++;
        }
        return value + units[unit];
    }
}
