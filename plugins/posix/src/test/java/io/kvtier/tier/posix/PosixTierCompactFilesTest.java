package io.kvtier.tier.posix;

import io.kvtier.spi.PageKey;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.TierStatus;
import io.kvtier.spi.TrailerBlock;
import io.kvtier.tck.ContractTierContext;
import io.kvtier.tck.PageArena;
import io.kvtier.tck.PageBytes;
import io.kvtier.tck.RecordingTierBatch;
import io.kvtier.tier.support.PathLayout;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Page files in the compact form another node's 3FS tier writes into a shared directory (an engine frame less the
 * zeros past its trailer, {@link TrailerBlock#compactLength}): every I/O path of the files layout, with O_DIRECT and
 * without, reads them into a whole frame with the zeros put back, probes them as present, and still refuses a file of
 * any other size.
 */
class PosixTierCompactFilesTest
{
    private static final String NAME = "t";
    private static final long SIZE = 64 * 1024;
    private static final long COMPACT = TrailerBlock.compactLength(SIZE);

    @TempDir
    Path dir;
    private final PosixTierFixture fixture = new PosixTierFixture(NAME);

    @AfterEach
    void tearDown()
    {
        fixture.close();
    }

    /** Writes a page file of {@code bytes} bytes of the frame of {@code seed}, as a writer elsewhere would have. */
    private static void writePageFile(final Path dir, final PageKey key, final long seed, final long bytes) throws IOException
    {
        final byte[] frame = new byte[(int)SIZE];
        final MemorySegment bytesOf = MemorySegment.ofArray(frame);
        final long last = SIZE - TrailerBlock.BYTES;
        PageBytes.fill(bytesOf.asSlice(0, last), seed);
        PageBytes.fill(bytesOf.asSlice(last, TrailerBlock.TRAILER_BYTES), ~seed);
        final Path page = new PathLayout(dir, 1).pagePath(key.high(), key.low());
        Files.createDirectories(page.getParent());
        Files.write(page, java.util.Arrays.copyOf(frame, (int)bytes));
    }

    private static void assertFrame(final MemorySegment frame, final long seed, final String what)
    {
        final long last = SIZE - TrailerBlock.BYTES;
        PageBytes.assertContent(frame.asSlice(0, last), seed, what + " (its payload)");
        PageBytes.assertContent(frame.asSlice(last, TrailerBlock.TRAILER_BYTES), ~seed, what + " (its trailer)");
        assertThat(frame.asSlice(last + TrailerBlock.TRAILER_BYTES).mismatch(Arena.ofAuto().allocate(TrailerBlock.BYTES - TrailerBlock.TRAILER_BYTES)))
            .as(what + ": zeros after the trailer, over the noise the destination held").isEqualTo(-1L);
    }

    @ParameterizedTest(name = "io={0}, direct-io={1}, shared={2}")
    @CsvSource({"uring,true,true", "uring,false,false", "libc,true,false", "libc,false,true", "channel,false,true", "channel,false,false"})
    void shouldReadACompactPageFileIntoAWholeFrameAndRefuseOtherSizes(final String io, final boolean directIo, final boolean shared)
        throws IOException
    {
        final List<PageKey> keys = fixture.keys(3);
        writePageFile(dir, keys.get(0), 11, COMPACT);
        writePageFile(dir, keys.get(1), 12, SIZE);
        writePageFile(dir, keys.get(2), 13, COMPACT + 1);
        final StorageTier tier = fixture.open(new PosixTierProvider(), new ContractTierContext(NAME, SIZE), dir,
            List.of("layout", "files", "fanout-levels", "1", "io", io, "direct-io", Boolean.toString(directIo), "shared", Boolean.toString(shared)));
        final PageArena arena = fixture.arena(6, SIZE);
        final List<MemorySegment> destinations = arena.slices(3, SIZE);
        for (int i = 0; i < 3; i++)
        {
            PageBytes.fill(destinations.get(i), -1 - i);
        }

        final RecordingTierBatch read = new RecordingTierBatch("read", keys, destinations);
        tier.read(read);
        read.awaitCompletion(PosixTierFixture.DEADLINE);
        final RecordingTierBatch probed = PosixTierFixture.exists(tier, keys);

        assertThat(read.statuses()).containsExactly(TierStatus.OK, TierStatus.OK, TierStatus.CORRUPT);
        assertFrame(read.slice(0), 11, "the compact file");
        assertFrame(read.slice(1), 12, "the whole file");
        assertThat(probed.statuses()).containsExactly(TierStatus.OK, TierStatus.OK, TierStatus.CORRUPT);
    }
}
