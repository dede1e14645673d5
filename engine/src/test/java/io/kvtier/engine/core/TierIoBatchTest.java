package io.kvtier.engine.core;

import io.kvtier.engine.pool.PageFrames;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.spi.TierStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The batch a tier completes key by key: each key once, the last completion hands it back once. */
class TierIoBatchTest
{
    @TempDir
    Path dir;

    private PagePool pool;
    private final List<TierIoBatch> handedBack = new ArrayList<>();

    @BeforeEach
    void createPool() throws IOException
    {
        pool = PagePool.create(dir.resolve("pool"), 4096, 4, 32, 1, Duration.ofSeconds(30));
    }

    @AfterEach
    void closePool()
    {
        pool.close();
    }

    private TierIoBatch batch(final int op, final int keys)
    {
        final TierIoBatch batch = new TierIoBatch(0, op, 4, pool, handedBack::add);
        for (int i = 0; i < keys; i++)
        {
            batch.add(5, i + 1, 0, new io.kvtier.client.L3ObjectName(""), i, 1, i, 7);
        }
        batch.arm(100);
        batch.callReturned(); // the tier's call returned before any key completed
        return batch;
    }

    @Test
    void shouldHandItselfBackOnceWhenItsLastKeyCompletes()
    {
        final TierIoBatch batch = batch(TierIoBatch.EXISTS, 3);
        batch.complete(2, TierStatus.OK);
        batch.complete(0, TierStatus.NOT_FOUND);
        assertThat(handedBack).isEmpty();
        assertThat(batch.isDone()).isFalse();

        batch.complete(1, TierStatus.IO_ERROR);

        assertThat(handedBack).containsExactly(batch);
        assertThat(batch.isDone()).isTrue();
        assertThat(batch.status).startsWith(TierStatus.NOT_FOUND, TierStatus.IO_ERROR, TierStatus.OK);
    }

    @Test
    void shouldRefuseASecondCompletionANullStatusAndAKeyOutsideIt()
    {
        final TierIoBatch batch = batch(TierIoBatch.REMOVE, 2);
        batch.complete(0, TierStatus.OK);
        assertThatThrownBy(() -> batch.complete(0, TierStatus.NOT_FOUND)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> batch.complete(1, null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> batch.complete(2, TierStatus.OK)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> batch.keyHigh(-1)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThat(batch.status[0]).isEqualTo(TierStatus.OK);
        assertThat(handedBack).isEmpty();
    }

    @Test
    void shouldVerifyAReadFrameBeforeItsStatusShows()
    {
        pool.metadata().keyPlain(0, 5, 1);
        pool.frames().seal(0, 5, 1, 300);
        final TierIoBatch batch = batch(TierIoBatch.READ, 2);

        batch.complete(0, TierStatus.OK);
        batch.complete(1, TierStatus.OK);

        assertThat(batch.check[0]).isEqualTo(PageFrames.FrameCheck.VALID);
        assertThat(batch.check[1]).as("nothing was written to page 1").isEqualTo(PageFrames.FrameCheck.BAD_TRAILER);
    }

    @Test
    void shouldTellATierTheCommittedPayloadsCrc32cForWritesOnly()
    {
        pool.metadata().keyPlain(0, 5, 1);
        pool.frames().frame(0).asSlice(0, 300).fill((byte)0x5A);
        pool.frames().seal(0, 5, 1, 300);
        pool.metadata().keyPlain(1, 5, 2);
        pool.frames().frame(1).asSlice(0, 4096).fill((byte)0x3C);
        pool.frames().seal(1, 5, 2, 4096);
        final TierIoBatch write = batch(TierIoBatch.WRITE, 2);

        for (int i = 0; i < 2; i++)
        {
            final java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
            crc.update(write.segment(i).asSlice(0, write.knownCrc32cBytes(i)).asByteBuffer());
            assertThat(write.knownCrc32c(i)).as("page %d's CRC32C of its first %d bytes", i, write.knownCrc32cBytes(i)).isEqualTo((int)crc.getValue());
        }
        assertThat(write.knownCrc32cBytes(0)).as("the payload, not the zeroed tail or the trailer").isEqualTo(300);
        assertThat(write.knownCrc32cBytes(1)).isEqualTo(4096);
        assertThat(batch(TierIoBatch.READ, 1).knownCrc32cBytes(0)).as("a read's frame is not known before it is read").isZero();
    }

    @Test
    void shouldDeclareAWritesTrailerBlockPastItsTrailerPaddingAndNothingElse()
    {
        assertThat(batch(TierIoBatch.WRITE, 1).trailerBlockIsPadding(0)).as("a write hands the tier a sealed pool frame").isTrue();
        assertThat(batch(TierIoBatch.READ, 1).trailerBlockIsPadding(0)).as("a read's destination").isFalse();
        assertThat(batch(TierIoBatch.EXISTS, 1).trailerBlockIsPadding(0)).as("no segment").isFalse();
    }

    @Test
    void shouldGiveFramesOnlyToReadsAndWrites()
    {
        assertThat(batch(TierIoBatch.READ, 1).segment(0).byteSize()).isEqualTo(pool.frameLength());
        assertThat(batch(TierIoBatch.WRITE, 1).segment(0).byteSize()).isEqualTo(pool.frameLength());
        assertThat(batch(TierIoBatch.EXISTS, 1).segment(0)).isEqualTo(MemorySegment.NULL);
    }

    @Test
    void shouldCompleteWhatTheTierLeftAfterItThrew()
    {
        final TierIoBatch batch = batch(TierIoBatch.WRITE, 3);
        batch.complete(1, TierStatus.OK);

        batch.completeRemaining(TierStatus.IO_ERROR);

        assertThat(batch.status).startsWith(TierStatus.IO_ERROR, TierStatus.OK, TierStatus.IO_ERROR);
        assertThat(handedBack).containsExactly(batch);
    }

    @Test
    void shouldStartEmptyAgainOnceReset()
    {
        final TierIoBatch batch = batch(TierIoBatch.EXISTS, 2);
        batch.timedOut = true;
        batch.complete(0, TierStatus.OK);
        batch.complete(1, TierStatus.OK);

        batch.reset();

        assertThat(batch.size()).isZero();
        assertThat(batch.timedOut).isFalse();
        assertThat(batch.status).containsOnlyNulls();
        batch.add(5, 9, 0, new io.kvtier.client.L3ObjectName(""), -1, 1, 0, 8);
        batch.arm(200);
        batch.callReturned();
        batch.complete(0, TierStatus.NOT_FOUND);
        assertThat(handedBack).hasSize(2);
    }
}
