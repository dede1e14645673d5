package io.kvtier.tier.threefs;

import io.kvtier.spi.PageKey;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.TierCapability;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierConfigException;
import io.kvtier.spi.TierStatus;
import io.kvtier.spi.TrailerBlock;
import io.kvtier.tck.PageBytes;
import io.kvtier.tck.RecordingTierBatch;
import io.kvtier.tier.threefs.hf3fs.Hf3fsLibrary;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The USRBIO path's behaviour under the faults the fake library injects (EIO, I/Os that outlive the
 * timeout, short transfers, a refused prep), its start errors, zero-copy wrapping of a /dev/shm pool, and
 * that its files are the POSIX tier's.
 */
class ThreeFsTierTest extends UsrbioTierTestBase
{
    private Map<String, String> usrbio(final String... extra)
    {
        return settings(Map.of("dir", dir.toString(), "lib", FakeUsrbio.library().toString(), "usrbio", "on", "entries", "8",
            "fanout-levels", "1"), extra);
    }

    private static List<Path> tempFiles(final Path under) throws IOException
    {
        try (Stream<Path> files = Files.walk(under))
        {
            return files.filter(f -> f.getFileName().toString().endsWith(".tmp")).toList();
        }
    }

    @Test
    void shouldReportEioOnReadAsIoErrorForThatPageOnlyAndStayUsable()
    {
        // Relative: a test that abandons a ring leaves its registrations behind on purpose.
        final long registeredBefore = FakeUsrbio.stat(FakeUsrbio.STAT_REGISTERED);
        final StorageTier tier = open(usrbio());
        assertThat(tier.capabilities()).as("nothing offered to wrap").doesNotContain(TierCapability.ZERO_COPY);
        final List<PageKey> keys = keys(2);
        assertThat(run(tier::write, "write", keys, filled(1, 2)).statuses()).containsOnly(TierStatus.OK);

        FakeUsrbio.inject(FakeUsrbio.EIO, FakeUsrbio.READ, 1, 0);
        final RecordingTierBatch failed = run(tier::read, "read with EIO", keys, filled(7, 7));

        assertThat(failed.statuses()).containsExactly(TierStatus.IO_ERROR, TierStatus.OK);
        PageBytes.assertContent(failed.slice(1), 2, "the page without a fault");
        final RecordingTierBatch again = run(tier::read, "read again", keys, filled(7, 7));
        assertThat(again.statuses()).containsOnly(TierStatus.OK);
        PageBytes.assertContent(again.slice(0), 1, "the page read again");
        assertThat(FakeUsrbio.stat(FakeUsrbio.STAT_REGISTERED)).as("descriptors left registered").isEqualTo(registeredBefore);
    }

    @Test
    void shouldFailPagesStillInFlightAtTheDeadlineWithTimeoutAndStayUsable()
    {
        final StorageTier tier = open(usrbio("timeout", "100ms"));
        final List<PageKey> keys = keys(2);
        assertThat(run(tier::write, "write", keys, filled(1, 2)).statuses()).containsOnly(TierStatus.OK);

        FakeUsrbio.inject(FakeUsrbio.DELAY, FakeUsrbio.READ, 1, 600);
        final RecordingTierBatch late = run(tier::read, "read with a slow page", keys, filled(7, 7));

        assertThat(late.statuses()).containsExactly(TierStatus.TIMEOUT, TierStatus.OK);
        final RecordingTierBatch again = run(tier::read, "read again", keys, filled(7, 7));
        assertThat(again.statuses()).containsOnly(TierStatus.OK);
        PageBytes.assertContent(again.slice(0), 1, "the slow page, read again");
    }

    @Test
    void shouldReplaceARingWhoseIoNeverComesBack()
    {
        final StorageTier tier = open(usrbio("timeout", "50ms", "drain-timeout", "50ms"));
        final List<PageKey> keys = keys(1);
        assertThat(run(tier::write, "write", keys, filled(1)).statuses()).containsOnly(TierStatus.OK);

        FakeUsrbio.inject(FakeUsrbio.DELAY, FakeUsrbio.READ, 1, 3_600_000);
        assertThat(run(tier::read, "read that hangs", keys, filled(7)).statuses()).containsExactly(TierStatus.TIMEOUT);

        final RecordingTierBatch again = run(tier::read, "read on the new ring", keys, filled(7));
        assertThat(again.statuses()).containsExactly(TierStatus.OK);
        PageBytes.assertContent(again.slice(0), 1, "the page, read on the new ring");
    }

    @Test
    void shouldNeverServeAShortRead()
    {
        final StorageTier tier = open(usrbio());
        final List<PageKey> keys = keys(1);
        assertThat(run(tier::write, "write", keys, filled(1)).statuses()).containsOnly(TierStatus.OK);

        FakeUsrbio.inject(FakeUsrbio.SHORT, FakeUsrbio.READ, 1, 0);
        final RecordingTierBatch shortRead = run(tier::read, "short read", keys, filled(7));

        assertThat(shortRead.statuses()).containsExactly(TierStatus.IO_ERROR);
        // Staged memory is copied to the page only for OK: the destination still holds what it held.
        PageBytes.assertContent(shortRead.slice(0), 7, "the destination of a short read");
    }

    @Test
    void shouldFailShortAndFailedWritesWithoutTouchingThePreviousObject() throws IOException
    {
        final StorageTier tier = open(usrbio());
        final List<PageKey> keys = keys(1);
        assertThat(run(tier::write, "first version", keys, filled(1)).statuses()).containsOnly(TierStatus.OK);

        FakeUsrbio.inject(FakeUsrbio.SHORT, FakeUsrbio.WRITE, 1, 0);
        assertThat(run(tier::write, "short write", keys, filled(2)).statuses()).containsExactly(TierStatus.IO_ERROR);
        FakeUsrbio.inject(FakeUsrbio.EIO, FakeUsrbio.WRITE, 1, 0);
        assertThat(run(tier::write, "write with EIO", keys, filled(3)).statuses()).containsExactly(TierStatus.IO_ERROR);
        final List<PageKey> fresh = keys(1);
        FakeUsrbio.inject(FakeUsrbio.SHORT, FakeUsrbio.WRITE, 1, 0);
        assertThat(run(tier::write, "short write of a new key", fresh, filled(4)).statuses()).containsExactly(TierStatus.IO_ERROR);

        final RecordingTierBatch read = run(tier::read, "read", keys, filled(7));
        assertThat(read.statuses()).containsExactly(TierStatus.OK);
        PageBytes.assertContent(read.slice(0), 1, "the first version, after failed rewrites");
        assertThat(run(tier::exists, "exists", fresh, List.of(MemorySegment.NULL)).statuses()).containsExactly(TierStatus.NOT_FOUND);
        assertThat(tempFiles(dir)).as("temp files of failed writes").isEmpty();
        assertThat(tier.usage().objects()).isEqualTo(1);
    }

    @Test
    void shouldFailOnlyThePagesTheRingRefuses()
    {
        final StorageTier tier = open(usrbio());
        FakeUsrbio.inject(FakeUsrbio.PREP_EAGAIN, FakeUsrbio.WRITE, 1, 0);
        final List<PageKey> keys = keys(3);

        assertThat(run(tier::write, "write", keys, filled(1, 2, 3)).statuses()).containsExactly(TierStatus.IO_ERROR, TierStatus.OK, TierStatus.OK);
    }

    /** An engine frame: payload of {@code seed}, a trailer of {@code ~seed}, zeros. */
    private List<MemorySegment> frames(final long... seeds)
    {
        final List<MemorySegment> segments = new ArrayList<>();
        for (final long seed : seeds)
        {
            final MemorySegment segment = arena.slice(SIZE);
            final long last = SIZE - TrailerBlock.BYTES;
            PageBytes.fill(segment.asSlice(0, last), seed);
            PageBytes.fill(segment.asSlice(last, TrailerBlock.TRAILER_BYTES), ~seed);
            segment.asSlice(last + TrailerBlock.TRAILER_BYTES).fill((byte)0);
            segments.add(segment);
        }
        return segments;
    }

    private static void assertFrame(final MemorySegment frame, final long seed, final String what)
    {
        final long last = SIZE - TrailerBlock.BYTES;
        PageBytes.assertContent(frame.asSlice(0, last), seed, what + " (its payload)");
        PageBytes.assertContent(frame.asSlice(last, TrailerBlock.TRAILER_BYTES), ~seed, what + " (its trailer)");
        assertThat(frame.asSlice(last + TrailerBlock.TRAILER_BYTES).mismatch(MemorySegment.ofArray(new byte[TrailerBlock.BYTES - TrailerBlock.TRAILER_BYTES])))
            .as(what + ": zeros after the trailer").isEqualTo(-1L);
    }

    private List<Long> pageFileSizes() throws IOException
    {
        try (Stream<Path> files = Files.walk(dir))
        {
            return files.filter(f -> f.getFileName().toString().endsWith(".kvp")).map(f ->
            {
                try
                {
                    return Files.size(f);
                }
                catch (final IOException ex)
                {
                    throw new java.io.UncheckedIOException(ex);
                }
            }).sorted().toList();
        }
    }

    @Test
    void shouldStoreAnEngineFrameAsItsPayloadAndTrailerAndServeItWholeHereAndToThePosixTier() throws IOException
    {
        final long compact = TrailerBlock.compactLength(SIZE);
        final StorageTier tier = open(usrbio());
        final List<PageKey> keys = keys(3);
        // An engine frame; one with noise past its trailer, which the batch declares padding; one of noise, undeclared.
        final List<MemorySegment> sources = new ArrayList<>(frames(21));
        sources.addAll(filled(22, 23));
        final RecordingTierBatch declared = new RecordingTierBatch("write, padding declared", keys.subList(0, 2), sources.subList(0, 2))
            .withTrailerBlockPadding();
        tier.write(declared);
        assertThat(declared.awaitCompletion(DEADLINE).statuses()).containsOnly(TierStatus.OK);
        assertThat(run(tier::write, "write noise", keys.subList(2, 3), sources.subList(2, 3)).statuses()).containsOnly(TierStatus.OK);

        assertThat(pageFileSizes()).as("page files: two frames kept as payload and trailer, the noise whole").containsExactly(compact, compact, SIZE);
        assertThat(tier.usage().usedBytes()).isEqualTo(2 * compact + SIZE);
        assertThat(run(tier::exists, "exists", keys, List.of(MemorySegment.NULL, MemorySegment.NULL, MemorySegment.NULL)).statuses())
            .containsOnly(TierStatus.OK);
        assertCompactFramesReadBack(tier, keys, "through USRBIO");
        tier.close();

        final StorageTier restarted = open(usrbio());
        assertThat(restarted.usage().usedBytes()).as("after the restart's scan").isEqualTo(2 * compact + SIZE);
        assertCompactFramesReadBack(restarted, keys, "through USRBIO after a restart");
        restarted.close();

        assertCompactFramesReadBack(open(usrbio("usrbio", "off")), keys, "by the POSIX tier on the mount");
    }

    private void assertCompactFramesReadBack(final StorageTier tier, final List<PageKey> keys, final String how)
    {
        final RecordingTierBatch read = run(tier::read, "read " + how, keys, filled(90, 91, 92));
        assertThat(read.statuses()).as(how).containsOnly(TierStatus.OK);
        assertFrame(read.slice(0), 21, "the engine frame read " + how);
        final MemorySegment expected = Arena.ofAuto().allocate(SIZE);
        PageBytes.fill(expected, 22);
        expected.asSlice(SIZE - TrailerBlock.BYTES + TrailerBlock.TRAILER_BYTES).fill((byte)0);
        assertThat(read.slice(1).mismatch(expected)).as("declared padding read " + how + ": zeros past the trailer").isEqualTo(-1L);
        PageBytes.assertContent(read.slice(2), 23, "the noise read " + how);
    }

    @Test
    void shouldMovePagesInAWrappedShmPoolWithNoCopy() throws IOException
    {
        final long wrappedBefore = FakeUsrbio.stat(FakeUsrbio.STAT_WRAPPED);
        withShmPool(8, (poolFile, pool) ->
        {
            // Offered as the engine offers its page frames: wrapped at start, before any page moves.
            final StorageTier tier = open(usrbio());
            assertThat(FakeUsrbio.stat(FakeUsrbio.STAT_WRAPPED)).as("iovs wrapped at start").isEqualTo(wrappedBefore + 1);
            assertThat(tier.capabilities()).contains(TierCapability.ZERO_COPY);
            final List<PageKey> keys = keys(4);
            final List<MemorySegment> sources = poolPages(pool, 0, 4);
            final List<MemorySegment> destinations = poolPages(pool, 4, 4);
            for (int i = 0; i < 4; i++)
            {
                PageBytes.fill(sources.get(i), 10 + i);
            }

            assertThat(run(tier::write, "write from the pool", keys, sources).statuses()).containsOnly(TierStatus.OK);
            final RecordingTierBatch read = run(tier::read, "read into the pool", keys, destinations);

            assertThat(read.statuses()).containsOnly(TierStatus.OK);
            for (int i = 0; i < 4; i++)
            {
                PageBytes.assertContent(destinations.get(i), 10 + i, "page " + i + " read into the pool");
            }
            assertThat(FakeUsrbio.stat(FakeUsrbio.STAT_WRAPPED)).as("iovs wrapped, once").isEqualTo(wrappedBefore + 1);
            try (Stream<Path> links = Files.list(dir.resolveSibling("3fs-virt").resolve("iovs")))
            {
                assertThat(links.filter(l -> Files.isSymbolicLink(l) && readLink(l).equals(poolFile))).hasSize(1);
            }
            tier.close();
            try (Stream<Path> links = Files.list(dir.resolveSibling("3fs-virt").resolve("iovs")))
            {
                assertThat(links.filter(l -> Files.isSymbolicLink(l) && readLink(l).equals(poolFile))).as("registration after close").isEmpty();
            }
        });
    }

    private static Path readLink(final Path link)
    {
        try
        {
            return Files.readSymbolicLink(link);
        }
        catch (final IOException ex)
        {
            return link;
        }
    }

    @Test
    void shouldShareFilesWithThePosixTierOnTheSameDirectory()
    {
        final List<PageKey> viaUsrbio = keys(2);
        final List<PageKey> viaPosix = keys(2);
        final StorageTier usrbioTier = open(usrbio());
        assertThat(run(usrbioTier::write, "write via USRBIO", viaUsrbio, filled(1, 2)).statuses()).containsOnly(TierStatus.OK);
        final StorageTier posixTier = open(Map.of("dir", dir.toString(), "usrbio", "off", "fanout-levels", "1"));
        assertThat(posixTier.getClass().getSimpleName()).isEqualTo("PosixTier");
        assertThat(run(posixTier::write, "write via POSIX", viaPosix, filled(3, 4)).statuses()).containsOnly(TierStatus.OK);

        final RecordingTierBatch posixRead = run(posixTier::read, "read via POSIX", viaUsrbio, filled(0, 0));
        final RecordingTierBatch usrbioRead = run(usrbioTier::read, "read via USRBIO", viaPosix, filled(0, 0));

        assertThat(posixRead.statuses()).containsOnly(TierStatus.OK);
        assertThat(usrbioRead.statuses()).containsOnly(TierStatus.OK);
        PageBytes.assertContent(posixRead.slice(1), 2, "a USRBIO page read by the POSIX tier");
        PageBytes.assertContent(usrbioRead.slice(1), 4, "a POSIX page read through USRBIO");
    }

    @Test
    void shouldAdoptPagesAndDeleteStaleTempFilesLeftByAWriterThatDied() throws IOException
    {
        final List<PageKey> keys = keys(2);
        final StorageTier before = open(usrbio());
        assertThat(run(before::write, "write", keys, filled(1, 2)).statuses()).containsOnly(TierStatus.OK);
        before.close();
        final io.kvtier.tier.support.PathLayout layout = new io.kvtier.tier.support.PathLayout(dir, 1);
        final Path page = layout.pagePath(keys.get(0).high(), keys.get(0).low());
        final Path stale = io.kvtier.tier.support.PathLayout.tempPath(page, 1, 0);
        final Path young = io.kvtier.tier.support.PathLayout.tempPath(page, 1, 1);
        Files.write(stale, new byte[(int)SIZE / 2]);
        Files.write(young, new byte[(int)SIZE / 2]);
        Files.setLastModifiedTime(stale, java.nio.file.attribute.FileTime.from(java.time.Instant.now().minus(Duration.ofHours(1))));

        final StorageTier after = open(usrbio("tmp-max-age", "10m"));

        assertThat(stale).as("a temp file older than tmp-max-age: its writer died").doesNotExist();
        assertThat(young).as("a younger one may be a write in progress on another node").exists();
        assertThat(after.usage().objects()).isEqualTo(2);
        assertThat(after.usage().usedBytes()).isEqualTo(2 * SIZE);
        final RecordingTierBatch read = run(after::read, "read after restart", keys, filled(0, 0));
        assertThat(read.statuses()).containsOnly(TierStatus.OK);
        PageBytes.assertContent(read.slice(0), 1, "a page kept across the restart, beside a torn temp file");
    }

    @Test
    void shouldLogThatItUsesUsrbioAndThroughWhichLibrary()
    {
        final RecordingContext recording = new RecordingContext("t", SIZE);
        opened.add(new ThreeFsTierProvider(Map.of()).create(new TierConfig("t", usrbio()), recording));

        assertThat(recording.lines()).anySatisfy(line -> assertThat(line).startsWith("INFO").contains("io=USRBIO through " + FakeUsrbio.library()));
    }

    @Test
    void shouldReleaseEveryRegistrationAndRingOnClose()
    {
        final long ringsBefore = FakeUsrbio.stat(FakeUsrbio.STAT_RINGS);
        final long registeredBefore = FakeUsrbio.stat(FakeUsrbio.STAT_REGISTERED);
        final StorageTier tier = open(usrbio());
        assertThat(FakeUsrbio.stat(FakeUsrbio.STAT_RINGS)).as("a read ring and a write ring").isEqualTo(ringsBefore + 2);
        final List<PageKey> keys = keys(3);
        assertThat(run(tier::write, "write", keys, filled(1, 2, 3)).statuses()).containsOnly(TierStatus.OK);
        assertThat(run(tier::read, "read", keys, filled(0, 0, 0)).statuses()).containsOnly(TierStatus.OK);

        tier.close();

        assertThat(FakeUsrbio.stat(FakeUsrbio.STAT_RINGS)).isEqualTo(ringsBefore);
        assertThat(FakeUsrbio.stat(FakeUsrbio.STAT_REGISTERED)).isEqualTo(registeredBefore);
    }

    @Test
    void shouldRefuseToStartOnAMissingDirectory()
    {
        final Map<String, String> config = usrbio("dir", root.resolve("absent").toString());

        assertThatThrownBy(() -> open(config)).isInstanceOf(TierConfigException.class)
            .hasMessageContaining("tier.t.dir").hasMessageContaining("does not exist");
    }

    @Test
    void shouldRefuseToStartOnADirectoryNotOn3Fs() throws IOException
    {
        final Path plain = Files.createDirectories(root.resolve("plain"));

        assertThatThrownBy(() -> open(usrbio("dir", plain.toString()))).isInstanceOf(TierConfigException.class)
            .hasMessageContaining("tier.t.dir").hasMessageContaining("no 3FS mount").hasMessageContaining("usrbio=off");
    }

    @Test
    void shouldNameTheLibraryAndWhatItLacks()
    {
        final String missing = root.resolve("lib/libhf3fs_api_shared.so").toString();

        assertThatThrownBy(() -> open(usrbio("lib", missing))).isInstanceOf(TierConfigException.class)
            .hasMessageContaining("tier.t.lib").hasMessageContaining(missing).hasMessageContaining("does not exist");
        assertThatThrownBy(() -> open(usrbio("lib", FakeUsrbio.incompleteLibrary().toString()))).isInstanceOf(TierConfigException.class)
            .hasMessageContaining("tier.t.lib").hasMessageContaining("lacks hf3fs_wait_for_ios");
        final Map<String, String> fromEnvironment = usrbio();
        fromEnvironment.remove("lib");
        assertThatThrownBy(() -> open(fromEnvironment, Map.of(Hf3fsLibrary.LIBRARY_ENV_NAME, missing))).isInstanceOf(TierConfigException.class)
            .hasMessageContaining(Hf3fsLibrary.LIBRARY_ENV_NAME).hasMessageContaining(missing);
    }

    @Test
    void shouldFailWhenUsrbioIsRequiredButNoLibraryIsFound()
    {
        org.junit.jupiter.api.Assumptions.assumeTrue(Hf3fsLibrary.check(Hf3fsLibrary.SONAME).isPresent(), "skipped: a real USRBIO library is installed");
        final Map<String, String> config = usrbio();
        config.remove("lib");

        assertThatThrownBy(() -> open(config)).isInstanceOf(TierConfigException.class)
            .hasMessageContaining("tier.t.usrbio").hasMessageContaining(Hf3fsLibrary.SONAME).hasMessageContaining(Hf3fsLibrary.LIBRARY_ENV_NAME);
    }

    @Test
    void shouldFallBackToPosixIoWhenNoLibraryIsFound()
    {
        org.junit.jupiter.api.Assumptions.assumeTrue(Hf3fsLibrary.check(Hf3fsLibrary.SONAME).isPresent(), "skipped: a real USRBIO library is installed");

        final RecordingContext recording = new RecordingContext("t", SIZE);
        final StorageTier tier = new ThreeFsTierProvider(Map.of()).create(new TierConfig("t", Map.of("dir", dir.toString(), "fanout-levels", "1")),
            recording);
        opened.add(tier);

        assertThat(tier.getClass().getSimpleName()).isEqualTo("PosixTier");
        assertThat(recording.lines()).as("the log says POSIX I/O is used, and why")
            .anySatisfy(line -> assertThat(line).startsWith("WARNING").contains("not using USRBIO").contains(Hf3fsLibrary.SONAME)
                .contains("POSIX I/O on " + dir));
        final List<PageKey> keys = keys(1);
        assertThat(run(tier::write, "write", keys, filled(1)).statuses()).containsOnly(TierStatus.OK);
    }
}
