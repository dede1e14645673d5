package io.kvtier.engine.ipc;

import io.kvtier.client.IpcConnection;
import io.kvtier.client.KvBufferRegistration;
import io.kvtier.client.protocol.DeviceRequestDescriptor;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.device.KvShape;
import io.kvtier.engine.Engine;
import io.kvtier.engine.ipc.IpcTestSupport.Answer;
import io.kvtier.nativeaccess.libc.FileDescriptors;
import io.kvtier.nativeaccess.libc.LibC;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import static io.kvtier.engine.ipc.IpcTestSupport.await;
import static io.kvtier.engine.ipc.IpcTestSupport.call;
import static io.kvtier.engine.ipc.IpcTestSupport.keys;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client's KV buffers in host memory reach the engine without the engine ever checking one file and
 * using another: a HOST_FILE path is opened once, with no symbolic link anywhere on it, and checked on
 * that descriptor; better, a client passes the file itself as a descriptor (HOST_FD, protocol 1.2) and
 * the engine never resolves a path the client chose.
 */
class IpcHostBufferSecurityTest
{
    private static final KvShape SHAPE = KvShape.keyValue(3, 4, 2, 8, 2);
    private static final int[] WIRE_SHAPE = {3, 2, 4, 2, 8, 2};
    private static final int BLOCKS = 8;

    @TempDir
    Path directory;

    @Test
    void aHostFileReachedThroughALinkedDirectoryIsRefused() throws Exception
    {
        final Path real = Files.createDirectories(directory.resolve("real"));
        final Path file = real.resolve("kv");
        Files.write(file, new byte[(int)(SHAPE.pageBytes() * BLOCKS)]);
        // The directory on the way is the link, the file itself is not: a check of the last component alone lets it through.
        final Path linked = Files.createSymbolicLink(directory.resolve("linked"), real);
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 64));
             IpcConnection client = IpcConnection.connect(IpcTestSupport.socket(engine), 16))
        {
            final Answer refused = await(client, client.sendRegisterKv(KvBufferRegistration.hostFiles(DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS,
                WIRE_SHAPE, BLOCKS, new Path[] {linked.resolve("kv")}, new long[] {0})));
            assertThat(refused.status()).isEqualTo(ErrorCode.INVALID.code());
            assertThat(DeviceRequestDescriptor.detailName(refused.resultCount())).isEqualTo("OPEN_FAILED");
            final Answer accepted = await(client, client.sendRegisterKv(KvBufferRegistration.hostFiles(DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS,
                WIRE_SHAPE, BLOCKS, new Path[] {file}, new long[] {0})));
            assertThat(accepted.status()).as("the same file by a path without links").isEqualTo(ErrorCode.OK.code());
        }
    }

    @Test
    void aFilePassedAsADescriptorIsSavedFromAndLoadedIntoWithoutAPath() throws Exception
    {
        final FileDescriptors files = FileDescriptors.instance().orElseThrow();
        final long bytes = SHAPE.pageBytes() * BLOCKS;
        final int memory = files.memoryFile("test-kv", bytes);
        assertThat(memory).isNotNegative();
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 64));
             IpcConnection client = IpcConnection.connect(IpcTestSupport.socket(engine), 16);
             Arena arena = Arena.ofShared())
        {
            final MemorySegment kv = files.map(memory, bytes, arena);
            for (long i = 0; i < bytes; i++)
            {
                kv.set(ValueLayout.JAVA_BYTE, i, (byte)(i * 13 + 1));
            }
            final long descriptorsBefore = openDescriptors();
            final long first = client.sendDescriptors(memory);
            assertThat(first).isZero();
            final Answer registered = await(client, client.sendRegisterKv(KvBufferRegistration.hostDescriptors(
                DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS, WIRE_SHAPE, BLOCKS, new long[] {first}, new long[] {0})));
            assertThat(registered.status()).isEqualTo(ErrorCode.OK.code());
            // Bounded wait, not an instant check: another thread of this JVM may hold a descriptor for a moment (a pipe of a
            // child process another test started, closed by its Cleaner); a copy the engine kept would stay for good.
            final long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
            while (openDescriptors() != descriptorsBefore && System.nanoTime() < deadline)
            {
                Thread.sleep(10);
            }
            assertThat(openDescriptors()).as("the engine closed its copy once it had mapped it").isEqualTo(descriptorsBefore);
            final int layout = registered.resultCount();

            final Answer reserved = call(client, MessageType.RESERVE, 0, keys(0x9100, 2), keys(0x9200, 2));
            assertThat(reserved.pageStatuses()).containsOnly(PageEntryStatus.RESERVED);
            final Answer saved = await(client, client.sendDeviceCopy(MessageType.DEVICE_SAVE, layout, 0, 2, new int[] {1, 2}, new int[] {4, 4}));
            assertThat(saved.pageStatuses()).containsOnly(PageEntryStatus.COMMITTED);
            // Contiguous: tensor (0, K)'s block 1 is at one block's bytes from the start.
            final MemorySegment block1 = MemorySegment.ofArray(kv.asSlice(SHAPE.blockBytes(), SHAPE.blockBytes()).toArray(ValueLayout.JAVA_BYTE));
            kv.fill((byte)0);
            final Answer acquired = call(client, MessageType.ACQUIRE, 2, keys(0x9100, 2), keys(0x9200, 2));
            assertThat(acquired.resultCount()).isEqualTo(2);
            final Answer loaded = await(client, client.sendDeviceCopy(MessageType.DEVICE_LOAD, layout, 2, 2, new int[] {1, 2}, new int[] {4, 4}));
            assertThat(loaded.pageStatuses()).containsOnly(PageEntryStatus.COPIED);
            assertThat(kv.asSlice(SHAPE.blockBytes(), SHAPE.blockBytes()).mismatch(block1)).as("block 1 back as it was saved").isEqualTo(-1);
        }
        finally
        {
            files.close(memory);
        }
    }

    @Test
    void aDescriptorNotOpenForWritingOrNeverSentIsRefused() throws Exception
    {
        final FileDescriptors files = FileDescriptors.instance().orElseThrow();
        final Path file = directory.resolve("ro.kv");
        Files.write(file, new byte[(int)(SHAPE.pageBytes() * BLOCKS)]);
        final int readOnly = files.openWithoutSymlinks(file.toString(), LibC.O_RDONLY);
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 64));
             IpcConnection client = IpcConnection.connect(IpcTestSupport.socket(engine), 16))
        {
            final long number = client.sendDescriptors(readOnly);
            final Answer readOnlyRefused = await(client, client.sendRegisterKv(KvBufferRegistration.hostDescriptors(
                DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS, WIRE_SHAPE, BLOCKS, new long[] {number}, new long[] {0})));
            assertThat(readOnlyRefused.status()).isEqualTo(ErrorCode.INVALID.code());
            assertThat(DeviceRequestDescriptor.detailName(readOnlyRefused.resultCount())).isEqualTo("OPEN_FAILED");
            // Named once: the engine closed it, so naming it again finds nothing; nor does a number never sent.
            for (final long missing : new long[] {number, number + 5})
            {
                final Answer refused = await(client, client.sendRegisterKv(KvBufferRegistration.hostDescriptors(
                    DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS, WIRE_SHAPE, BLOCKS, new long[] {missing}, new long[] {0})));
                assertThat(refused.status()).isEqualTo(ErrorCode.INVALID.code());
                assertThat(DeviceRequestDescriptor.detailName(refused.resultCount())).isEqualTo("OPEN_FAILED");
            }
            assertThat(await(client, client.send(MessageType.STATS, 0, 0, 0)).status()).isEqualTo(ErrorCode.OK.code());
        }
        finally
        {
            files.close(readOnly);
        }
    }

    private static long openDescriptors() throws Exception
    {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd")))
        {
            return fds.count();
        }
    }
}
