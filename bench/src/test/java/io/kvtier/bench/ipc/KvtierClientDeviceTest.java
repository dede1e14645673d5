package io.kvtier.bench.ipc;

import io.kvtier.client.ClientOptions;
import io.kvtier.client.KvBufferRegistration;
import io.kvtier.client.KvtierClient;
import io.kvtier.client.KvtierException;
import io.kvtier.client.Namespace;
import io.kvtier.client.PageKeyChain;
import io.kvtier.client.PinnedPages;
import io.kvtier.client.ReservedPages;
import io.kvtier.client.protocol.DeviceRequestDescriptor;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.device.KvShape;
import io.kvtier.device.LayerFirstLayout;
import io.kvtier.engine.Engine;
import io.kvtier.engine.config.EngineConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The Java client's device operations against a real engine: a prefill client saves its blocks
 * (interleaved K/V per layer) through {@link ReservedPages#saveFrom}, a decode client loads them into
 * its own cache (one contiguous allocation) through {@link PinnedPages#loadInto}, and no byte passes
 * through either client.
 */
class KvtierClientDeviceTest
{
    private static final Namespace NAMESPACE = new Namespace("device-test", "mla-free", 0, "");
    /** 4 layers of K and V, 16 tokens per block, 2 heads of 16 bf16 elements: slices of 1 KiB, pages of 8 KiB. */
    private static final KvShape SHAPE = KvShape.keyValue(4, 16, 2, 16, 2);
    private static final int[] WIRE_SHAPE = {4, 2, 16, 2, 16, 2};
    private static final int BLOCKS = 6;

    @TempDir
    Path directory;

    @Test
    void blocksSavedByOneClientAreLoadedIntoAnotherClientsCacheWithoutEitherCopying() throws Exception
    {
        final Path pool = Path.of("/dev/shm/kvtier-device-test-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
        final Path socket = directory.resolve("s.sock");
        try (Engine engine = Engine.start(EngineConfig.from(Map.of(EngineConfig.POOL_PATH, pool.toString(), EngineConfig.POOL_SIZE, "1MiB",
                 EngineConfig.POOL_PAGE_SIZE, "8KiB", "ipc.enabled", "true", "ipc.socket-path", socket.toString())));
             KvtierClient prefill = KvtierClient.connect(socket, ClientOptions.of(64, NAMESPACE));
             KvtierClient decode = KvtierClient.connect(socket, ClientOptions.of(64, NAMESPACE));
             Arena arena = Arena.ofShared())
        {
            final long layerBytes = SHAPE.blockBytes() * 2 * BLOCKS;
            final Path prefillFile = file("prefill.kv", layerBytes * SHAPE.layers());
            final MemorySegment prefillKv = map(prefillFile, arena);
            for (long i = 0; i < prefillKv.byteSize(); i += 4)
            {
                prefillKv.set(ValueLayout.JAVA_INT_UNALIGNED, i, (int)(i * 2654435761L));
            }
            final long[] layerOffsets = IntStream.range(0, SHAPE.layers()).mapToLong(l -> l * layerBytes).toArray();
            final LayerFirstLayout prefillLayout = LayerFirstLayout.interleaved(SHAPE, BLOCKS, layerOffsets);
            final int prefillLayoutId = prefill.registerKv(KvBufferRegistration.hostFiles(DeviceRequestDescriptor.ARRANGEMENT_INTERLEAVED,
                WIRE_SHAPE, BLOCKS, new Path[] {prefillFile, prefillFile, prefillFile, prefillFile}, layerOffsets));

            final Path decodeFile = file("decode.kv", SHAPE.pageBytes() * BLOCKS);
            final MemorySegment decodeKv = map(decodeFile, arena);
            final LayerFirstLayout decodeLayout = LayerFirstLayout.contiguous(SHAPE, BLOCKS, 0);
            final int decodeLayoutId = decode.registerKv(KvBufferRegistration.hostFiles(DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS,
                WIRE_SHAPE, BLOCKS, new Path[] {decodeFile}, new long[] {0}));

            final PageKeyChain keys = new PageKeyChain(8).compute(NAMESPACE, IntStream.range(0, 16 * 3).toArray(), 16 * 3, 16, false);
            final int[] prefillBlocks = {4, 0, 2};
            try (ReservedPages pages = prefill.reserve(keys))
            {
                assertThat(pages.reservedCount()).isEqualTo(3);
                assertThat(pages.saveFrom(prefillLayoutId, prefillBlocks, new int[] {16, 16, 16})).isEqualTo(3);
                assertThat(pages.status(2)).isEqualTo(PageEntryStatus.COMMITTED);
            }
            final int[] decodeBlocks = {1, 5, 3};
            try (PinnedPages pages = decode.acquire(keys))
            {
                assertThat(pages.count()).isEqualTo(3);
                assertThat(pages.loadInto(decodeLayoutId, decodeBlocks, new int[] {16, 16, 16})).isEqualTo(3);
                for (int i = 0; i < 3; i++)
                {
                    assertThat(pages.copyStatus(i)).isEqualTo(PageEntryStatus.COPIED);
                    for (int l = 0; l < SHAPE.layers(); l++)
                    {
                        for (int t = 0; t < 2; t++)
                        {
                            final MemorySegment loaded = decodeKv.asSlice(decodeLayout.blockAddress(l, t, decodeBlocks[i]), SHAPE.blockBytes());
                            final MemorySegment saved = prefillKv.asSlice(prefillLayout.blockAddress(l, t, prefillBlocks[i]), SHAPE.blockBytes());
                            assertThat(loaded.mismatch(saved)).as("key %d, layer %d, tensor %d", i, l, t).isEqualTo(-1);
                        }
                    }
                }
            }
            assertThatThrownBy(() -> decode.registerKv(KvBufferRegistration.hostFiles(DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS,
                WIRE_SHAPE, BLOCKS + 1, new Path[] {decodeFile}, new long[] {0})))
                .isInstanceOfSatisfying(KvtierException.class, ex -> assertThat(ex.errorCode()).isEqualTo(ErrorCode.INVALID))
                .hasMessageContaining("TOO_SMALL");
        }
        finally
        {
            java.nio.file.Files.deleteIfExists(pool);
        }
    }

    private Path file(final String name, final long bytes) throws IOException
    {
        final Path file = directory.resolve(name);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE))
        {
            channel.write(java.nio.ByteBuffer.allocate(1), bytes - 1);
        }
        return file;
    }

    private static MemorySegment map(final Path file, final Arena arena) throws IOException
    {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE))
        {
            return channel.map(FileChannel.MapMode.READ_WRITE, 0, channel.size(), arena);
        }
    }
}
