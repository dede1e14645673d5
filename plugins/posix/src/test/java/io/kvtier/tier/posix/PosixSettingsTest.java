package io.kvtier.tier.posix;

import io.kvtier.spi.TierConfig;
import io.kvtier.tier.support.PathLayout;
import io.kvtier.tier.support.SettingsTable;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

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
            PosixSettings.LAYOUT, PosixSettings.EXTENT_SIZE, PosixSettings.EXTENT_PREALLOCATE, PosixSettings.FIXED_BUFFERS_MAX);
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

    @Test
    void shouldLayANewUnsharedDirectoryOutInSlabsUnlessALayoutIsSet(@TempDir final Path dir)
    {
        final PosixSettings unset = parse(dir, true);
        assertThat(unset.layout).isEqualTo(PageLayout.SLAB);
        assertThat(unset.layoutReason).contains("this engine's alone");
        final PosixSettings set = parse(dir, true, PosixSettings.LAYOUT, "files");
        assertThat(set.layout).as("an explicit layout wins").isEqualTo(PageLayout.FILES);
        assertThat(set.layoutReason).as("nothing to explain when it was set").isNull();
        assertThat(parse(dir.resolve("not-yet-made"), true).layout).as("a directory made at start").isEqualTo(PageLayout.SLAB);
    }

    @Test
    void shouldKeepTheFilesLayoutWhereTheSlabCannotGo(@TempDir final Path dir)
    {
        final PosixSettings shared = parse(dir, true, PosixSettings.SHARED, "true");
        assertThat(shared.layout).isEqualTo(PageLayout.FILES);
        assertThat(shared.layoutReason).contains("tier.t.shared=true");
        final PosixSettings channel = parse(dir, true, PosixSettings.IO, "channel");
        assertThat(channel.layout).isEqualTo(PageLayout.FILES);
        assertThat(channel.layoutReason).contains("tier.t.io=channel");
        final PosixSettings noLibc = parse(dir, false);
        assertThat(noLibc.layout).isEqualTo(PageLayout.FILES);
        assertThat(noLibc.layoutReason).contains("LibC is unavailable");
    }

    @Test
    void shouldKeepTheFilesLayoutADirectoryAlreadyHoldsUnlessItAlsoHoldsASlab(@TempDir final Path root) throws IOException
    {
        final Path marked = Files.createDirectories(root.resolve("marked"));
        Files.createFile(marked.resolve(PathLayout.FANOUT_MARKER_PREFIX + "2"));
        assertThat(parse(marked, true).layout).as("a fan-out marker").isEqualTo(PageLayout.FILES);
        assertThat(parse(marked, true).layoutReason).contains("already holds the files layout").contains(PathLayout.FANOUT_MARKER_PREFIX + "2");

        final Path flat = Files.createDirectories(root.resolve("flat"));
        Files.createFile(flat.resolve("0123456789abcdef0123456789abcdef" + PathLayout.PAGE_SUFFIX));
        assertThat(parse(flat, true).layout).as("a page file at the top (fanout-levels = 0)").isEqualTo(PageLayout.FILES);

        final Path fanned = Files.createDirectories(root.resolve("fanned").resolve("a7"));
        assertThat(parse(fanned.getParent(), true).layout).as("a fan-out directory whose marker is not written yet").isEqualTo(PageLayout.FILES);

        final Path both = Files.createDirectories(root.resolve("both"));
        Files.createFile(both.resolve(PathLayout.FANOUT_MARKER_PREFIX + "1"));
        Files.createFile(both.resolve(SlabDescriptor.extentName(0)));
        assertThat(parse(both, true).layout).as("a slab beside old files: the slab goes on").isEqualTo(PageLayout.SLAB);

        final Path other = Files.createDirectories(root.resolve("other"));
        Files.createFile(other.resolve("notes.txt"));
        Files.createDirectories(other.resolve("A7"));
        assertThat(parse(other, true).layout).as("files of no layout of ours").isEqualTo(PageLayout.SLAB);
    }

    @Test
    void shouldMoveBytesWithLibcOnTmpfsUnlessAnIoPathIsSet() throws IOException
    {
        final Path shm = Path.of("/dev/shm");
        assumeTrue(Files.isDirectory(shm) && Files.isWritable(shm) && "tmpfs".equals(Files.getFileStore(shm).type()),
            "no writable tmpfs at /dev/shm here");
        final Path dir = Files.createTempDirectory(shm, "kvtier-posix-settings-");
        try
        {
            final PosixSettings unset = parse(dir, true);
            assertThat(unset.io).isEqualTo(IoPath.LIBC);
            assertThat(unset.ioReason).contains("tmpfs").contains("kernel worker thread");
            assertThat(parse(dir.resolve("made-at-start"), true).io).as("a directory made at start, on tmpfs").isEqualTo(IoPath.LIBC);
            final PosixSettings set = parse(dir, true, PosixSettings.IO, "uring");
            assertThat(set.io).as("an explicit io wins").isEqualTo(IoPath.URING);
            assertThat(set.ioReason).as("nothing to explain when it was set").isNull();
        }
        finally
        {
            Files.deleteIfExists(dir.resolve("made-at-start"));
            Files.deleteIfExists(dir);
        }
    }

    @Test
    void shouldMoveBytesWithIoUringElsewhereUnlessAnIoPathIsSet(@TempDir final Path dir) throws IOException
    {
        assumeFalse("tmpfs".equals(Files.getFileStore(dir).type()), "the temporary directory is on tmpfs here, where libc is the default");
        final PosixSettings unset = parse(dir, true);
        assertThat(unset.io).isEqualTo(IoPath.URING);
        assertThat(unset.ioReason).isNull();
        assertThat(parse(dir, true, PosixSettings.IO, "libc").io).isEqualTo(IoPath.LIBC);
        assertThat(PosixSettings.onTmpfs(dir.resolve("a").resolve("b"))).as("judged by the nearest existing ancestor").isFalse();
    }

    private static PosixSettings parse(final Path dir, final boolean libc, final String... pairs)
    {
        final Map<String, String> config = new java.util.HashMap<>();
        config.put(PosixSettings.DIR, dir.toString());
        for (int i = 0; i < pairs.length; i += 2)
        {
            config.put(pairs[i], pairs[i + 1]);
        }
        return PosixSettings.parse(new TierConfig("t", config), 20480, libc);
    }
}
