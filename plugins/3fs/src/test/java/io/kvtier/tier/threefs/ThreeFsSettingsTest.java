package io.kvtier.tier.threefs;

import io.kvtier.tier.support.SettingsTable;

import java.io.IOException;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The settings table of {@code docs/plugins/3fs.md} is rendered from {@link ThreeFsSettings#ALL}: this
 * test fails, with the difference and the command that rewrites the table, when the file says anything else.
 */
class ThreeFsSettingsTest
{
    static final Path DOC = Path.of("..", "..", "docs", "plugins", "3fs.md");
    static final String REWRITE_COMMAND = "./mvnw -q -pl plugins/3fs -am test -Dtest=ThreeFsSettingsTest"
        + " -Dsurefire.failIfNoSpecifiedTests=false -D" + SettingsTable.REWRITE_PROPERTY + "=true";

    @Test
    void shouldListEverySettingInTheDocsAsDeclared() throws IOException
    {
        assertThat(SettingsTable.check(DOC, ThreeFsSettings.ALL, REWRITE_COMMAND)).as("docs/plugins/3fs.md").isEmpty();
    }

    @Test
    void shouldDeclareEveryKeyTheTierAccepts()
    {
        assertThat(ThreeFsSettings.KNOWN).containsExactlyInAnyOrder(ThreeFsSettings.DIR, ThreeFsSettings.LIB, ThreeFsSettings.USRBIO,
            ThreeFsSettings.CAPACITY, ThreeFsSettings.EVICT_HIGH, ThreeFsSettings.EVICT_LOW, ThreeFsSettings.FANOUT_LEVELS,
            ThreeFsSettings.TMP_MAX_AGE, ThreeFsSettings.IO_THREADS, ThreeFsSettings.ENTRIES, ThreeFsSettings.IO_DEPTH,
            ThreeFsSettings.TIMEOUT, ThreeFsSettings.DRAIN_TIMEOUT, ThreeFsSettings.LAYOUT, ThreeFsSettings.EXTENT_SIZE);
    }
}
