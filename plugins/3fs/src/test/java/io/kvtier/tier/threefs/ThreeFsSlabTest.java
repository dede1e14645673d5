package io.kvtier.tier.threefs;

import io.kvtier.spi.PageKey;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.TierCapability;
import io.kvtier.spi.TierConfigException;
import io.kvtier.spi.TierStatus;
import io.kvtier.tck.PageBytes;
import io.kvtier.tck.RecordingTierBatch;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code layout = slab} on the USRBIO path, through the real FFM binding and the fake library: pages kept in extent
 * files whose slots USRBIO reads and writes (each extent registered once, not a file a page), kept across a restart and
 * shared with the POSIX tier's slab on the same directory, and the fake's faults (EIO, short transfers, I/Os that outlive
 * the timeout or never come back) never serving wrong bytes and leaving the tier usable.
 */
class ThreeFsSlabTest extends UsrbioTierTestBase
{
    private Map<String, String> slab(final String... extra)
    {
        return settings(Map.of("dir", dir.toString(), "lib", FakeUsrbio.library().toString(), "usrbio", "on", "layout", "slab",
            "extent-size", "4MiB", "entries", "8", "io-threads", "1"), extra);
    }

    private static void assertPages(final RecordingTierBatch read, final long firstSeed, final String what)
    {
        assertThat(read.statuses()).as(what).containsOnly(TierStatus.OK);
        for (int i = 0; i < read.statuses().size(); i++)
        {
            PageBytes.assertContent(read.slice(i), firstSeed + i, what + ", page " + i);
        }
    }

    private List<Path> files() throws IOException
    {
        try (Stream<Path> walk = Files.walk(dir))
        {
            return walk.filter(Files::isRegularFile).toList();
        }
    }

    @Test
    void shouldKeepPagesInExtentsWhoseSlotsUsrbioMovesRegisteringEachExtentOnce() throws IOException
    {
        final long registeredBefore = FakeUsrbio.stat(FakeUsrbio.STAT_REGISTERED);
        final long ringsBefore = FakeUsrbio.stat(FakeUsrbio.STAT_RINGS);
        final StorageTier tier = open(slab());
        assertThat(FakeUsrbio.stat(FakeUsrbio.STAT_RINGS)).as("a read ring and a write ring for the one I/O thread").isEqualTo(ringsBefore + 2);
        assertThat(tier.capabilities()).as("one engine's directory").doesNotContain(TierCapability.SHARED);
        assertThat(tier.describe()).startsWith("io=usrbio").contains("layout=slab");
        final List<PageKey> keys = keys(20);
        final long completedBefore = FakeUsrbio.stat(FakeUsrbio.STAT_COMPLETED);

        assertThat(run(tier::write, "write", keys, filledFrom(20, 100)).statuses()).containsOnly(TierStatus.OK);
        assertPages(run(tier::read, "read", keys, filledFrom(20, 0)), 100, "read back");

        // Pages of noise are stored whole: 60 KiB in the slot and their last 4 KiB block in the slot's tail area, two
        // transfers a page each way (an engine frame's last block is its trailer, kept in the frame header instead).
        assertThat(FakeUsrbio.stat(FakeUsrbio.STAT_COMPLETED) - completedBefore).as("USRBIO I/Os: two a page written and two a page read")
            .isEqualTo(80);
        assertThat(FakeUsrbio.stat(FakeUsrbio.STAT_REGISTERED) - registeredBefore).as("descriptors registered: the one extent, not a page each")
            .isEqualTo(1);
        assertThat(files()).as("no file a page: the extent and the slab's lock").allSatisfy(file ->
            assertThat(file.getFileName().toString()).doesNotEndWith(".kvp").doesNotEndWith(".tmp"));
        final Path extent = files().stream().filter(file -> file.getFileName().toString().endsWith(".kvs")).findFirst().orElseThrow();
        assertThat(allocatedBytes(extent)).as("an extent sized, not preallocated (3FS's FUSE client has no fallocate)")
            .isLessThan(Files.size(extent) / 2);

        tier.close();
        assertThat(FakeUsrbio.stat(FakeUsrbio.STAT_REGISTERED)).as("registrations after close").isEqualTo(registeredBefore);
        assertThat(FakeUsrbio.stat(FakeUsrbio.STAT_RINGS)).as("rings after close").isEqualTo(ringsBefore);
    }

    /** @return the bytes of {@code file}'s allocated blocks, as {@code stat} reports them */
    private static long allocatedBytes(final Path file) throws IOException
    {
        final Process stat = new ProcessBuilder("stat", "-c", "%b %B", file.toString()).redirectErrorStream(true).start();
        final String[] said = new String(stat.getInputStream().readAllBytes()).trim().split(" ");
        try
        {
            assertThat(stat.waitFor()).as("stat of %s said %s", file, String.join(" ", said)).isZero();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IOException(ex);
        }
        return Long.parseLong(said[0]) * Long.parseLong(said[1]);
    }

    @Test
    void shouldServeItsPagesAfterARestart()
    {
        final List<PageKey> keys = keys(12);
        final StorageTier first = open(slab());
        assertThat(run(first::write, "write", keys, filledFrom(12, 40)).statuses()).containsOnly(TierStatus.OK);
        first.close();

        final StorageTier second = open(slab());

        assertThat(second.usage().objects()).isEqualTo(12);
        assertPages(run(second::read, "read after a restart", keys, filledFrom(12, 0)), 40, "read after a restart");
    }

    @Test
    void shouldShareItsExtentsWithThePosixTiersSlabOnTheSameDirectory()
    {
        final List<PageKey> keys = keys(6);
        final StorageTier posix = open(slab("usrbio", "off"));
        assertThat(run(posix::write, "write through the mount", keys, filledFrom(6, 7)).statuses()).containsOnly(TierStatus.OK);
        posix.close();

        final StorageTier usrbio = open(slab());
        assertPages(run(usrbio::read, "read through USRBIO", keys, filledFrom(6, 0)), 7, "written by the POSIX slab, read through USRBIO");
        final List<PageKey> more = keys(3);
        assertThat(run(usrbio::write, "write through USRBIO", more, filledFrom(3, 70)).statuses()).containsOnly(TierStatus.OK);
        usrbio.close();

        final StorageTier again = open(slab("usrbio", "off"));
        assertPages(run(again::read, "read through the mount", more, filledFrom(3, 0)), 70, "written through USRBIO, read by the POSIX slab");
    }

    @Test
    void shouldRetryAPageAloneAfterAnEioAndFailItWhenTheRetryFailsToo()
    {
        final StorageTier tier = open(slab());
        final List<PageKey> keys = keys(3);
        assertThat(run(tier::write, "write", keys, filledFrom(3, 1)).statuses()).containsOnly(TierStatus.OK);

        FakeUsrbio.inject(FakeUsrbio.EIO, FakeUsrbio.READ, 1, 0);
        assertPages(run(tier::read, "read with one EIO", keys, filledFrom(3, 0)), 1, "a page whose batched read failed once, read again alone");

        // A page's two batched transfers and its first one alone all fail.
        FakeUsrbio.inject(FakeUsrbio.EIO, FakeUsrbio.READ, 3, 0);
        final RecordingTierBatch failed = run(tier::read, "read with EIO three times", keys.subList(0, 1), filledFrom(1, 50));
        assertThat(failed.statuses()).containsExactly(TierStatus.IO_ERROR);
        PageBytes.assertContent(failed.slice(0), 50, "the destination of the failed read, as it was");

        assertPages(run(tier::read, "read again", keys, filledFrom(3, 0)), 1, "read again");
    }

    @Test
    void shouldNeverServeAShortRead()
    {
        final StorageTier tier = open(slab());
        final List<PageKey> keys = keys(1);
        assertThat(run(tier::write, "write", keys, filledFrom(1, 1)).statuses()).containsOnly(TierStatus.OK);

        FakeUsrbio.inject(FakeUsrbio.SHORT, FakeUsrbio.READ, 3, 0);
        final RecordingTierBatch shortRead = run(tier::read, "short read", keys, filledFrom(1, 9));

        assertThat(shortRead.statuses()).containsExactly(TierStatus.IO_ERROR);
        PageBytes.assertContent(shortRead.slice(0), 9, "the destination of a short read, as it was");
        assertPages(run(tier::read, "read again", keys, filledFrom(1, 0)), 1, "read again");
    }

    @Test
    void shouldKeepThePreviousFrameWhenARewriteFails()
    {
        final StorageTier tier = open(slab());
        final List<PageKey> keys = keys(1);
        assertThat(run(tier::write, "first version", keys, filledFrom(1, 1)).statuses()).containsOnly(TierStatus.OK);

        FakeUsrbio.inject(FakeUsrbio.SHORT, FakeUsrbio.WRITE, 3, 0);
        assertThat(run(tier::write, "short write", keys, filledFrom(1, 2)).statuses()).containsExactly(TierStatus.IO_ERROR);
        FakeUsrbio.inject(FakeUsrbio.EIO, FakeUsrbio.WRITE, 3, 0);
        assertThat(run(tier::write, "write with EIO", keys, filledFrom(1, 3)).statuses()).containsExactly(TierStatus.IO_ERROR);
        final List<PageKey> fresh = keys(1);
        FakeUsrbio.inject(FakeUsrbio.EIO, FakeUsrbio.WRITE, 3, 0);
        assertThat(run(tier::write, "failed write of a new key", fresh, filledFrom(1, 4)).statuses()).containsExactly(TierStatus.IO_ERROR);

        assertPages(run(tier::read, "read", keys, filledFrom(1, 0)), 1, "the first version, after failed rewrites");
        assertThat(run(tier::read, "read the new key", fresh, filledFrom(1, 0)).statuses()).containsExactly(TierStatus.NOT_FOUND);
        assertThat(tier.usage().objects()).isEqualTo(1);
    }

    @Test
    void shouldGiveUpOnAReadPastTheTimeoutAndServeItOnceItIsBack()
    {
        final StorageTier tier = open(slab("timeout", "100ms"));
        final List<PageKey> keys = keys(2);
        assertThat(run(tier::write, "write", keys, filledFrom(2, 1)).statuses()).containsOnly(TierStatus.OK);

        // The batched read outlives the timeout and is drained; the page is then read again alone.
        FakeUsrbio.inject(FakeUsrbio.DELAY, FakeUsrbio.READ, 1, 600);
        assertPages(run(tier::read, "read with a slow page", keys, filledFrom(2, 0)), 1, "a slow page, read again alone");
    }

    @Test
    void shouldReplaceARingWhoseIoNeverComesBackAndStayUsable()
    {
        final StorageTier tier = open(slab("timeout", "50ms", "drain-timeout", "50ms"));
        final List<PageKey> keys = keys(1);
        assertThat(run(tier::write, "write", keys, filledFrom(1, 1)).statuses()).containsOnly(TierStatus.OK);
        final long ringsBefore = FakeUsrbio.stat(FakeUsrbio.STAT_RINGS);

        FakeUsrbio.inject(FakeUsrbio.DELAY, FakeUsrbio.READ, 1, 3_600_000);
        final RecordingTierBatch read = run(tier::read, "read that hangs, then again alone on a new ring", keys, filledFrom(1, 5));

        assertPages(read, 1, "read again alone on a new ring");
        assertThat(FakeUsrbio.stat(FakeUsrbio.STAT_RINGS)).as("the abandoned ring is kept, never reused, beside its replacement")
            .isEqualTo(ringsBefore + 1);
        final List<PageKey> more = keys(2);
        assertThat(run(tier::write, "write after", more, filledFrom(2, 20)).statuses()).containsOnly(TierStatus.OK);
        assertPages(run(tier::read, "read after", more, filledFrom(2, 0)), 20, "pages written and read after the ring was replaced");
    }

    @Test
    void shouldMovePagesInAWrappedShmPoolWithNoCopy() throws IOException
    {
        final long wrappedBefore = FakeUsrbio.stat(FakeUsrbio.STAT_WRAPPED);
        withShmPool(16, (poolFile, pool) ->
        {
            final StorageTier tier = open(slab());
            assertThat(FakeUsrbio.stat(FakeUsrbio.STAT_WRAPPED)).as("the engine's frames wrapped at start").isEqualTo(wrappedBefore + 1);
            final List<PageKey> keys = keys(8);
            final List<MemorySegment> sources = poolPages(pool, 0, 8);
            for (int i = 0; i < 8; i++)
            {
                PageBytes.fill(sources.get(i), 30 + i);
            }

            assertThat(run(tier::write, "write from the pool", keys, sources).statuses()).containsOnly(TierStatus.OK);
            assertPages(run(tier::read, "read into the pool", keys, poolPages(pool, 8, 8)), 30, "read into the pool");
            assertThat(FakeUsrbio.stat(FakeUsrbio.STAT_WRAPPED)).as("wrapped once").isEqualTo(wrappedBefore + 1);
            tier.close();
        });
    }

    @Test
    void shouldRefuseAnExtentSizeWithTheFilesLayoutNamingBothSettings()
    {
        assertThatThrownBy(() -> open(slab("layout", "files")))
            .isInstanceOf(TierConfigException.class)
            .hasMessageContaining("tier.t.extent-size")
            .hasMessageContaining("tier.t.layout=files");
    }
}
