package io.kvtier.tier.support;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The settings table of a tier's docs, kept between two marker comments and rendered from the tier's
 * {@link TierSetting} declarations, as {@code docs/config.md} is from the engine's. A tier's test calls
 * {@link #check}: it fails while the file says anything else, naming the command that rewrites it, and
 * rewrites the file itself when that command's system property is set.
 *
 * <pre>{@code
 * <!-- tier-settings:begin: generated from ...PosixSettings.java; rewrite with
 *      ./mvnw -q -pl plugins/posix -am test -Dtest=PosixSettingsTest ... -->
 * | key | default | allowed | meaning |
 * ...
 * <!-- tier-settings:end -->
 * }</pre>
 */
public final class SettingsTable
{
    /** How the comment before the table starts; it may run over several lines, to its {@code -->}. */
    public static final String BEGIN = "<!-- tier-settings:begin";
    /** The line after the table. */
    public static final String END = "<!-- tier-settings:end -->";
    /** The system property that makes {@link #check} rewrite the table instead of failing. */
    public static final String REWRITE_PROPERTY = "kvtier.rewrite-tier-docs";

    private SettingsTable()
    {
    }

    /**
     * @param doc      the Markdown file holding the table between {@link #BEGIN} and {@link #END}
     * @param settings the tier's declarations, in the order the table lists them
     * @param rewrite  the command that regenerates the table, for the failure message
     * @return empty when the file's table is the declarations' (or {@link #REWRITE_PROPERTY} is set and it
     *         has just been rewritten), else what differs and how to regenerate it
     * @throws IOException when the file cannot be read or rewritten
     */
    public static Optional<String> check(final Path doc, final List<TierSetting<?>> settings, final String rewrite) throws IOException
    {
        final List<String> lines = Files.readAllLines(doc, StandardCharsets.UTF_8);
        final int beginLine = indexOfPrefix(lines, BEGIN, 0);
        final int begin = beginLine < 0 ? -1 : endOfComment(lines, beginLine);
        final int end = begin < 0 ? -1 : indexOfPrefix(lines, END, begin + 1);
        if (begin < 0 || end < 0)
        {
            return Optional.of(doc + " has no settings table between a line starting " + BEGIN + " (a comment ending -->) and a line "
                + END);
        }
        final List<String> documented = lines.subList(begin + 1, end);
        final List<String> declared = TierSetting.table(settings).lines().toList();
        if (documented.equals(declared))
        {
            return Optional.empty();
        }
        if (Boolean.getBoolean(REWRITE_PROPERTY))
        {
            final List<String> rewritten = new ArrayList<>(lines.subList(0, begin + 1));
            rewritten.addAll(declared);
            rewritten.addAll(lines.subList(end, lines.size()));
            Files.write(doc, rewritten, StandardCharsets.UTF_8);
            return Optional.empty();
        }
        return Optional.of(doc + "'s settings table differs from the tier's TierSetting declarations (- in the file, + declared):\n"
            + diff(documented, declared) + "Edit the declarations, not the table; rewrite the table with:\n  " + rewrite);
    }

    private static int indexOfPrefix(final List<String> lines, final String prefix, final int from)
    {
        for (int i = from; i < lines.size(); i++)
        {
            if (lines.get(i).startsWith(prefix))
            {
                return i;
            }
        }
        return -1;
    }

    private static int endOfComment(final List<String> lines, final int start)
    {
        for (int i = start; i < lines.size(); i++)
        {
            if (lines.get(i).endsWith("-->"))
            {
                return i;
            }
        }
        return -1;
    }

    /**
     * A line diff: the lines either side has that the other lacks, in order.
     *
     * @param before the lines in the file
     * @param after  the lines declared
     * @return {@code - line} for each line only before has, {@code + line} for each only after has
     */
    static String diff(final List<String> before, final List<String> after)
    {
        final int[][] common = new int[before.size() + 1][after.size() + 1];
        for (int i = before.size() - 1; i >= 0; i--)
        {
            for (int j = after.size() - 1; j >= 0; j--)
            {
                common[i][j] = before.get(i).equals(after.get(j)) ? common[i + 1][j + 1] + 1 : Math.max(common[i + 1][j], common[i][j + 1]);
            }
        }
        final StringBuilder out = new StringBuilder();
        int i = 0;
        int j = 0;
        while (i < before.size() || j < after.size())
        {
            if (i < before.size() && j < after.size() && before.get(i).equals(after.get(j)))
            {
                i++;
                j++;
            }
            else if (j < after.size() && (i == before.size() || common[i][j + 1] > common[i + 1][j]))
            {
                out.append("+ ").append(after.get(j++)).append('\n');
            }
            else
            {
                out.append("- ").append(before.get(i++)).append('\n');
            }
        }
        return out.toString();
    }
}
