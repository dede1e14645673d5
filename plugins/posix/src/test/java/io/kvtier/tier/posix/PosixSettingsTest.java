package io.kvtier.tier.posix;

import io.kvtier.tier.support.SettingsTable;

import java.io.IOException;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The settings table of the POSIX tier's README is rendered from {@link PosixSettings#ALL}: this test
 * fails, with the difference and the command that rewrites the table, when the file says anything else.
 */
class PosixSettingsTest
{
    static final Path README = Path.of("README.md");
    static final String REWRITE_COMMAND = "./mvnw -q -pl plugins/posix -am test -Dtest=PosixSettingsTest"
        + " -Dsurefire.failIfNoSpecifiedTests=false -D" + SettingsTable.REWRITE_PROPERTY + "=true";

    @Test
    void shouldListEverySettingAsDeclared() throws IOException
    {
        assertThat(SettingsTable.check(README, PosixSettings.ALL, REWRITE_COMMAND)).as("plugins/posix/README.md").isEmpty();
    }

    @Test
    void shouldDeclareEveryKeyTheTierAccepts()
    {
        assertThat(PosixSettings.KNOWN).containsExactlyInAnyOrder(PosixSettings.DIR, PosixSettings.CAPACITY, PosixSettings.EVICT_HIGH,
            PosixSettings.EVICT_LOW, PosixSettings.FANOUT_LEVELS, PosixSettings.IO_THREADS, PosixSettings.FSYNC, PosixSettings.DIRECT_IO,
            PosixSettings.SHARED, PosixSettings.TMP_MAX_AGE, PosixSettings.INDEX_ENTRIES, PosixSettings.IO, PosixSettings.SPARE_TEMP_FILES,
            PosixSettings.LAYOUT, PosixSettings.EXTENT_SIZE);
    }
}
