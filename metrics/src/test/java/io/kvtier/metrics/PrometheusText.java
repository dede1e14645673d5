package io.kvtier.metrics;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A strict parser of the Prometheus text exposition format, version 0.0.4, for tests: the Prometheus Java
 * client writes the formats but parses none, so the tests read what it serves with this, which follows the
 * format's grammar and rejects what it does not allow instead of skipping it: a line that is neither a
 * comment nor a sample, a malformed name, label or value, an unknown escape, a family with two TYPE or HELP
 * lines, a TYPE line after its samples, samples of one family split apart, a sample whose name does not
 * belong to its family's type, a duplicate series, and a histogram whose buckets are not cumulative or do not
 * end at +Inf with the count.
 */
final class PrometheusText
{
    private static final Pattern METRIC_NAME = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    private static final Pattern LABEL_NAME = Pattern.compile("[a-zA-Z_][a-zA-Z0-9_]*");

    /** One sample: its name, its labels in order, its value. */
    record Sample(String name, Map<String, String> labels, double value)
    {
    }

    /** One family: its name, type, help and samples. */
    static final class Family
    {
        final String name;
        String type = "untyped";
        String help;
        boolean typed;
        final List<Sample> samples = new ArrayList<>();

        Family(final String name)
        {
            this.name = name;
        }

        /** @return the samples named {@code name} whose labels include {@code labels} */
        List<Sample> samples(final String sampleName, final Map<String, String> labels)
        {
            return samples.stream().filter(s -> s.name.equals(sampleName) && s.labels.entrySet().containsAll(labels.entrySet())).toList();
        }
    }

    private PrometheusText()
    {
    }

    /**
     * @param text a scrape
     * @return its families by name, in order
     * @throws IllegalArgumentException naming the line and what is wrong with it
     */
    static Map<String, Family> parse(final String text)
    {
        if (!text.isEmpty() && !text.endsWith("\n"))
        {
            throw new IllegalArgumentException("the exposition does not end with a line feed");
        }
        final Map<String, Family> families = new LinkedHashMap<>();
        final java.util.Set<String> series = new java.util.HashSet<>();
        Family current = null;
        int number = 0;
        for (final String line : text.split("\n", -1))
        {
            number++;
            if (line.isEmpty())
            {
                continue;
            }
            try
            {
                if (line.startsWith("#"))
                {
                    final String[] parts = line.split(" ", 4);
                    if (parts.length >= 3 && (parts[1].equals("HELP") || parts[1].equals("TYPE")))
                    {
                        final String name = name(parts[2], METRIC_NAME);
                        final Family family = families.computeIfAbsent(name, Family::new);
                        if (parts[1].equals("HELP"))
                        {
                            if (family.help != null)
                            {
                                throw new IllegalArgumentException("a second HELP for " + name);
                            }
                            family.help = parts.length == 4 ? unescape(parts[3], false) : "";
                        }
                        else
                        {
                            if (family.typed || !family.samples.isEmpty())
                            {
                                throw new IllegalArgumentException("a TYPE for " + name + " after its TYPE or its samples");
                            }
                            if (parts.length != 4 || !List.of("counter", "gauge", "histogram", "summary", "untyped").contains(parts[3]))
                            {
                                throw new IllegalArgumentException("a TYPE that is not one of counter, gauge, histogram, summary, untyped");
                            }
                            family.type = parts[3];
                            family.typed = true;
                        }
                        current = family;
                    }
                    continue;
                }
                final Sample sample = sample(line);
                final Family family = familyOf(families, sample.name);
                if (family != current && !family.samples.isEmpty())
                {
                    throw new IllegalArgumentException("samples of " + family.name + " are not together");
                }
                current = family;
                if (!series.add(sample.name + sample.labels))
                {
                    throw new IllegalArgumentException("a second sample of the series " + sample.name + sample.labels);
                }
                family.samples.add(sample);
            }
            catch (final IllegalArgumentException ex)
            {
                throw new IllegalArgumentException("line " + number + " '" + line + "': " + ex.getMessage(), ex);
            }
        }
        for (final Family family : families.values())
        {
            if (family.type.equals("histogram"))
            {
                checkHistogram(family);
            }
        }
        return families;
    }

    private static Family familyOf(final Map<String, Family> families, final String sampleName)
    {
        for (final String suffix : List.of("_bucket", "_sum", "_count"))
        {
            if (sampleName.endsWith(suffix))
            {
                final Family family = families.get(sampleName.substring(0, sampleName.length() - suffix.length()));
                if (family != null && (family.type.equals("histogram") || family.type.equals("summary") && !suffix.equals("_bucket")))
                {
                    return family;
                }
            }
        }
        final Family family = families.computeIfAbsent(sampleName, Family::new);
        if (family.type.equals("histogram"))
        {
            throw new IllegalArgumentException("a sample named as its histogram family, without _bucket, _sum or _count");
        }
        return family;
    }

    private static void checkHistogram(final Family family)
    {
        final Map<Map<String, String>, List<Sample>> bySeries = new LinkedHashMap<>();
        for (final Sample sample : family.samples)
        {
            final Map<String, String> labels = new LinkedHashMap<>(sample.labels);
            labels.remove("le");
            bySeries.computeIfAbsent(labels, k -> new ArrayList<>()).add(sample);
        }
        for (final Map.Entry<Map<String, String>, List<Sample>> entry : bySeries.entrySet())
        {
            double bound = Double.NEGATIVE_INFINITY;
            double cumulative = 0;
            Double count = null;
            Double infinite = null;
            for (final Sample sample : entry.getValue())
            {
                if (sample.name.endsWith("_bucket"))
                {
                    final String le = sample.labels.get("le");
                    if (le == null)
                    {
                        throw new IllegalArgumentException(family.name + entry.getKey() + ": a bucket without le");
                    }
                    final double upper = value(le);
                    if (upper <= bound || sample.value < cumulative)
                    {
                        throw new IllegalArgumentException(family.name + entry.getKey() + ": bucket le=" + le + " out of order or not cumulative");
                    }
                    bound = upper;
                    cumulative = sample.value;
                    if (upper == Double.POSITIVE_INFINITY)
                    {
                        infinite = sample.value;
                    }
                }
                else if (sample.name.endsWith("_count"))
                {
                    count = sample.value;
                }
            }
            if (infinite == null || count == null || !infinite.equals(count))
            {
                throw new IllegalArgumentException(family.name + entry.getKey() + ": the +Inf bucket (" + infinite + ") is not the count (" + count + ")");
            }
        }
    }

    private static Sample sample(final String line)
    {
        int i = 0;
        while (i < line.length() && line.charAt(i) != '{' && line.charAt(i) != ' ')
        {
            i++;
        }
        final String name = name(line.substring(0, i), METRIC_NAME);
        final Map<String, String> labels = new LinkedHashMap<>();
        if (i < line.length() && line.charAt(i) == '{')
        {
            i++;
            while (line.charAt(i) != '}')
            {
                final int eq = line.indexOf('=', i);
                if (eq < 0)
                {
                    throw new IllegalArgumentException("a label without '='");
                }
                final String label = name(line.substring(i, eq), LABEL_NAME);
                if (eq + 1 >= line.length() || line.charAt(eq + 1) != '"')
                {
                    throw new IllegalArgumentException("label " + label + "'s value is not quoted");
                }
                final StringBuilder value = new StringBuilder();
                int j = eq + 2;
                while (line.charAt(j) != '"')
                {
                    if (line.charAt(j) == '\\')
                    {
                        j++;
                        value.append(switch (line.charAt(j))
                        {
                            case '\\' -> '\\';
                            case '"' -> '"';
                            case 'n' -> '\n';
                            default -> throw new IllegalArgumentException("unknown escape \\" + line.charAt(j) + " in label " + label);
                        });
                    }
                    else
                    {
                        value.append(line.charAt(j));
                    }
                    j++;
                }
                if (labels.put(label, value.toString()) != null)
                {
                    throw new IllegalArgumentException("label " + label + " twice");
                }
                i = j + 1;
                if (line.charAt(i) == ',')
                {
                    i++;
                }
                else if (line.charAt(i) != '}')
                {
                    throw new IllegalArgumentException("expected ',' or '}' after label " + label);
                }
            }
            i++;
        }
        if (i >= line.length() || line.charAt(i) != ' ')
        {
            throw new IllegalArgumentException("no value after the name and labels");
        }
        final String[] rest = line.substring(i + 1).split(" ", -1);
        if (rest.length > 2)
        {
            throw new IllegalArgumentException("more than a value and a timestamp");
        }
        if (rest.length == 2)
        {
            Long.parseLong(rest[1]);
        }
        return new Sample(name, labels, value(rest[0]));
    }

    private static double value(final String text)
    {
        return switch (text)
        {
            case "+Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            case "NaN" -> Double.NaN;
            default ->
            {
                if (!text.matches("[-+]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][-+]?[0-9]+)?"))
                {
                    throw new IllegalArgumentException("not a value: '" + text + "'");
                }
                yield Double.parseDouble(text);
            }
        };
    }

    private static String name(final String text, final Pattern pattern)
    {
        if (!pattern.matcher(text).matches())
        {
            throw new IllegalArgumentException("not a valid name: '" + text + "'");
        }
        return text;
    }

    private static String unescape(final String text, final boolean quotes)
    {
        final StringBuilder out = new StringBuilder();
        for (int i = 0; i < text.length(); i++)
        {
            final char c = text.charAt(i);
            if (c != '\\')
            {
                out.append(c);
                continue;
            }
            i++;
            if (i == text.length())
            {
                throw new IllegalArgumentException("a help text ending in a lone backslash");
            }
            out.append(switch (text.charAt(i))
            {
                case '\\' -> '\\';
                case 'n' -> '\n';
                case '"' ->
                {
                    if (!quotes)
                    {
                        throw new IllegalArgumentException("\\\" in a help text");
                    }
                    yield '"';
                }
                default -> throw new IllegalArgumentException("unknown escape \\" + text.charAt(i) + " in a help text");
            });
        }
        return out.toString();
    }
}
