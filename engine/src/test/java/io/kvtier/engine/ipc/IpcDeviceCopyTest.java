package io.kvtier.engine.ipc;

import io.kvtier.client.IpcConnection;
import io.kvtier.client.KvBufferRegistration;
import io.kvtier.client.protocol.DeviceRequestDescriptor;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.HandshakeDescriptor;
import io.kvtier.client.protocol.IdleStrategy;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.device.KvPageDescriptor;
import io.kvtier.device.KvShape;
import io.kvtier.device.LayerFirstLayout;
import io.kvtier.engine.Engine;
import io.kvtier.engine.ipc.IpcTestSupport.Answer;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.nativeaccess.cuda.Cuda;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;

import static io.kvtier.engine.ipc.IpcTestSupport.await;
import static io.kvtier.engine.ipc.IpcTestSupport.call;
import static io.kvtier.engine.ipc.IpcTestSupport.keys;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The device operations of docs/ipc-protocol.md section 10 end to end, over the real socket and shared
 * files: clients register KV buffers held in host shared-memory files (the registration a CPU engine, or
 * this machine without a GPU, uses; CUDA IPC handles take the same path up to the open), the engine
 * copies blocks into reserved pages and commits them, and pinned pages into another client's blocks in
 * another arrangement, and every byte is checked on both sides.
 */
class IpcDeviceCopyTest
{
    /** 3 layers of K and V, 4 tokens per block, 2 heads of 8 fp16 elements: slices of 128 bytes, pages of 768. */
    private static final KvShape SHAPE = KvShape.keyValue(3, 4, 2, 8, 2);
    private static final int[] WIRE_SHAPE = {3, 2, 4, 2, 8, 2};
    private static final int BLOCKS = 8;

    @TempDir
    Path directory;

    @Test
    void blocksSavedIntoPagesByOneClientAreLoadedIntoAnotherClientsBlocksByteForByte() throws Exception
    {
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 64));
             IpcConnection writer = IpcConnection.connect(IpcTestSupport.socket(engine), 16);
             IpcConnection reader = IpcConnection.connect(IpcTestSupport.socket(engine), 16);
             Arena arena = Arena.ofShared())
        {
            // The writer keeps its KV contiguous, the reader one tensor after another in one file, each at its own offset.
            final long slice = SHAPE.blockBytes();
            final Path writerFile = buffer("w.kv", SHAPE.pageBytes() * BLOCKS);
            final MemorySegment writerKv = map(writerFile, arena);
            final LayerFirstLayout writerLayout = LayerFirstLayout.contiguous(SHAPE, BLOCKS, 0);
            for (long i = 0; i < writerKv.byteSize(); i++)
            {
                writerKv.set(ValueLayout.JAVA_BYTE, i, (byte)(i * 7 + 3));
            }
            final long readerTensorBytes = slice * BLOCKS + 64;
            final Path readerFile = buffer("r.kv", readerTensorBytes * SHAPE.slots() + 64);
            final MemorySegment readerKv = map(readerFile, arena);
            readerKv.fill((byte)0x5A);
            final long[] readerOffsets = new long[SHAPE.slots()];
            final Path[] readerFiles = new Path[SHAPE.slots()];
            for (int s = 0; s < SHAPE.slots(); s++)
            {
                readerOffsets[s] = 64 + s * readerTensorBytes;
                readerFiles[s] = readerFile;
            }
            final LayerFirstLayout readerLayout = LayerFirstLayout.separate(SHAPE, BLOCKS, readerOffsets);

            final Answer writerRegistered = await(writer, writer.sendRegisterKv(KvBufferRegistration.hostFiles(
                DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS, WIRE_SHAPE, BLOCKS, new Path[] {writerFile}, new long[] {0})));
            assertThat(writerRegistered.status()).isEqualTo(ErrorCode.OK.code());
            assertThat(writerRegistered.type()).isEqualTo(MessageType.REGISTER_KV);
            final int writerLayoutId = writerRegistered.resultCount();
            assertThat(writerLayoutId).isEqualTo(1);
            final Answer readerRegistered = await(reader, reader.sendRegisterKv(KvBufferRegistration.hostFiles(
                DeviceRequestDescriptor.ARRANGEMENT_SEPARATE, WIRE_SHAPE, BLOCKS, readerFiles, readerOffsets)));
            assertThat(readerRegistered.status()).isEqualTo(ErrorCode.OK.code());

            final long[] highs = keys(0x7100, 3);
            final long[] lows = keys(0x7200, 3);
            final Answer reserved = call(writer, MessageType.RESERVE, 4, highs, lows);
            assertThat(reserved.pageStatuses()).containsOnly(PageEntryStatus.RESERVED);
            final int[] savedBlocks = {5, 1, 6};
            final int[] savedTokens = {4, 4, 2};
            final Answer saved = await(writer, writer.sendDeviceCopy(MessageType.DEVICE_SAVE, writerLayoutId, 4, 3, savedBlocks, savedTokens));
            assertThat(saved.type()).isEqualTo(MessageType.DEVICE_SAVE);
            assertThat(saved.status()).isEqualTo(ErrorCode.OK.code());
            assertThat(saved.resultCount()).isEqualTo(3);
            assertThat(saved.pageStatuses()).containsOnly(PageEntryStatus.COMMITTED);

            // Page-first in the pool: slot (l, t) of the page is block b of tensor (l, t); a partial block's other tokens are zero.
            final int pageLength = (int)KvPageDescriptor.pageLength(SHAPE);
            for (int k = 0; k < 3; k++)
            {
                final int page = reserved.pageIds()[k];
                assertThat(engine.pool().metadata().payloadLengthPlain(page)).isEqualTo(pageLength);
                final MemorySegment payload = engine.pool().frames().payload(page);
                final long copied = savedTokens[k] * SHAPE.tokenBytes();
                for (int l = 0; l < SHAPE.layers(); l++)
                {
                    for (int t = 0; t < 2; t++)
                    {
                        final long slot = KvPageDescriptor.slotOffset(SHAPE, l, t);
                        final long block = writerLayout.blockAddress(l, t, savedBlocks[k]);
                        assertThat(payload.asSlice(slot, copied).mismatch(writerKv.asSlice(block, copied))).as("page %d slot %d.%d", k, l, t)
                            .isEqualTo(-1);
                        for (long b = copied; b < slice; b++)
                        {
                            assertThat(payload.get(ValueLayout.JAVA_BYTE, slot + b)).as("zeroed tail of a partial block").isZero();
                        }
                    }
                }
            }

            final Answer acquired = call(reader, MessageType.ACQUIRE, 0, highs, lows);
            assertThat(acquired.pageStatuses()).containsOnly(PageEntryStatus.PINNED);
            final int[] loadedBlocks = {0, 7, 3};
            final Answer loaded = await(reader, reader.sendDeviceCopy(MessageType.DEVICE_LOAD, readerRegistered.resultCount(), 0, 3, loadedBlocks,
                savedTokens));
            assertThat(loaded.type()).isEqualTo(MessageType.DEVICE_LOAD);
            assertThat(loaded.status()).isEqualTo(ErrorCode.OK.code());
            assertThat(loaded.resultCount()).isEqualTo(3);
            assertThat(loaded.pageStatuses()).containsOnly(PageEntryStatus.COPIED);
            assertThat(loaded.pageIds()).containsExactly(acquired.pageIds());
            for (int k = 0; k < 3; k++)
            {
                final long copied = savedTokens[k] * SHAPE.tokenBytes();
                for (int l = 0; l < SHAPE.layers(); l++)
                {
                    for (int t = 0; t < 2; t++)
                    {
                        final long to = readerLayout.blockAddress(l, t, loadedBlocks[k]);
                        final long from = writerLayout.blockAddress(l, t, savedBlocks[k]);
                        assertThat(readerKv.asSlice(to, copied).mismatch(writerKv.asSlice(from, copied))).as("block %d slice %d.%d", k, l, t)
                            .isEqualTo(-1);
                        for (long b = copied; b < slice; b++)
                        {
                            assertThat(readerKv.get(ValueLayout.JAVA_BYTE, to + b)).as("tokens past the valid ones are left alone").isEqualTo((byte)0x5A);
                        }
                    }
                }
            }
            // Nothing outside the three blocks was written: the gaps between the reader's tensors still hold their filler.
            for (int s = 0; s < SHAPE.slots(); s++)
            {
                final long gapStart = readerOffsets[s] - 64;
                for (long b = 0; b < 64; b++)
                {
                    assertThat(readerKv.get(ValueLayout.JAVA_BYTE, gapStart + b)).isEqualTo((byte)0x5A);
                }
            }
            assertThat(engine.counters().getOpaque(EngineCounter.DEVICE_BLOCKS_SAVED)).isEqualTo(3);
            assertThat(engine.counters().getOpaque(EngineCounter.DEVICE_BLOCKS_LOADED)).isEqualTo(3);
            assertThat(engine.counters().getOpaque(EngineCounter.DEVICE_LOADS_EXPIRED)).isZero();
            assertThat(engine.counters().getOpaque(EngineCounter.DEVICE_BYTES)).isEqualTo(2 * (4 + 4 + 2) * SHAPE.tokenBytes() * SHAPE.slots());
            // The slots keep their pins: the copy pinned nothing new and released nothing.
            assertThat(await(reader, reader.send(MessageType.RELEASE, 0, 3, 0)).resultCount()).isEqualTo(3);
        }
    }

    @Test
    void copiesAreAnsweredPerSlotAndTouchOnlyWhatTheSlotsHold() throws Exception
    {
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 64));
             IpcConnection client = IpcConnection.connect(IpcTestSupport.socket(engine), 16);
             Arena arena = Arena.ofShared())
        {
            final Path file = buffer("c.kv", SHAPE.pageBytes() * BLOCKS);
            final MemorySegment kv = map(file, arena);
            kv.fill((byte)0x11);
            final int layout = await(client, client.sendRegisterKv(KvBufferRegistration.hostFiles(DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS,
                WIRE_SHAPE, BLOCKS, new Path[] {file}, new long[] {0}))).resultCount();

            // A layout id never given is refused as a whole; the slots change nothing.
            assertThat(await(client, client.sendDeviceCopy(MessageType.DEVICE_LOAD, layout + 1, 0, 1, new int[] {0}, new int[] {4})).status())
                .isEqualTo(ErrorCode.INVALID.code());

            // Slots without a reservation are NONE; a reserved slot naming a block out of range is INVALID and its page goes back.
            final Answer reserved = call(client, MessageType.RESERVE, 0, keys(0x9100, 2), keys(0x9200, 2));
            assertThat(reserved.pageStatuses()).containsOnly(PageEntryStatus.RESERVED);
            final Answer saved = await(client, client.sendDeviceCopy(MessageType.DEVICE_SAVE, layout, 0, 3, new int[] {2, BLOCKS, 0},
                new int[] {4, 4, 4}));
            assertThat(saved.status()).isEqualTo(ErrorCode.OK.code());
            assertThat(saved.pageStatuses()).containsExactly(PageEntryStatus.COMMITTED, PageEntryStatus.INVALID, PageEntryStatus.NONE);
            assertThat(call(client, MessageType.LOOKUP, 0, keys(0x9100, 2), keys(0x9200, 2)).poolPages()).isEqualTo(1);

            // A page that holds no block of this shape (a plain COMMIT of another length) is not copied into a block.
            final Answer plain = call(client, MessageType.RESERVE, 4, new long[] {0x9300}, new long[] {0x9400});
            IpcTestSupport.fill(client.page(plain.pageIds()[0]), 0x9300, 0x9400, 1000);
            assertThat(await(client, client.sendCommit(4, 1, new int[] {1000})).pageStatuses()).containsOnly(PageEntryStatus.COMMITTED);
            final Answer pinned = call(client, MessageType.ACQUIRE, 4, new long[] {0x9300}, new long[] {0x9400});
            assertThat(pinned.pageStatuses()).containsOnly(PageEntryStatus.PINNED);
            final Answer notKv = await(client, client.sendDeviceCopy(MessageType.DEVICE_LOAD, layout, 4, 2, new int[] {3, 4}, new int[] {4, 4}));
            assertThat(notKv.pageStatuses()).containsExactly(PageEntryStatus.INVALID, PageEntryStatus.NONE);
            assertThat(notKv.resultCount()).isZero();
            for (long i = 0; i < kv.byteSize(); i++)
            {
                assertThat(kv.get(ValueLayout.JAVA_BYTE, i)).as("byte %d of the client's buffer", i).isEqualTo((byte)0x11);
            }

            // Two slots into one block: the second is refused rather than leaving the block holding either page.
            final Answer both = call(client, MessageType.ACQUIRE, 8, keys(0x9100, 1), keys(0x9200, 1));
            assertThat(both.pageStatuses()).containsOnly(PageEntryStatus.PINNED);
            assertThat(call(client, MessageType.ACQUIRE, 9, keys(0x9100, 1), keys(0x9200, 1)).pageStatuses()).containsOnly(PageEntryStatus.PINNED);
            final Answer twice = await(client, client.sendDeviceCopy(MessageType.DEVICE_LOAD, layout, 8, 2, new int[] {6, 6}, new int[] {4, 4}));
            assertThat(twice.pageStatuses()).containsExactly(PageEntryStatus.COPIED, PageEntryStatus.INVALID);
        }
    }

    @Test
    void aRefusedRegistrationSaysWhatWasWrongAndTheClientCarriesOn() throws Exception
    {
        final int filesBefore = ClientKvBuffers.hostFilesMapped();
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 64));
             IpcConnection client = IpcConnection.connect(IpcTestSupport.socket(engine), 16))
        {
            final Path file = buffer("d.kv", SHAPE.pageBytes() * BLOCKS);
            assertRefused(client, KvBufferRegistration.hostFiles(DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS, WIRE_SHAPE, BLOCKS + 1,
                new Path[] {file}, new long[] {0}), DeviceRequestDescriptor.DETAIL_TOO_SMALL);
            assertRefused(client, KvBufferRegistration.hostFiles(DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS, WIRE_SHAPE, BLOCKS,
                new Path[] {file}, new long[] {1}), DeviceRequestDescriptor.DETAIL_TOO_SMALL);
            assertRefused(client, KvBufferRegistration.hostFiles(DeviceRequestDescriptor.ARRANGEMENT_SEPARATE, WIRE_SHAPE, BLOCKS,
                new Path[] {file}, new long[] {0}), DeviceRequestDescriptor.DETAIL_ALLOCATION_COUNT);
            assertRefused(client, KvBufferRegistration.hostFiles(4, WIRE_SHAPE, BLOCKS, new Path[] {file}, new long[] {0}),
                DeviceRequestDescriptor.DETAIL_ARRANGEMENT);
            assertRefused(client, KvBufferRegistration.hostFiles(DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS, new int[] {3, 3, 4, 2, 8, 2}, BLOCKS,
                new Path[] {file}, new long[] {0}), DeviceRequestDescriptor.DETAIL_SHAPE);
            assertRefused(client, KvBufferRegistration.hostFiles(DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS, new int[] {64, 2, 16, 8, 128, 2},
                1, new Path[] {file}, new long[] {0}), DeviceRequestDescriptor.DETAIL_PAGE_SIZE);
            assertRefused(client, KvBufferRegistration.hostFiles(DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS, WIRE_SHAPE, BLOCKS,
                new Path[] {directory.resolve("missing.kv")}, new long[] {0}), DeviceRequestDescriptor.DETAIL_OPEN_FAILED);
            final Path link = Files.createSymbolicLink(directory.resolve("link.kv"), file);
            assertRefused(client, KvBufferRegistration.hostFiles(DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS, WIRE_SHAPE, BLOCKS,
                new Path[] {link}, new long[] {0}), DeviceRequestDescriptor.DETAIL_OPEN_FAILED);
            assertRefused(client, new KvBufferRegistration(DeviceRequestDescriptor.HANDLE_HOST_FILE, 0, DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS,
                3, 2, 4, 2, 8, 2, BLOCKS, new long[] {0}, new byte[][] {"relative/path".getBytes()}), DeviceRequestDescriptor.DETAIL_OPEN_FAILED);
            assertRefused(client, new KvBufferRegistration(7, 0, DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS, 3, 2, 4, 2, 8, 2, BLOCKS,
                new long[] {0}, new byte[][] {new byte[64]}), DeviceRequestDescriptor.DETAIL_HANDLE_KIND);
            if (Cuda.instance().isEmpty())
            {
                // This machine's case: no device, so a CUDA IPC handle is refused before anything is opened.
                assertRefused(client, new KvBufferRegistration(DeviceRequestDescriptor.HANDLE_CUDA_IPC, 0, DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS,
                    3, 2, 4, 2, 8, 2, BLOCKS, new long[] {0}, new byte[][] {new byte[64]}), DeviceRequestDescriptor.DETAIL_NO_DEVICE);
            }

            // Then as many good registrations as a client may have, and one more.
            for (int i = 1; i <= DeviceRequestDescriptor.MAX_LAYOUTS; i++)
            {
                final Answer ok = await(client, client.sendRegisterKv(KvBufferRegistration.hostFiles(DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS,
                    WIRE_SHAPE, BLOCKS, new Path[] {file}, new long[] {0})));
                assertThat(ok.status()).isEqualTo(ErrorCode.OK.code());
                assertThat(ok.resultCount()).isEqualTo(i);
            }
            assertRefused(client, KvBufferRegistration.hostFiles(DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS, WIRE_SHAPE, BLOCKS,
                new Path[] {file}, new long[] {0}), DeviceRequestDescriptor.DETAIL_TOO_MANY_LAYOUTS);
            assertThat(await(client, client.send(MessageType.STATS, 0, 0, 0)).status()).isEqualTo(ErrorCode.OK.code());
            // Refused registrations mapped and unmapped their files; the eight good ones hold one mapping each.
            assertThat(ClientKvBuffers.hostFilesMapped()).isEqualTo(filesBefore + DeviceRequestDescriptor.MAX_LAYOUTS);
        }
        // The engine closed: every mapping of its clients went with them.
        assertThat(ClientKvBuffers.hostFilesMapped()).isEqualTo(filesBefore);
    }

    @Test
    void aClientOfVersionOnePointZeroIsAnsweredUnknownTypeForTheDeviceOperations() throws Exception
    {
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 64));
             IpcConnection old = IpcConnection.connect(IpcTestSupport.socket(engine), 16, new byte[0], HandshakeDescriptor.MAJOR_VERSION, 0,
                 IdleStrategy.Kind.BACKOFF))
        {
            final Path file = buffer("o.kv", SHAPE.pageBytes() * BLOCKS);
            assertThat(await(old, old.sendRegisterKv(KvBufferRegistration.hostFiles(DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS, WIRE_SHAPE,
                BLOCKS, new Path[] {file}, new long[] {0}))).status()).isEqualTo(ErrorCode.UNKNOWN_TYPE.code());
            assertThat(await(old, old.sendDeviceCopy(MessageType.DEVICE_LOAD, 1, 0, 1, new int[] {0}, new int[] {4})).status())
                .isEqualTo(ErrorCode.UNKNOWN_TYPE.code());
            assertThat(await(old, old.send(MessageType.STATS, 0, 0, 0)).status()).isEqualTo(ErrorCode.OK.code());
        }
    }

    @Test
    void aBufferFileTruncatedUnderTheEngineFailsThatRequestAndNothingElse() throws Exception
    {
        // Slices of 32 KiB, so the copies are of the sizes that would go to memcpy as well as small ones.
        final KvShape big = KvShape.keyValue(1, 64, 4, 64, 2);
        final Map<String, String> settings = IpcTestSupport.settings(directory, 8);
        settings.put(io.kvtier.engine.config.EngineConfig.POOL_PAGE_SIZE, "64KiB");
        settings.put(io.kvtier.engine.config.EngineConfig.POOL_SIZE, "1MiB");
        try (Engine engine = IpcTestSupport.start(settings);
             IpcConnection client = IpcConnection.connect(IpcTestSupport.socket(engine), 16))
        {
            final Path file = buffer("t.kv", big.pageBytes() * 4);
            final int layout = await(client, client.sendRegisterKv(KvBufferRegistration.hostFiles(DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS,
                new int[] {1, 2, 64, 4, 64, 2}, 4, new Path[] {file}, new long[] {0}))).resultCount();
            assertThat(layout).isEqualTo(1);
            final Answer reserved = call(client, MessageType.RESERVE, 0, keys(0xA100, 2), keys(0xA200, 2));
            assertThat(await(client, client.sendDeviceCopy(MessageType.DEVICE_SAVE, layout, 0, 2, new int[] {0, 1}, new int[] {64, 64}))
                .pageStatuses()).containsOnly(PageEntryStatus.COMMITTED);
            assertThat(call(client, MessageType.ACQUIRE, 0, keys(0xA100, 2), keys(0xA200, 2)).resultCount()).isEqualTo(2);

            // The client shrinks its own file under the engine's mapping: the copy faults (SIGBUS) and must not take the engine down.
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE))
            {
                channel.truncate(0);
            }
            final Answer faulted = await(client, client.sendDeviceCopy(MessageType.DEVICE_LOAD, layout, 0, 2, new int[] {2, 3}, new int[] {64, 64}));
            assertThat(faulted.status()).isEqualTo(ErrorCode.INTERNAL_ERROR.code());
            final Answer saveFaulted = call(client, MessageType.RESERVE, 4, keys(0xA300, 1), keys(0xA400, 1));
            assertThat(saveFaulted.pageStatuses()).containsOnly(PageEntryStatus.RESERVED);
            final Answer notSaved = await(client, client.sendDeviceCopy(MessageType.DEVICE_SAVE, layout, 4, 1, new int[] {0}, new int[] {64}));
            assertThat(notSaved.status()).as("a save that faulted is answered as section 10 says").isEqualTo(ErrorCode.INTERNAL_ERROR.code());
            assertThat(notSaved.pageIds()).as("an error carries no entries").isEmpty();
            assertThat(call(client, MessageType.LOOKUP, 8, keys(0xA300, 1), keys(0xA400, 1)).poolPages()).as("and commits nothing").isZero();
            assertThat(call(client, MessageType.RESERVE, 4, keys(0xA300, 1), keys(0xA400, 1)).pageStatuses())
                .as("its reservation was given back: the key is free to reserve again").containsOnly(PageEntryStatus.RESERVED);
            assertThat(await(client, client.send(MessageType.ABORT, 4, 1, 0)).status()).isEqualTo(ErrorCode.OK.code());

            // The engine and the client carry on: the pages it pinned are still there, and STATS answers.
            assertThat(await(client, client.send(MessageType.RELEASE, 0, 2, 0)).resultCount()).isEqualTo(2);
            assertThat(await(client, client.send(MessageType.STATS, 0, 0, 0)).status()).isEqualTo(ErrorCode.OK.code());
            assertThat(reserved.resultCount()).isEqualTo(2);
        }
    }

    private static void assertRefused(final IpcConnection client, final KvBufferRegistration registration, final int detail) throws Exception
    {
        final Answer answer = await(client, client.sendRegisterKv(registration));
        assertThat(answer.status()).as("status of a registration refused for %s", DeviceRequestDescriptor.detailName(detail))
            .isEqualTo(ErrorCode.INVALID.code());
        assertThat(DeviceRequestDescriptor.detailName(answer.resultCount())).isEqualTo(DeviceRequestDescriptor.detailName(detail));
    }

    private Path buffer(final String name, final long bytes) throws IOException
    {
        final Path file = directory.resolve(name);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE))
        {
            channel.truncate(bytes);
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
