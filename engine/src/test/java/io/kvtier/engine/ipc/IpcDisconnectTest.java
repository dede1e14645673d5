package io.kvtier.engine.ipc;

import io.kvtier.client.IpcConnection;
import io.kvtier.client.IpcException;
import io.kvtier.client.protocol.ControlFileDescriptor;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.HandshakeDescriptor;
import io.kvtier.client.protocol.LittleEndian;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.client.protocol.RequestDescriptor;
import io.kvtier.client.protocol.RequestEncoder;
import io.kvtier.client.protocol.RingFileDescriptor;
import io.kvtier.client.protocol.RingProducer;
import io.kvtier.engine.Engine;
import io.kvtier.engine.status.EngineCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.FileChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static io.kvtier.engine.ipc.IpcTestSupport.Answer;
import static io.kvtier.engine.ipc.IpcTestSupport.call;
import static io.kvtier.engine.ipc.IpcTestSupport.keys;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The disconnects of docs/ipc-protocol.md section 6 other than a dead socket (IpcCrossProcessTest has
 * that one), each provoked by a hand-made client that speaks the protocol only as far as the test
 * needs: its Disconnect Reason names the code, and what it held goes back.
 */
class IpcDisconnectTest
{
    private static final long WAIT_MILLIS = 30_000;

    @TempDir
    Path directory;

    /** A client that did the handshake and mapped its ring file, and does nothing on its own: no heartbeat. */
    private static final class RawClient implements AutoCloseable
    {
        final SocketChannel socket;
        final HandshakeDescriptor.Welcome welcome;
        final Arena arena = Arena.ofShared();
        final MemorySegment ring;
        final RingProducer requests;
        final RequestEncoder encoder = new RequestEncoder();
        long requestId;

        RawClient(final Engine engine) throws Exception
        {
            socket = SocketChannel.open(StandardProtocolFamily.UNIX);
            socket.connect(UnixDomainSocketAddress.of(IpcTestSupport.socket(engine)));
            welcome = IpcConnection.handshake(socket, new HandshakeDescriptor.Hello(HandshakeDescriptor.HELLO_MAGIC, 1, 0, 16, 1, 0, new byte[0]).encode());
            assertThat(welcome.status()).isZero();
            try (FileChannel channel = FileChannel.open(Path.of(welcome.ringPath()), StandardOpenOption.READ, StandardOpenOption.WRITE))
            {
                ring = channel.map(FileChannel.MapMode.READ_WRITE, 0, channel.size(), arena);
            }
            requests = new RingProducer(ring, RingFileDescriptor.requestRingOffset(), welcome.ringCapacity(), RingFileDescriptor.REQUEST_TAIL_OFFSET,
                RingFileDescriptor.REQUEST_HEAD_OFFSET);
        }

        int disconnectReason()
        {
            return (int)LittleEndian.INT_HANDLE.getAcquire(ring, (long)RingFileDescriptor.DISCONNECT_REASON_OFFSET);
        }

        void beat()
        {
            LittleEndian.LONG_HANDLE.setRelease(ring, (long)RingFileDescriptor.CLIENT_HEARTBEAT_OFFSET, ++requestId * 1000);
        }

        /** Publishes a RELEASE of no slots; false when the ring is full. */
        boolean release()
        {
            final long at = requests.tryClaim(MessageType.RELEASE, RequestDescriptor.HEADER_LENGTH);
            if (at < 0)
            {
                return false;
            }
            encoder.wrap(ring, at).header(RequestDescriptor.HEADER_LENGTH, MessageType.RELEASE, ++requestId, 0, 0, 0, 0);
            requests.commitRelease();
            return true;
        }

        @Override
        public void close() throws Exception
        {
            socket.close();
            arena.close();
        }
    }

    /** The ipc_clients gauge counts processes attached over IPC, which the pool's clients_attached does not. */
    @Test
    void theIpcClientsGaugeFollowsClientsAttachingAndLeaving() throws Exception
    {
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 32)))
        {
            final IpcConnection first = IpcConnection.connect(IpcTestSupport.socket(engine), 8);
            try (IpcConnection second = IpcConnection.connect(IpcTestSupport.socket(engine), 8))
            {
                waitFor(() -> engine.counters().getOpaque(EngineCounter.IPC_CLIENTS) == 2, "ipc_clients to count both clients");
                first.close();
                waitFor(() -> engine.counters().getOpaque(EngineCounter.IPC_CLIENTS) == 1, "ipc_clients to drop the closed one");
            }
            waitFor(() -> engine.counters().getOpaque(EngineCounter.IPC_CLIENTS) == 0, "ipc_clients to drop both");
        }
    }

    @Test
    void aClientWhoseHeartbeatStandsStillIsTimedOutAndItsReservationsQuarantined() throws Exception
    {
        final Map<String, String> settings = IpcTestSupport.settings(directory, 32);
        settings.put("ipc.client-timeout", "200ms");
        try (Engine engine = IpcTestSupport.start(settings);
             RawClient silent = new RawClient(engine))
        {
            assertThat(silent.welcome.clientTimeoutMs()).isEqualTo(200);
            // It reserved a page through a well-behaved connection's protocol... then fell silent.
            final long before = engine.counters().getOpaque(EngineCounter.RESERVATIONS_EXPIRED);
            final RequestEncoder reserve = silent.encoder.wrap(silent.ring, silent.requests.tryClaim(MessageType.RESERVE, 48));
            reserve.header(48, MessageType.RESERVE, ++silent.requestId, 0, 1, 0, 0).key(0, 0x51, 0x51);
            silent.requests.commitRelease();
            waitFor(() -> silent.disconnectReason() != 0, "the silent client to be dropped");
            assertThat(silent.disconnectReason()).isEqualTo(ErrorCode.TIMED_OUT.code());
            waitFor(() -> engine.ipc().orElseThrow().clientCount() == 0, "the client to be released");
            assertThat(engine.counters().getOpaque(EngineCounter.RESERVATIONS_EXPIRED) - before).isEqualTo(1);
            assertThat(Files.exists(Path.of(silent.welcome.ringPath()))).as("its ring file is unlinked").isFalse();
        }
    }

    @Test
    void aClientThatStopsReadingItsResponsesIsDroppedAsNotReading() throws Exception
    {
        final Map<String, String> settings = IpcTestSupport.settings(directory, 32);
        settings.put("ipc.client-timeout", "300ms");
        settings.put("ipc.ring-bytes", "4KiB");
        try (Engine engine = IpcTestSupport.start(settings);
             RawClient deaf = new RawClient(engine))
        {
            // Requests keep coming and the heartbeat moves, but no response is ever read: the 4 KiB
            // response ring fills with 48-byte answers, then the engine waits, then gives up.
            waitFor(() ->
            {
                deaf.beat();
                deaf.release();
                return deaf.disconnectReason() != 0;
            }, "the deaf client to be dropped");
            assertThat(deaf.disconnectReason()).isEqualTo(ErrorCode.NOT_READING.code());
        }
    }

    @Test
    void aRecordShorterThanItsHeaderEndsTheClientAsMalformed() throws Exception
    {
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 32));
             RawClient broken = new RawClient(engine))
        {
            broken.beat();
            broken.ring.set(LittleEndian.INT, RingFileDescriptor.requestRingOffset(), 4);
            LittleEndian.LONG_HANDLE.setRelease(broken.ring, (long)RingFileDescriptor.REQUEST_TAIL_OFFSET, 8L);
            waitFor(() -> broken.disconnectReason() != 0, "the client to be dropped");
            assertThat(broken.disconnectReason()).isEqualTo(ErrorCode.MALFORMED.code());
        }
    }

    @Test
    void aRecordLongerThanMaxMessageLengthEndsTheClientAsTooLong() throws Exception
    {
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 32));
             RawClient broken = new RawClient(engine))
        {
            broken.beat();
            final int length = broken.welcome.maxMessageLength() + 16;
            final long at = broken.requests.tryClaim(MessageType.LOOKUP, length);
            broken.encoder.wrap(broken.ring, at).header(length, MessageType.LOOKUP, 1, 0, 16, 0, 0);
            broken.requests.commitRelease();
            waitFor(() -> broken.disconnectReason() != 0, "the client to be dropped");
            assertThat(broken.disconnectReason()).isEqualTo(ErrorCode.TOO_LONG.code());
        }
    }

    @Test
    void theEnginesShutdownDisconnectsItsClientsAndMarksTheControlFileClosed() throws Exception
    {
        final Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 32));
        final IpcConnection client = IpcConnection.connect(IpcTestSupport.socket(engine), 8);
        try
        {
            final Answer pinnedNothing = call(client, MessageType.ACQUIRE, 0, keys(1, 2), keys(1, 2));
            assertThat(pinnedNothing.resultCount()).isZero();
            final Answer reserved = call(client, MessageType.RESERVE, 2, keys(7, 1), keys(7, 1));
            assertThat(reserved.pageStatuses()).containsExactly(PageEntryStatus.RESERVED);
            final long beat = ControlFileDescriptor.engineHeartbeatAcquire(client.controlFile());
            waitFor(() -> ControlFileDescriptor.engineHeartbeatAcquire(client.controlFile()) != beat, "the engine's heartbeat to move");
            engine.close();
            assertThat(ControlFileDescriptor.stateAcquire(client.controlFile())).isEqualTo(ControlFileDescriptor.STATE_CLOSED);
            assertThat(client.disconnectReasonAcquire()).isEqualTo(ErrorCode.CLOSED.code());
            assertThatThrownBy(() -> call(client, MessageType.LOOKUP, 0, keys(1, 2), keys(1, 2)))
                .isInstanceOfSatisfying(IpcException.class, ex -> assertThat(ex.errorCode()).isEqualTo(ErrorCode.CLOSED));
            assertThat(Files.list(directory).toList()).as("every file of the engine is gone").isEmpty();
        }
        finally
        {
            client.close();
            engine.close();
        }
    }

    private static void waitFor(final BooleanSupplier outcome, final String what) throws InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MILLIS);
        while (!outcome.getAsBoolean())
        {
            if (System.nanoTime() - deadline > 0)
            {
                throw new AssertionError("gave up waiting for " + what);
            }
            Thread.sleep(1);
        }
    }
}
