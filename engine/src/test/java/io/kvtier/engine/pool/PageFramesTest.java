package io.kvtier.engine.pool;

import io.kvtier.client.pool.PageFrameDescriptor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.zip.CRC32C;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The frame codec on its own: what sealing writes and clears, and what verification accepts. The
 * page size is larger than the block of zeroes tails are cleared from, so every branch of the
 * clearing runs.
 */
class PageFramesTest
{
    private static final int PAGE_SIZE = 256 << 10;
    private static final long HIGH = 0x0123456789ABCDEFL;
    private static final long LOW = 0x0FEDCBA987654321L;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    @TempDir
    Path dir;

    private PagePool pool;
    private PageFrames frames;

    @BeforeEach
    void create() throws IOException
    {
        pool = PagePool.create(dir.resolve("pool"), PAGE_SIZE, 2, 64, 2, Duration.ofSeconds(30));
        frames = pool.frames();
    }

    @AfterEach
    void close()
    {
        pool.close();
    }

    private static byte patternAt(final long i)
    {
        return (byte)(i * 31 + 7);
    }

    private void write(final int page, final int length)
    {
        final MemorySegment payload = frames.payload(page);
        payload.fill((byte)0x5A);
        for (long i = 0; i < length; i++)
        {
            payload.set(ValueLayout.JAVA_BYTE, i, patternAt(i));
        }
    }

    @Test
    void shouldKeepThePayloadAndZeroExactlyTheRestOfThePage()
    {
        for (final int length : new int[] {1, 7, 8, 9, 4096, (64 << 10) + 3, (128 << 10) + 8, PAGE_SIZE - 1})
        {
            write(0, length);
            frames.seal(0, HIGH, LOW, length);
            final MemorySegment payload = frames.payload(0);
            long firstWrong = -1;
            for (long i = 0; i < PAGE_SIZE && firstWrong < 0; i++)
            {
                final byte expected = i < length ? patternAt(i) : 0;
                if (payload.get(ValueLayout.JAVA_BYTE, i) != expected)
                {
                    firstWrong = i;
                }
            }
            assertThat(firstWrong).as("first byte that is neither the payload nor zero, payload of " + length).isEqualTo(-1);
            assertThat(frames.verify(0, HIGH, LOW)).isEqualTo(PageFrames.FrameCheck.VALID);
            assertThat(pool.metadata().payloadLengthPlain(0)).isEqualTo(length);
        }
    }

    @Test
    void shouldLeaveAFullPageAsWritten()
    {
        write(1, PAGE_SIZE);
        final int crc = frames.seal(1, HIGH, LOW, PAGE_SIZE);
        final CRC32C expected = new CRC32C();
        expected.update(frames.payload(1).asByteBuffer());
        assertThat(crc).isEqualTo((int)expected.getValue());
        assertThat(frames.payload(1).get(ValueLayout.JAVA_BYTE, PAGE_SIZE - 1)).isEqualTo(patternAt(PAGE_SIZE - 1));
        assertThat(pool.metadata().payloadCrcPlain(1)).isEqualTo(crc);
    }

    @Test
    void shouldTellASealForThisKeyAndLengthFromAnyOther()
    {
        write(0, 100);
        frames.seal(0, HIGH, LOW, 100);
        assertThat(frames.isSealed(0, HIGH, LOW, 100)).isTrue();
        assertThat(frames.isSealed(0, HIGH, LOW, 101)).as("another length").isFalse();
        assertThat(frames.isSealed(0, HIGH + 1, LOW, 100)).as("another key, high half").isFalse();
        assertThat(frames.isSealed(0, HIGH, LOW + 1, 100)).as("another key, low half").isFalse();
        pool.metadata().payloadInfoPlain(0, 99, 0);
        assertThat(frames.isSealed(0, HIGH, LOW, 100)).as("metadata of another length").isFalse();
        frames.seal(0, HIGH, LOW, 100);
        frames.frame(0).set(LONG, PAGE_SIZE + PageFrameDescriptor.MAGIC_OFFSET, 0L);
        assertThat(frames.isSealed(0, HIGH, LOW, 100)).as("no magic").isFalse();
        frames.seal(0, HIGH, LOW, 100);
        frames.frame(0).set(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), PAGE_SIZE + PageFrameDescriptor.FRAME_VERSION_OFFSET, 99);
        assertThat(frames.isSealed(0, HIGH, LOW, 100)).as("another frame version").isFalse();
    }

    @Test
    void shouldNameWhatIsWrongWithAFrameReadFromL3()
    {
        write(0, 5000);
        frames.seal(0, HIGH, LOW, 5000);
        assertThat(frames.verify(0, HIGH, LOW + 1)).isEqualTo(PageFrames.FrameCheck.WRONG_KEY);
        assertThat(frames.verify(0, HIGH - 1, LOW)).isEqualTo(PageFrames.FrameCheck.WRONG_KEY);

        frames.payload(0).set(ValueLayout.JAVA_BYTE, 4999, (byte)~patternAt(4999));
        assertThat(frames.verify(0, HIGH, LOW)).as("a flipped payload byte").isEqualTo(PageFrames.FrameCheck.CRC_MISMATCH);
        assertThat(frames.payloadIntact(0)).isFalse();

        write(0, 5000);
        frames.seal(0, HIGH, LOW, 5000);
        assertThat(frames.payloadIntact(0)).isTrue();
        final MemorySegment trailer = frames.frame(0).asSlice(PAGE_SIZE);
        trailer.set(LONG, PageFrameDescriptor.KEY_LOW_OFFSET, LOW ^ 1);
        assertThat(frames.verify(0, HIGH, LOW ^ 1)).as("a trailer changed after its CRC").isEqualTo(PageFrames.FrameCheck.CRC_MISMATCH);

        frames.seal(0, HIGH, LOW, 5000);
        trailer.set(LONG, PageFrameDescriptor.PAGE_SIZE_OFFSET, PAGE_SIZE * 2L);
        assertThat(frames.verify(0, HIGH, LOW)).as("another page size").isEqualTo(PageFrames.FrameCheck.BAD_TRAILER);

        frames.seal(0, HIGH, LOW, 5000);
        trailer.set(LONG, PageFrameDescriptor.MAGIC_OFFSET, 0L);
        assertThat(frames.verify(0, HIGH, LOW)).as("no magic").isEqualTo(PageFrames.FrameCheck.BAD_TRAILER);

        for (final long length : new long[] {PAGE_SIZE + 1L, -1L})
        {
            frames.seal(0, HIGH, LOW, 5000);
            trailer.set(LONG, PageFrameDescriptor.PAYLOAD_LENGTH_OFFSET, length);
            resealTrailerCrc(trailer);
            assertThat(frames.verify(0, HIGH, LOW)).as("a length of " + length + " under a valid trailer CRC").isEqualTo(PageFrames.FrameCheck.BAD_TRAILER);
        }
    }

    @Test
    void shouldRecordLengthAndCrcOfAVerifiedFrame()
    {
        write(1, 3333);
        final int crc = frames.seal(1, HIGH, LOW, 3333);
        pool.metadata().payloadInfoPlain(1, 0, 0);
        assertThat(frames.verify(1, HIGH, LOW)).isEqualTo(PageFrames.FrameCheck.VALID);
        assertThat(pool.metadata().payloadLengthPlain(1)).isEqualTo(3333);
        assertThat(pool.metadata().payloadCrcPlain(1)).isEqualTo(crc);
    }

    @Test
    void shouldCarryTheNamespaceTagFromTheMetadataIntoTheTrailerAndBack()
    {
        write(0, 1000);
        pool.metadata().namespaceTagPlain(0, 0x1234_5678_9ABC_DEF0L);
        frames.seal(0, HIGH, LOW, 1000);
        final MemorySegment trailer = frames.frame(0).asSlice(PAGE_SIZE);
        assertThat(trailer.get(LONG, PageFrameDescriptor.NAMESPACE_TAG_OFFSET)).isEqualTo(0x1234_5678_9ABC_DEF0L);
        assertThat(frames.isSealed(0, HIGH, LOW, 1000)).isTrue();
        pool.metadata().namespaceTagPlain(0, 7);
        assertThat(frames.isSealed(0, HIGH, LOW, 1000)).as("a seal made under another namespace").isFalse();

        // A load expects the tag the object's name in L3 was made from: another is not the object asked for.
        assertThat(frames.verify(0, HIGH, LOW)).as("a frame of another namespace than the load expects").isEqualTo(PageFrames.FrameCheck.WRONG_NAMESPACE);
        pool.metadata().namespaceTagPlain(0, 0x1234_5678_9ABC_DEF0L);
        assertThat(frames.verify(0, HIGH, LOW)).isEqualTo(PageFrames.FrameCheck.VALID);

        trailer.set(LONG, PageFrameDescriptor.NAMESPACE_TAG_OFFSET, 99L);
        assertThat(frames.verify(0, HIGH, LOW)).as("a tag changed after the trailer CRC").isEqualTo(PageFrames.FrameCheck.CRC_MISMATCH);
    }

    @Test
    void shouldReadAVersionOneFrameAsUntagged()
    {
        write(1, 700);
        pool.metadata().namespaceTagPlain(1, 42);
        frames.seal(1, HIGH, LOW, 700);
        // Rewrite the trailer as version 1 wrote it: no tag, its CRC at 56 over bytes 0..55.
        final MemorySegment trailer = frames.frame(1).asSlice(PAGE_SIZE);
        trailer.set(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), PageFrameDescriptor.FRAME_VERSION_OFFSET,
            PageFrameDescriptor.FRAME_VERSION_1);
        final CRC32C crc = new CRC32C();
        crc.update(trailer.asSlice(0, PageFrameDescriptor.TRAILER_CHECKED_LENGTH_V1).asByteBuffer());
        trailer.set(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), PageFrameDescriptor.TRAILER_CRC_OFFSET_V1, (int)crc.getValue());
        assertThat(frames.verify(1, HIGH, LOW)).as("read as tagged 0, while the load expects 42").isEqualTo(PageFrames.FrameCheck.WRONG_NAMESPACE);
        pool.metadata().namespaceTagPlain(1, 0);
        assertThat(frames.verify(1, HIGH, LOW)).isEqualTo(PageFrames.FrameCheck.VALID);
        trailer.set(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), PageFrameDescriptor.TRAILER_CRC_OFFSET_V1, (int)crc.getValue() ^ 1);
        assertThat(frames.verify(1, HIGH, LOW)).as("a version 1 trailer CRC is checked too").isEqualTo(PageFrames.FrameCheck.CRC_MISMATCH);
    }

    private static void resealTrailerCrc(final MemorySegment trailer)
    {
        final CRC32C crc = new CRC32C();
        crc.update(trailer.asSlice(0, PageFrameDescriptor.TRAILER_CHECKED_LENGTH).asByteBuffer());
        trailer.set(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), PageFrameDescriptor.TRAILER_CRC_OFFSET, (int)crc.getValue());
    }
}
