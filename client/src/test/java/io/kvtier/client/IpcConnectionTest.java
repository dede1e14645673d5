package io.kvtier.client;

import io.kvtier.client.protocol.ControlFileDescriptor;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.HandshakeDescriptor;
import io.kvtier.client.protocol.IdleStrategy;
import io.kvtier.client.protocol.LittleEndian;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.RequestDecoder;
import io.kvtier.client.protocol.RingConsumer;
import io.kvtier.client.protocol.RingFileDescriptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link IpcConnection} against a stand-in engine made of files and a socket that the test drives by
 * hand: what the client writes, and how it notices an engine that dropped it, stopped, or died.
 */
class IpcConnectionTest
{
    private static final int CAPACITY = 4096;
    private static final int TIMEOUT_MS = 200;

    @TempDir
    Path directory;

    /** The files and the socket of an engine that never runs: the test plays its part. */
    private final class StandIn implements AutoCloseable
    {
        final Arena arena = Arena.ofShared();
        final MemorySegment control;
        final MemorySegment ring;
        final ServerSocketChannel server;
        final Path home;
        final Path socket;
        SocketChannel accepted;

        StandIn() throws Exception
        {
            this(directory);
        }

        /** @param home where its files and socket are: a stand-in per directory */
        StandIn(final Path home) throws Exception
        {
            this.home = java.nio.file.Files.createDirectories(home);
            this.socket = home.resolve("s.sock");
            map("pool", 8192);
            control = map("control", ControlFileDescriptor.LENGTH);
            control.set(LittleEndian.LONG, ControlFileDescriptor.MAGIC_OFFSET, ControlFileDescriptor.MAGIC);
            ControlFileDescriptor.stateRelease(control, ControlFileDescriptor.STATE_OPEN);
            ring = map("ring", RingFileDescriptor.fileLength(CAPACITY));
            ring.set(LittleEndian.LONG, RingFileDescriptor.MAGIC_OFFSET, RingFileDescriptor.MAGIC);
            ring.set(LittleEndian.INT, RingFileDescriptor.CLIENT_ID_OFFSET, 7);
            ring.set(LittleEndian.INT, RingFileDescriptor.RING_CAPACITY_OFFSET, CAPACITY);
            server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            server.bind(UnixDomainSocketAddress.of(socket));
            Thread.ofPlatform().daemon(true).start(this::welcome);
        }

        private MemorySegment map(final String name, final long length) throws Exception
        {
            try (FileChannel channel = FileChannel.open(home.resolve(name), StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE))
            {
                return channel.map(FileChannel.MapMode.READ_WRITE, 0, length, arena);
            }
        }

        private void welcome()
        {
            try
            {
                accepted = server.accept();
                final ByteBuffer hello = ByteBuffer.allocate(HandshakeDescriptor.HELLO_HEADER_LENGTH);
                while (hello.hasRemaining())
                {
                    accepted.read(hello);
                }
                final ByteBuffer welcome = new HandshakeDescriptor.Welcome(0, 7, 8, 1, 4096, 1, 4096, 4096, CAPACITY, TIMEOUT_MS, 160, 1, 0,
                    home.resolve("pool").toString(), home.resolve("control").toString(), home.resolve("ring").toString()).encode();
                while (welcome.hasRemaining())
                {
                    accepted.write(welcome);
                }
            }
            catch (final Exception ex)
            {
                throw new IllegalStateException(ex);
            }
        }

        @Override
        public void close() throws Exception
        {
            server.close();
        }
    }

    @Test
    void aRequestIsWrittenAsTheProtocolSaysAndTheDoorbellIsRung() throws Exception
    {
        try (StandIn engine = new StandIn();
             IpcConnection client = IpcConnection.connect(engine.socket, 8))
        {
            assertThat(client.welcome().clientId()).isEqualTo(7);
            LittleEndian.INT_HANDLE.setVolatile(engine.control, (long)ControlFileDescriptor.DOORBELL_OFFSET, 1);
            final long id = client.send(MessageType.ACQUIRE, 2, 1, new long[] {0x0102030405060708L}, new long[] {9});
            assertThat(id).isEqualTo(1);
            assertThat((int)LittleEndian.INT_HANDLE.getVolatile(engine.control, (long)ControlFileDescriptor.DOORBELL_OFFSET))
                .as("a sleeping engine's doorbell is cleared (and the engine woken)").isZero();
            final RingConsumer requests = new RingConsumer(engine.ring, RingFileDescriptor.requestRingOffset(), CAPACITY,
                RingFileDescriptor.REQUEST_TAIL_OFFSET, RingFileDescriptor.REQUEST_HEAD_OFFSET);
            final long at = requests.poll();
            final RequestDecoder request = new RequestDecoder().wrap(engine.ring, at, requests.currentLength());
            assertThat(request.length()).isEqualTo(48);
            assertThat(request.type()).isEqualTo(MessageType.ACQUIRE);
            assertThat(request.requestId()).isEqualTo(1);
            assertThat(request.firstSlot()).isEqualTo(2);
            assertThat(request.count()).isEqualTo(1);
            assertThat(request.keyHigh(0)).isEqualTo(0x0102030405060708L);
            assertThat(request.keyLow(0)).isEqualTo(9);
        }
    }

    @Test
    void aWaitEndsWhenTheEngineDropsTheClientStopsOrDies() throws Exception
    {
        try (StandIn engine = new StandIn();
             IpcConnection client = IpcConnection.connect(engine.socket, 8))
        {
            // Nobody answers and the engine's heartbeat never moves: after Client Timeout the engine counts as gone.
            final long dead = client.send(MessageType.FLUSH, 0, 0, 0);
            assertThatThrownBy(() -> client.awaitResponse(dead))
                .isInstanceOfSatisfying(IpcException.class, ex -> assertThat(ex.getMessage()).contains("heartbeat stood still"));

            LittleEndian.INT_HANDLE.setRelease(engine.ring, (long)RingFileDescriptor.DISCONNECT_REASON_OFFSET, ErrorCode.TIMED_OUT.code());
            assertThatThrownBy(() -> client.awaitResponse(client.send(MessageType.FLUSH, 0, 0, 0)))
                .isInstanceOfSatisfying(IpcException.class, ex -> assertThat(ex.errorCode()).isEqualTo(ErrorCode.TIMED_OUT));

            LittleEndian.INT_HANDLE.setRelease(engine.ring, (long)RingFileDescriptor.DISCONNECT_REASON_OFFSET, 0);
            ControlFileDescriptor.stateRelease(engine.control, ControlFileDescriptor.STATE_CLOSED);
            assertThatThrownBy(() -> client.awaitResponse(client.send(MessageType.FLUSH, 0, 0, 0)))
                .isInstanceOfSatisfying(IpcException.class, ex -> assertThat(ex.errorCode()).isEqualTo(ErrorCode.CLOSED));
        }
    }

    /**
     * The default wait ({@code AWAKE}) spins without yielding while the engine is awake; a request of
     * {@link IpcConnection#LARGE_REQUEST_KEYS} keys or more waits as {@code BACKOFF} does, yields included, because
     * spinning through a long batch beside a busy core cut batched lookups fourfold (docs/PERFORMANCE.md, IPC round five).
     * The stand-in engine is awake (its doorbell 0) and never answers, so each wait runs through its whole course.
     */
    @Test
    void aRequestOfManyKeysIsWaitedForWithTheBackoffAndASmallerOneWithoutAYield() throws Exception
    {
        assertThat(yieldsWaitingFor(IpcConnection.LARGE_REQUEST_KEYS - 1, IdleStrategy.Kind.AWAKE)).as("one key fewer: AWAKE never yields").isZero();
        assertThat(yieldsWaitingFor(IpcConnection.LARGE_REQUEST_KEYS, IdleStrategy.Kind.AWAKE)).as("the back-off's yields").isPositive();
        assertThat(yieldsWaitingFor(1, IdleStrategy.Kind.BACKOFF)).as("a BACKOFF client yields for one key too").isPositive();
    }

    private long yieldsWaitingFor(final int keys, final IdleStrategy.Kind kind) throws Exception
    {
        try (StandIn engine = new StandIn(directory.resolve(kind + "-" + keys));
             IpcConnection client = IpcConnection.connect(engine.socket, 8, new byte[0], HandshakeDescriptor.MAJOR_VERSION, kind))
        {
            final long unanswered = client.send(MessageType.LOOKUP, 0, keys, 0);
            assertThatThrownBy(() -> client.awaitResponse(unanswered))
                .isInstanceOfSatisfying(IpcException.class, ex -> assertThat(ex.getMessage()).contains("heartbeat stood still"));
            // Yields only: on a loaded host the back-off's 50 yields can outlast the 200 ms the stand-in's heartbeat allows, so
            // whether it got as far as a sleep is left alone.
            return client.waitCounts().yields();
        }
    }

    @Test
    void theClientsHeartbeatMovesWhileItWaitsForNothing() throws Exception
    {
        try (StandIn engine = new StandIn();
             IpcConnection client = IpcConnection.connect(engine.socket, 8))
        {
            final long first = (long)LittleEndian.LONG_HANDLE.getAcquire(engine.ring, (long)RingFileDescriptor.CLIENT_HEARTBEAT_OFFSET);
            final long deadline = System.nanoTime() + 30_000_000_000L;
            while ((long)LittleEndian.LONG_HANDLE.getAcquire(engine.ring, (long)RingFileDescriptor.CLIENT_HEARTBEAT_OFFSET) == first)
            {
                assertThat(System.nanoTime() - deadline).as("the heartbeat moved in time").isNegative();
                Thread.sleep(5);
            }
            assertThat(client.disconnectReasonAcquire()).isZero();
        }
    }
}
