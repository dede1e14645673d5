package io.kvtier.tier.faults;

import io.kvtier.spi.ConfigValues;

import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;

/**
 * The rate of each fault kind in force: the probability, per key of the operation a kind applies to
 * (per call for {@code block-call}), that it is injected. Immutable; the tier swaps in a new one when
 * the control file changes.
 */
final class FaultRates
{
    /** No faults: the wrapped tier as it is. */
    static final FaultRates NONE = new FaultRates(new double[FaultKind.values().length]);

    private final double[] rates;

    private FaultRates(final double[] rates)
    {
        this.rates = rates;
    }

    /**
     * @param kind a fault kind
     * @return its rate, in [0, 1]
     */
    double rate(final FaultKind kind)
    {
        return rates[kind.ordinal()];
    }

    /** @return whether any kind has a rate above zero */
    boolean any()
    {
        for (final double rate : rates)
        {
            if (rate > 0)
            {
                return true;
            }
        }
        return false;
    }

    /**
     * Parses the {@code faults} setting: {@code kind:rate} items separated by commas, each kind at most
     * once, a rate a fraction such as 0.01 or a percentage such as 1%.
     *
     * @param text the setting's value
     * @return the rates, zero for every kind not named
     * @throws IllegalArgumentException naming the item at fault and what is allowed
     */
    static FaultRates parse(final String text)
    {
        final Map<FaultKind, Double> named = new EnumMap<>(FaultKind.class);
        for (final String item : text.split(","))
        {
            if (item.isBlank())
            {
                continue;
            }
            final int colon = item.indexOf(':');
            if (colon < 0)
            {
                throw new IllegalArgumentException("'" + item.trim() + "' is not kind:rate");
            }
            final FaultKind kind = FaultKind.named(item.substring(0, colon));
            if (named.put(kind, rate(kind.settingName, item.substring(colon + 1))) != null)
            {
                throw new IllegalArgumentException("fault kind '" + kind + "' is named twice");
            }
        }
        final double[] rates = new double[FaultKind.values().length];
        named.forEach((kind, rate) -> rates[kind.ordinal()] = rate);
        return checked(rates);
    }

    /**
     * Applies a control file over these rates: {@code key=rate} lines in order, where the key is a
     * fault kind or {@code all} (every kind); blank lines and lines starting with {@code #} are skipped.
     *
     * @param text the control file's contents
     * @return the rates in force with the file
     * @throws IllegalArgumentException naming the line at fault and what is allowed
     */
    FaultRates control(final String text)
    {
        final double[] next = rates.clone();
        int number = 0;
        for (final String raw : text.split("\\R"))
        {
            number++;
            final String line = raw.trim();
            if (line.isEmpty() || line.startsWith("#"))
            {
                continue;
            }
            final int equals = line.indexOf('=');
            if (equals < 0)
            {
                throw new IllegalArgumentException("line " + number + " '" + line + "' is not key=rate (a fault kind or all, then a rate)");
            }
            final String key = line.substring(0, equals).trim().toLowerCase(Locale.ROOT);
            try
            {
                final double rate = rate(key, line.substring(equals + 1));
                if (key.equals("all"))
                {
                    java.util.Arrays.fill(next, rate);
                }
                else
                {
                    next[FaultKind.named(key).ordinal()] = rate;
                }
            }
            catch (final IllegalArgumentException ex)
            {
                throw new IllegalArgumentException("line " + number + " '" + line + "': " + ex.getMessage(), ex);
            }
        }
        try
        {
            return checked(next);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IllegalArgumentException("with its lines applied, " + ex.getMessage(), ex);
        }
    }

    private static double rate(final String kind, final String text)
    {
        try
        {
            return ConfigValues.parseRatio(text.trim());
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IllegalArgumentException("the rate of " + kind + " is '" + text.trim()
                + "', not a fraction between 0 and 1 such as 0.01 or a percentage such as 1%", ex);
        }
    }

    /** One draw per key picks at most one kind, so the rates of the kinds drawn for one operation must not add up past 1. */
    private static FaultRates checked(final double[] rates)
    {
        for (final FaultKind.Applies applies : FaultKind.Applies.values())
        {
            double sum = 0;
            final StringJoiner kinds = new StringJoiner(" + ");
            for (final FaultKind kind : FaultKind.values())
            {
                if (kind.applies == applies)
                {
                    sum += rates[kind.ordinal()];
                    kinds.add(kind.settingName);
                }
            }
            if (sum > 1.0 + 1e-9)
            {
                throw new IllegalArgumentException("the rates of " + kinds + " add up to " + sum + ", more than 1 (one draw per key picks at most one of them)");
            }
        }
        return new FaultRates(rates);
    }

    @Override
    public String toString()
    {
        final StringJoiner text = new StringJoiner(", ");
        for (final FaultKind kind : FaultKind.values())
        {
            if (rates[kind.ordinal()] > 0)
            {
                text.add(kind.settingName + ":" + rates[kind.ordinal()]);
            }
        }
        return text.length() == 0 ? "none" : text.toString();
    }
}
