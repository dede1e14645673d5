package io.kvtier.engine.config;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The settings table of {@code docs/config.md} is rendered from {@link EngineSettings}: this test fails,
 * with the difference and the command that rewrites the table, when the file says anything else.
 */
class ConfigDocTest
{
    static final Path CONFIG_MD = Path.of("..", "docs", "config.md");
    static final String BEGIN = "<!-- settings-table:begin";
    static final String END = "<!-- settings-table:end -->";
    static final String REWRITE_PROPERTY = "kvtier.rewrite-config-doc";
    static final String REWRITE_COMMAND = "./mvnw -q -pl engine -am test -Dtest=ConfigDocTest -Dsurefire.failIfNoSpecifiedTests=false -D"
        + REWRITE_PROPERTY + "=true";

    /** Rows for the tier settings, which each tier's plugin declares and validates (spi's TierConfig). */
    private static final List<String> TIER_ROWS = List.of(
        row("tier.<name>.type", "(no tiers)", "a tier type found on the class path or in plugins.dir, e.g. posix",
            "adds an L3 tier named <name>; tiers are used in the order they appear"),
        row("tier.<name>." + EngineSettings.TIER_TRUSTED, "(by the plugin's place)", EngineSettings.TIER_TRUSTED_ALLOWED,
            EngineSettings.TIER_TRUSTED_MEANING),
        "| `tier.<name>.<setting>` |  | see the tier's documentation | passed to the tier, e.g. tier.nvme.dir |",
        row("domain.<name>.<setting>", "(no domains)", "any engine setting above but tier.* and plugins.dir, with a domain name of lowercase"
            + " letters, digits, '-' and '_'", "a trust domain (docs/security.md): kvtier serve runs one engine per domain, with that domain's"
            + " settings over the shared ones (its own pool.path and ipc.socket-path at least; its l3.key-salt is its name unless set), all on"
            + " the shared tiers; domains need one pool.page-size"));

    /**
     * @return the settings table: a header, one row per engine setting in {@link EngineSettings#ALL}, then the tier rows
     */
    static List<String> renderTable()
    {
        final List<String> lines = new ArrayList<>();
        lines.add("| key | default | allowed | meaning |");
        lines.add("|---|---|---|---|");
        for (final Setting<?> setting : EngineSettings.ALL)
        {
            lines.add(row(setting.key(), setting.defaultText(), setting.allowed(), setting.meaning()));
        }
        lines.addAll(TIER_ROWS);
        for (final Setting<?> setting : EngineSettings.PER_TIER)
        {
            lines.add(row(setting.key(), setting.defaultText(), setting.allowed(), setting.meaning()));
        }
        return lines;
    }

    private static String row(final String key, final String defaultText, final String allowed, final String meaning)
    {
        return "| `" + key + "` | `" + defaultText + "` | " + cell(allowed) + " | " + cell(meaning) + " |";
    }

    private static String cell(final String text)
    {
        return text.replace("|", "\\|");
    }

    @Test
    void shouldListEverySettingAsDeclared() throws IOException
    {
        final List<String> doc = Files.readAllLines(CONFIG_MD, StandardCharsets.UTF_8);
        final int begin = endOfComment(doc, indexOfPrefix(doc, BEGIN));
        final int end = indexOfPrefix(doc, END);
        assertThat(begin).as("docs/config.md marks the settings table with %s ... -->", BEGIN).isNotNegative();
        assertThat(end).as("docs/config.md ends the settings table with %s", END).isGreaterThan(begin);
        final List<String> documented = doc.subList(begin + 1, end);
        final List<String> declared = renderTable();
        if (documented.equals(declared))
        {
            return;
        }
        if (Boolean.getBoolean(REWRITE_PROPERTY))
        {
            final List<String> rewritten = new ArrayList<>(doc.subList(0, begin + 1));
            rewritten.addAll(declared);
            rewritten.addAll(doc.subList(end, doc.size()));
            Files.write(CONFIG_MD, rewritten, StandardCharsets.UTF_8);
            return;
        }
        fail("docs/config.md's settings table differs from the declarations in EngineSettings"
            + " (- in the file, + declared):%n%s%nEdit EngineSettings, not the table; rewrite the table with:%n  %s",
            diff(documented, declared), REWRITE_COMMAND);
    }

    private static int indexOfPrefix(final List<String> lines, final String prefix)
    {
        for (int i = 0; i < lines.size(); i++)
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
        for (int i = Math.max(start, 0); start >= 0 && i < lines.size(); i++)
        {
            if (lines.get(i).endsWith("-->"))
            {
                return i;
            }
        }
        return -1;
    }

    /** A line diff: the lines either side has that the other lacks, in order. */
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

    @Test
    void shouldShowOnlyTheLinesThatDiffer()
    {
        assertThat(diff(List.of("a", "b", "c"), List.of("a", "x", "c", "d"))).isEqualTo("- b\n+ x\n+ d\n");
    }
}
