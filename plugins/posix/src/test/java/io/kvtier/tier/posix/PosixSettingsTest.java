package io.kvtier.tier.posix;

import io.kvtier.spi.TierConfig;
import io.kvtier.tier.support.SettingsTable;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
            PosixSettings.LAYOUT, PosixSettings.EXTENT_SIZE, PosixSettings.FIXED_BUFFERS_MAX);
    }

    @Test
    void shouldSizeTheThreadsToTheHostGivingTwoProcessorsOneIoThreadAndNoSpareFileThread()
    {
        assertThat(PosixSettings.defaultIoThreads(1)).isEqualTo(1);
        assertThat(PosixSettings.defaultIoThreads(2)).as("2 processors: one I/O thread").isEqualTo(1);
        assertThat(PosixSettings.defaultIoThreads(4)).isEqualTo(2);
        assertThat(PosixSettings.defaultIoThreads(16)).isEqualTo(8);
        assertThat(PosixSettings.defaultIoThreads(96)).as("capped").isEqualTo(PosixSettings.IO_THREADS_DEFAULT_MAX);
        assertThat(PosixSettings.defaultSpareTempFiles(1, 1)).isZero();
        assertThat(PosixSettings.defaultSpareTempFiles(2, 1)).as("2 processors: no spares, so no thread making them").isZero();
        assertThat(PosixSettings.defaultSpareTempFiles(4, 2)).isEqualTo(2 * UringFileStore.RING_ENTRIES);
    }

    @Test
    void shouldTakeTheHostsDefaultsUnlessTheThreadsAreSet(@TempDir final Path dir)
    {
        final int processors = Runtime.getRuntime().availableProcessors();
        final PosixSettings unset = PosixSettings.parse(new TierConfig("t", Map.of(PosixSettings.DIR, dir.toString())), 20480);
        assertThat(unset.ioThreads).isEqualTo(PosixSettings.defaultIoThreads(processors));
        assertThat(unset.spareTempFiles).isEqualTo(PosixSettings.defaultSpareTempFiles(processors, unset.ioThreads));

        final PosixSettings set = PosixSettings.parse(new TierConfig("t", Map.of(PosixSettings.DIR, dir.toString(), PosixSettings.IO_THREADS, "3",
            PosixSettings.SPARE_TEMP_FILES, "5")), 20480);
        assertThat(set.ioThreads).as("an explicit io-threads wins over the host's default").isEqualTo(3);
        assertThat(set.spareTempFiles).as("an explicit spare-temp-files wins too").isEqualTo(5);
    }
}
