package io.kvtier.engine.ipc;

import io.kvtier.client.IpcConnection;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.Engine;
import io.kvtier.engine.ipc.IpcTestSupport.Answer;
import io.kvtier.client.pool.CountersDescriptor;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.ThreadWatch;
import io.kvtier.nativeaccess.libc.FileDescriptors;
import io.kvtier.nativeaccess.libc.LibC;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static io.kvtier.engine.ipc.IpcTestSupport.keys;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The engine's worker threads outlive whatever a request does to them. A client can truncate the pool
 * file it maps: the sealer then faults (SIGBUS, which HotSpot turns into an InternalError) while it
 * seals a commit. That request is answered, and every later COMMIT is too.
 */
class IpcThreadSurvivalTest
{
    private static final long ANSWER_SECONDS = 30;

    @TempDir
    Path directory;

    @Test
    void theSealerAnswersEveryCommitAfterOneFaultedUnderATruncatedPool() throws Exception
    {
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 32));
             IpcConnection client = IpcConnection.connect(IpcTestSupport.socket(engine), 16))
        {
            final long length = engine.pool().layout().fileLength();
            final long data = engine.pool().layout().dataOffset();
            final Answer reserved = IpcTestSupport.call(client, MessageType.RESERVE, 0, keys(0x3100, 2), keys(0x3200, 2));
            assertThat(reserved.pageStatuses()).containsOnly(PageEntryStatus.RESERVED);

            // Every frame goes, header and metadata stay: the seal's writes into the frames fault.
            truncate(engine.pool().path(), data);
            final Answer faulted = answerWithin(client, client.sendCommit(0, 2, new int[] {100, 100}));
            assertThat(faulted.pageStatuses()).as("nothing sealed is made visible").doesNotContain(PageEntryStatus.COMMITTED);
            restore(engine.pool().path(), length);

            for (int round = 0; round < 3; round++)
            {
                final int first = 4 + 2 * round;
                final Answer again = IpcTestSupport.call(client, MessageType.RESERVE, first, keys(0x4100 + 8L * round, 2),
                    keys(0x4200 + 8L * round, 2));
                assertThat(again.pageStatuses()).containsOnly(PageEntryStatus.RESERVED);
                final Answer committed = answerWithin(client, client.sendCommit(first, 2, new int[] {64, 64}));
                assertThat(committed.status()).isEqualTo(ErrorCode.OK.code());
                assertThat(committed.pageStatuses()).as("round %d, after the fault", round).containsOnly(PageEntryStatus.COMMITTED);
            }
            // The sealer is alive and not stuck, as the counters region says.
            final io.kvtier.engine.pool.Counters counters = new io.kvtier.engine.pool.Counters(engine.pool().counters());
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(ANSWER_SECONDS);
            while (counters.recordStateAcquire(CountersDescriptor.FIRST_THREAD_ID) != CountersDescriptor.RECORD_ALLOCATED
                && System.nanoTime() - deadline < 0)
            {
                Thread.sleep(10);
            }
            assertThat(counters.valueOpaque(CountersDescriptor.FIRST_THREAD_ID)).isEqualTo(ThreadWatch.RUNNING);
            assertThat(engine.counters().getOpaque(EngineCounter.THREADS_DEAD)).isZero();
        }
    }

    /** Awaits a response on another thread, so that one that never comes fails the test instead of hanging it. */
    private static Answer answerWithin(final IpcConnection client, final long requestId) throws Exception
    {
        final CompletableFuture<Answer> answer = CompletableFuture.supplyAsync(() ->
        {
            try
            {
                return IpcTestSupport.await(client, requestId);
            }
            catch (final Exception ex)
            {
                throw new IllegalStateException(ex);
            }
        });
        try
        {
            return answer.get(ANSWER_SECONDS, TimeUnit.SECONDS);
        }
        catch (final TimeoutException ex)
        {
            throw new AssertionError("request " + requestId + " was never answered: the thread that serves it is gone", ex);
        }
    }

    private static void truncate(final Path file, final long length) throws Exception
    {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE))
        {
            channel.truncate(length);
        }
    }

    private static void restore(final Path file, final long length) throws Exception
    {
        final FileDescriptors files = FileDescriptors.instance().orElseThrow();
        final int fd = files.openWithoutSymlinks(file.toAbsolutePath().toString(), LibC.O_RDWR);
        try
        {
            assertThat(files.allocate(fd, length)).isZero();
        }
        finally
        {
            files.close(fd);
        }
    }
}
