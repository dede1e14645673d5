package io.kvtier.engine.ipc;

import io.kvtier.client.protocol.DeviceRequestDescriptor;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.client.protocol.RequestEncoder;
import io.kvtier.client.protocol.ResponseDecoder;
import io.kvtier.client.protocol.RingConsumer;
import io.kvtier.client.protocol.RingFileDescriptor;
import io.kvtier.device.KvPageDescriptor;
import io.kvtier.device.KvShape;
import io.kvtier.device.LayerFirstLayout;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.client.pool.PageStateWord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The device thread on its own, with page states the IPC path cannot reach on demand: a slot whose pin
 * the engine has taken back (its page freed, or reused under a new generation) while the slot still
 * says PINNED, which in real life only a lease lapsing during a copy produces. Such a slot is answered
 * EXPIRED, never COPIED, and nothing of the page is counted as delivered.
 */
class DeviceCopierTest
{
    private static final KvShape SHAPE = KvShape.keyValue(2, 4, 2, 8, 2);
    private static final int RING = 4096;

    @TempDir
    Path directory;

    private PagePool pool;
    private DeviceCopier copier;
    private Arena arena;

    @BeforeEach
    void start() throws Exception
    {
        pool = PagePool.create(directory.resolve("pool"), 4096, 4, 64, 2, Duration.ofSeconds(30));
        // Loads never reach the sealer; saves are IpcDeviceCopyTest's.
        copier = new DeviceCopier(pool, null, 2, new io.kvtier.engine.status.ThreadWatch(new io.kvtier.engine.pool.Counters(pool.counters()), java.util.concurrent.TimeUnit.SECONDS.toNanos(60)));
        arena = Arena.ofShared();
    }

    @AfterEach
    void stop()
    {
        copier.stop();
        arena.close();
        pool.close();
    }

    @Test
    void aSlotWhosePageIsNoLongerThePinnedPageIsAnsweredExpiredAndItsBlockIsLeftAlone() throws Exception
    {
        final int pageLength = (int)KvPageDescriptor.pageLength(SHAPE);
        serving(0, 5, pageLength, (byte)0x21);
        serving(1, 7, pageLength, (byte)0x42);
        // Page 2 was freed after slot 2 pinned it; page 3 was reused: same state, a later generation.
        pool.metadata().stateWordVolatile(2, PageStateWord.word(9, 0, PageStateWord.FREE));
        serving(3, 12, pageLength, (byte)0x63);

        final Path kv = directory.resolve("kv");
        try (FileChannel channel = FileChannel.open(kv, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE))
        {
            channel.write(java.nio.ByteBuffer.allocate(1), SHAPE.pageBytes() * 4 - 1);
        }
        final MemorySegment buffers;
        try (FileChannel channel = FileChannel.open(kv, StandardOpenOption.READ, StandardOpenOption.WRITE))
        {
            buffers = channel.map(FileChannel.MapMode.READ_WRITE, 0, channel.size(), arena);
        }
        buffers.fill((byte)0x7F);

        final RemoteClient client = client();
        final MemorySegment record = arena.allocate(DeviceRequestDescriptor.registerLength(1));
        new RequestEncoder().wrap(record, 0).header((int)record.byteSize(), MessageType.REGISTER_KV, 1, 0, 0, 0, 0)
            .registerKv(DeviceRequestDescriptor.HANDLE_HOST_FILE, 0, DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS,
                new int[] {2, 2, 4, 2, 8, 2, 4}, 1)
            .allocation(0, 0, (kv + "\0").getBytes());
        client.takeRegisterRecord(record, 0, (int)record.byteSize(), null);
        final ResponseDecoder registered = run(client, MessageType.REGISTER_KV, 0, 0);
        assertThat(registered.status()).isZero();
        assertThat(registered.resultCount()).isEqualTo(1);

        pin(client, 0, 0, 5);
        pin(client, 1, 1, 6);  // pinned under generation 6; the page is at 7 now
        pin(client, 2, 2, 9);
        pin(client, 3, 3, 11); // reused: generation 12 holds another key's bytes
        final MemorySegment copy = arena.allocate(DeviceRequestDescriptor.copyLength(4));
        final RequestEncoder encoder = new RequestEncoder().wrap(copy, 0).header((int)copy.byteSize(), MessageType.DEVICE_LOAD, 2, 0, 4, 0, 0)
            .layoutId(1);
        for (int i = 0; i < 4; i++)
        {
            encoder.copyEntry(i, i, 4);
        }
        client.takeCopyEntries(new io.kvtier.client.protocol.RequestDecoder().wrap(copy, 0, (int)copy.byteSize()), 0, 4);
        final ResponseDecoder loaded = run(client, MessageType.DEVICE_LOAD, 0, 4);
        assertThat(loaded.status()).isZero();
        assertThat(loaded.resultCount()).isEqualTo(1);
        assertThat(new int[] {loaded.entryStatus(0), loaded.entryStatus(1), loaded.entryStatus(2), loaded.entryStatus(3)})
            .containsExactly(PageEntryStatus.COPIED, PageEntryStatus.EXPIRED, PageEntryStatus.EXPIRED, PageEntryStatus.EXPIRED);

        final LayerFirstLayout layout = LayerFirstLayout.contiguous(SHAPE, 4, 0);
        for (int l = 0; l < SHAPE.layers(); l++)
        {
            for (int t = 0; t < 2; t++)
            {
                final MemorySegment block0 = buffers.asSlice(layout.blockAddress(l, t, 0), SHAPE.blockBytes());
                assertThat(block0.mismatch(pool.frames().payload(0).asSlice(KvPageDescriptor.slotOffset(SHAPE, l, t), SHAPE.blockBytes())))
                    .isEqualTo(-1);
                for (int b = 1; b < 4; b++)
                {
                    final MemorySegment untouched = buffers.asSlice(layout.blockAddress(l, t, b), SHAPE.blockBytes());
                    assertThat(untouched.mismatch(MemorySegment.ofArray(filled((int)SHAPE.blockBytes(), (byte)0x7F)))).as("block %d", b)
                        .isEqualTo(-1);
                }
            }
        }
    }

    private void serving(final int page, final int generation, final int length, final byte value)
    {
        pool.frames().payload(page).asSlice(0, length).fill(value);
        pool.metadata().payloadInfoPlain(page, length, 0);
        pool.metadata().stateWordVolatile(page, PageStateWord.word(generation, 1, PageStateWord.SERVING));
    }

    private static void pin(final RemoteClient client, final int slot, final int page, final int generation)
    {
        client.statuses()[slot] = (byte)PageEntryStatus.PINNED;
        client.pageIds()[slot] = page;
        client.generations()[slot] = generation;
    }

    private static byte[] filled(final int length, final byte value)
    {
        final byte[] bytes = new byte[length];
        java.util.Arrays.fill(bytes, value);
        return bytes;
    }

    private RemoteClient client() throws Exception
    {
        final RemoteClient client = new RemoteClient(4, new long[0], 1, 1,
            (Integer)Files.getAttribute(directory, "unix:uid", java.nio.file.LinkOption.NOFOLLOW_LINKS), RING);
        client.attach(arena, arena.allocate(RingFileDescriptor.fileLength(RING), 64), directory.resolve("ring"), RING, -1);
        return client;
    }

    private ResponseDecoder run(final RemoteClient client, final int type, final int first, final int count) throws Exception
    {
        client.beginRequest(type, type, type, first, count);
        assertThat(copier.offer(client)).isTrue();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (client.inFlightAcquire() && System.nanoTime() < deadline)
        {
            Thread.onSpinWait();
        }
        assertThat(client.inFlightAcquire()).as("the device thread answered").isFalse();
        final RingConsumer responses = new RingConsumer(client.ring(), RingFileDescriptor.responseRingOffset(RING), RING,
            RingFileDescriptor.RESPONSE_TAIL_OFFSET, RingFileDescriptor.RESPONSE_HEAD_OFFSET);
        long offset = responses.poll();
        // Earlier answers of this client were read by earlier calls; skip to the newest.
        ResponseDecoder last = null;
        while (offset >= 0)
        {
            final MemorySegment copy = arena.allocate(responses.currentLength());
            MemorySegment.copy(client.ring(), offset, copy, 0, responses.currentLength());
            last = new ResponseDecoder().wrap(copy, 0);
            responses.advanceRelease();
            offset = responses.poll();
        }
        assertThat(last).isNotNull();
        assertThat(last.type()).isEqualTo(type);
        return last;
    }
}
