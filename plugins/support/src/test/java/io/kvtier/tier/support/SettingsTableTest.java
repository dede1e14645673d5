package io.kvtier.tier.support;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

class SettingsTableTest
{
    private static final List<TierSetting<?>> SETTINGS = List.of(
        TierSetting.path("dir").documented("the directory"),
        TierSetting.integer("io-threads").byDefault(2).range(1, 64).documented("worker threads"));
    private static final String REWRITE = "./mvnw -q -pl plugins/x -am test -Dtest=XDocTest -Dkvtier.rewrite-tier-docs=true";

    @TempDir
    Path tmp;

    @Test
    void shouldPassWhenTheTableIsTheDeclarations() throws IOException
    {
        final Path doc = doc(TierSetting.table(SETTINGS));
        assertThat(SettingsTable.check(doc, SETTINGS, REWRITE)).isEmpty();
    }

    @Test
    void shouldNameTheDriftAndTheRewriteCommand() throws IOException
    {
        final String stale = TierSetting.table(SETTINGS).replace("| worker threads |", "| threads |");
        final Path doc = doc(stale);
        assertThat(SettingsTable.check(doc, SETTINGS, REWRITE)).hasValueSatisfying(message -> assertThat(message)
            .contains("- | `io-threads` | `2` | a whole number from 1 to 64 | threads |")
            .contains("+ | `io-threads` | `2` | a whole number from 1 to 64 | worker threads |")
            .doesNotContain("`dir`")
            .contains(REWRITE));
        assertThat(Files.readString(doc)).as("the file is left alone without the property").contains("| threads |");
    }

    @Test
    void shouldRewriteOnlyTheTableWhenAskedTo() throws IOException
    {
        final Path doc = doc("| stale |\n");
        System.setProperty(SettingsTable.REWRITE_PROPERTY, "true");
        try
        {
            assertThat(SettingsTable.check(doc, SETTINGS, REWRITE)).isEmpty();
        }
        finally
        {
            System.clearProperty(SettingsTable.REWRITE_PROPERTY);
        }
        assertThat(Files.readString(doc)).isEqualTo(text(TierSetting.table(SETTINGS)));
        assertThat(SettingsTable.check(doc, SETTINGS, REWRITE)).isEmpty();
    }

    @Test
    void shouldSayWhenTheMarkersAreMissing() throws IOException
    {
        final Path doc = tmp.resolve("plain.md");
        Files.writeString(doc, "# t\n" + TierSetting.table(SETTINGS));
        assertThat(SettingsTable.check(doc, SETTINGS, REWRITE)).hasValueSatisfying(message -> assertThat(message)
            .contains("no settings table").contains(SettingsTable.BEGIN).contains(SettingsTable.END));
    }

    @Test
    void shouldShowOnlyTheLinesThatDiffer()
    {
        assertThat(SettingsTable.diff(List.of("a", "b", "c"), List.of("a", "x", "c", "d"))).isEqualTo("- b\n+ x\n+ d\n");
    }

    private Path doc(final String table) throws IOException
    {
        final Path doc = tmp.resolve("tier.md");
        Files.writeString(doc, text(table), StandardCharsets.UTF_8);
        return doc;
    }

    private static String text(final String table)
    {
        return "# The x tier\n\n" + SettingsTable.BEGIN + ": generated;\n     rewrite with the command -->\n" + table + SettingsTable.END
            + "\n\nMore text.\n";
    }
}
