package io.kvtier.engine.ipc;

import io.kvtier.client.IpcConnection;
import io.kvtier.client.protocol.HandshakeDescriptor;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.client.protocol.RequestDescriptor;
import io.kvtier.client.protocol.RequestEncoder;
import io.kvtier.client.protocol.RingFileDescriptor;
import io.kvtier.client.protocol.RingProducer;
import io.kvtier.engine.Engine;
import io.kvtier.engine.MisbehavingTier;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.client.pool.PageStateWord;
import io.kvtier.engine.status.EngineCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.FileChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.function.BooleanSupplier;

import static io.kvtier.engine.ipc.IpcTestSupport.Answer;
import static io.kvtier.engine.ipc.IpcTestSupport.await;
import static io.kvtier.engine.ipc.IpcTestSupport.call;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * kvtier issue 16, item 9: a client that dies while its FLUSH waits on a tier that never ends a backup
 * must still lose its pins within a bounded time. The engine disconnects a client only once its request
 * in flight has ended, so the FLUSH itself must end: at {@code l3.io-timeout}.
 */
class IpcFlushBoundTest
{
    private static final long WAIT_MILLIS = 30_000;

    @TempDir
    Path directory;

    private static void waitFor(final BooleanSupplier condition, final String what) throws InterruptedException
    {
        final long deadline = System.currentTimeMillis() + WAIT_MILLIS;
        while (!condition.getAsBoolean())
        {
            if (System.currentTimeMillis() > deadline)
            {
                throw new AssertionError("gave up after " + WAIT_MILLIS + " ms waiting for " + what);
            }
            Thread.sleep(5);
        }
    }

    @Test
    void aClientThatDiesWhileItsFlushWaitsOnATierThatNeverAnswersLosesItsPins() throws Exception
    {
        final Map<String, String> settings = IpcTestSupport.settings(directory, 32);
        settings.put("tier.never.type", "misbehaving");
        settings.put(EngineConfig.POLICY_WRITE, "write-through");
        settings.put(EngineConfig.L3_IO_TIMEOUT, "300ms");
        try (Engine engine = IpcTestSupport.start(settings);
             IpcConnection writer = IpcConnection.connect(IpcTestSupport.socket(engine), 16))
        {
            final MisbehavingTier tier = MisbehavingTier.get("never");
            tier.dropWrites();
            final long[] keys = {0xF1, 0xF2};
            final Answer reserved = call(writer, MessageType.RESERVE, 0, keys, keys);
            assertThat(reserved.pageStatuses()).containsOnly(PageEntryStatus.RESERVED);
            for (int i = 0; i < 2; i++)
            {
                IpcTestSupport.fill(writer.page(reserved.pageIds()[i]), keys[i], keys[i], 256);
            }
            assertThat(await(writer, writer.sendCommit(0, 2, new int[] {256, 256})).resultCount()).isEqualTo(2);
            waitFor(() -> tier.droppedWriteBatches() > 0, "the backups to reach the tier, which keeps them");
            final int[] pages = reserved.pageIds();

            // A client pins both pages, asks for a flush, and dies without a word while the flush waits.
            try (SocketChannel socket = SocketChannel.open(StandardProtocolFamily.UNIX);
                 Arena arena = Arena.ofShared())
            {
                socket.connect(UnixDomainSocketAddress.of(IpcTestSupport.socket(engine)));
                final HandshakeDescriptor.Welcome welcome = IpcConnection.handshake(socket,
                    new HandshakeDescriptor.Hello(HandshakeDescriptor.HELLO_MAGIC, 1, 0, 16, 1, 0, new byte[0]).encode());
                assertThat(welcome.status()).isZero();
                final MemorySegment ring;
                try (FileChannel channel = FileChannel.open(Path.of(welcome.ringPath()), StandardOpenOption.READ, StandardOpenOption.WRITE))
                {
                    ring = channel.map(FileChannel.MapMode.READ_WRITE, 0, channel.size(), arena);
                }
                final RingProducer requests = new RingProducer(ring, RingFileDescriptor.requestRingOffset(), welcome.ringCapacity(),
                    RingFileDescriptor.REQUEST_TAIL_OFFSET, RingFileDescriptor.REQUEST_HEAD_OFFSET);
                final RequestEncoder encoder = new RequestEncoder();
                final int acquireLength = RequestDescriptor.HEADER_LENGTH + 2 * RequestDescriptor.KEY_LENGTH;
                encoder.wrap(ring, requests.tryClaim(MessageType.ACQUIRE, acquireLength)).header(acquireLength, MessageType.ACQUIRE, 1, 0, 2, 0, 0)
                    .key(0, keys[0], keys[0]).key(1, keys[1], keys[1]);
                requests.commitRelease();
                waitFor(() -> engine.counters().getOpaque(EngineCounter.L2_HIT_PAGES) == 2, "the dying client to pin both pages");
                encoder.wrap(ring, requests.tryClaim(MessageType.FLUSH, RequestDescriptor.HEADER_LENGTH))
                    .header(RequestDescriptor.HEADER_LENGTH, MessageType.FLUSH, 2, 0, 0, 0, 0);
                requests.commitRelease();
            }

            waitFor(() -> engine.ipc().orElseThrow().clientCount() == 1,
                "the dead client to be disconnected although its FLUSH waits on a tier that never ends its backups");
            waitFor(() -> pins(engine, pages[0]) == 0 && pins(engine, pages[1]) == 0, "its pins to come back");
        }
        finally
        {
            final MisbehavingTier tier = MisbehavingTier.get("never");
            if (tier != null)
            {
                tier.release();
            }
        }
    }

    private static int pins(final Engine engine, final int page)
    {
        return PageStateWord.pins(engine.pool().metadata().stateWordAcquire(page));
    }
}
