package io.kvtier.engine.ipc;

import io.kvtier.client.IpcConnection;
import io.kvtier.client.IpcException;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.HandshakeDescriptor;
import io.kvtier.client.protocol.IdleStrategy;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.client.protocol.RequestDescriptor;
import io.kvtier.client.protocol.ResponseDecoder;
import io.kvtier.engine.Engine;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static io.kvtier.engine.ipc.IpcTestSupport.Answer;
import static io.kvtier.engine.ipc.IpcTestSupport.await;
import static io.kvtier.engine.ipc.IpcTestSupport.call;
import static io.kvtier.engine.ipc.IpcTestSupport.keys;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The engine's IPC end over a real Unix socket and real shared files, with the Java client in this JVM:
 * the request cycle of docs/ipc-protocol.md end to end, the error codes of its section 4 and the
 * handshake's refusals of its section 2.
 */
class IpcEndToEndTest
{
    @TempDir
    Path directory;

    @Test
    void aPageReservedWrittenAndCommittedByOneClientIsAcquiredWithItsBytesByAnother() throws Exception
    {
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 64));
             IpcConnection writer = IpcConnection.connect(IpcTestSupport.socket(engine), 16);
             IpcConnection reader = IpcConnection.connect(IpcTestSupport.socket(engine), 16))
        {
            final long[] highs = keys(0x1000, 3);
            final long[] lows = keys(0x2000, 3);
            final Answer miss = call(reader, MessageType.LOOKUP, 0, highs, lows);
            assertThat(miss.status()).isEqualTo(ErrorCode.OK.code());
            assertThat(miss.poolPages()).isZero();

            final Answer reserved = call(writer, MessageType.RESERVE, 2, highs, lows);
            assertThat(reserved.status()).isEqualTo(ErrorCode.OK.code());
            assertThat(reserved.resultCount()).isEqualTo(3);
            assertThat(reserved.pageStatuses()).containsOnly(PageEntryStatus.RESERVED);
            final int[] lengths = new int[3];
            for (int i = 0; i < 3; i++)
            {
                lengths[i] = IpcTestSupport.PAGE_SIZE - 8 * i;
                IpcTestSupport.fill(writer.page(reserved.pageIds()[i]), highs[i], lows[i], lengths[i]);
            }
            final Answer committed = await(writer, writer.sendCommit(2, 3, lengths));
            assertThat(committed.status()).isEqualTo(ErrorCode.OK.code());
            assertThat(committed.resultCount()).isEqualTo(3);
            assertThat(committed.pageStatuses()).containsOnly(PageEntryStatus.COMMITTED);

            final Answer found = await(reader, reader.send(MessageType.LOOKUP, 0, 3, RequestDescriptor.FLAG_KEYS_IN_SLOTS));
            assertThat(found.poolPages()).isEqualTo(3);
            final Answer acquired = call(reader, MessageType.ACQUIRE, 0, highs, lows);
            assertThat(acquired.resultCount()).isEqualTo(3);
            assertThat(acquired.pageStatuses()).containsOnly(PageEntryStatus.PINNED);
            for (int i = 0; i < 3; i++)
            {
                assertThat(IpcTestSupport.holds(reader.page(acquired.pageIds()[i]), highs[i], lows[i], lengths[i])).as("page %d", i).isTrue();
                assertThat(engine.pool().metadata().payloadLengthPlain(acquired.pageIds()[i])).isEqualTo(lengths[i]);
            }
            final Answer released = await(reader, reader.send(MessageType.RELEASE, 0, 3, 0));
            assertThat(released.status()).isEqualTo(ErrorCode.OK.code());
            assertThat(released.resultCount()).isEqualTo(3);

            final long stats = reader.send(MessageType.STATS, 0, 0, 0);
            final ResponseDecoder counters = reader.awaitResponse(stats);
            assertThat(counters.status()).isZero();
            assertThat(counters.statsCount()).isPositive();
            reader.releaseResponse();
        }
        assertThat(Files.list(directory).toList()).as("socket, control and ring files are removed").isEmpty();
    }

    @Test
    void brokenRequestsAreAnsweredWithTheirErrorCodeAndChangeNothing() throws Exception
    {
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 64));
             IpcConnection client = IpcConnection.connect(IpcTestSupport.socket(engine), 16))
        {
            assertThat(client.maxKeys()).isEqualTo(16);
            final long[] a = {0xA1};
            final long[] b = {0xB1};
            final Answer reserved = call(client, MessageType.RESERVE, 0, a, a);
            assertThat(reserved.pageStatuses()).containsExactly(PageEntryStatus.RESERVED);

            // Another key into the slot that holds the reservation: refused; the same key again: fine.
            final Answer held = call(client, MessageType.RESERVE, 0, b, b);
            assertThat(held.status()).isEqualTo(ErrorCode.SLOT_HELD.code());
            assertThat(held.pageIds()).isEmpty();
            assertThat(call(client, MessageType.RESERVE, 0, a, a).status()).isEqualTo(ErrorCode.OK.code());
            assertThat(call(client, MessageType.ACQUIRE, 0, a, a).status()).as("an acquire would lose the reservation")
                .isEqualTo(ErrorCode.SLOT_HELD.code());

            final Answer outOfRange = await(client, client.send(MessageType.RELEASE, 15, 2, 0));
            assertThat(outOfRange.status()).isEqualTo(ErrorCode.SLOT_RANGE.code());

            // A replayed request id: the record claims id 1 again, long after it was used.
            client.claim(MessageType.RELEASE, 0, 1, 0, 0, 0).header(32, MessageType.RELEASE, 1, 0, 1, 0, 0);
            client.publish();
            final ResponseDecoder stale = client.awaitResponse(1);
            assertThat(stale.status()).isEqualTo(ErrorCode.STALE_REQUEST_ID.code());
            client.releaseResponse();

            final Answer denied = await(client, publishRaw(client, MessageType.RELEASE, 0, 1, 1));
            assertThat(denied.status()).as("namespace 1 of a client with none").isEqualTo(ErrorCode.NAMESPACE_DENIED.code());

            client.claim(MessageType.LOOKUP, 0, 2, 0, 0, 16);   // a body of one key for a Count of two
            final long malformed = client.publish();
            assertThat(await(client, malformed).status()).isEqualTo(ErrorCode.MALFORMED.code());

            final long unknown = publishRaw(client, 12, 0, 0, 0);
            assertThat(await(client, unknown).status()).isEqualTo(ErrorCode.UNKNOWN_TYPE.code());

            // None of it changed the reservation: the page is still ours to commit.
            IpcTestSupport.fill(client.page(reserved.pageIds()[0]), 0xA1, 0xA1, 64);
            final Answer committed = await(client, client.sendCommit(0, 1, new int[] {64}));
            assertThat(committed.pageStatuses()).containsExactly(PageEntryStatus.COMMITTED);
            assertThat(engine.ipc().orElseThrow().clientCount()).isEqualTo(1);
        }
    }

    private static long publishRaw(final IpcConnection client, final int type, final int first, final int count, final int namespace) throws IpcException
    {
        client.claim(type, first, count, namespace, 0, 0);
        return client.publish();
    }

    @Test
    void aHelloWithAWrongMagicOrVersionIsRefusedWithItsCode() throws Exception
    {
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 16)))
        {
            assertThat(hello(engine, 0x12345678, 1).status()).isEqualTo(ErrorCode.BAD_HELLO.code());
            final HandshakeDescriptor.Welcome version = hello(engine, HandshakeDescriptor.HELLO_MAGIC, 2);
            assertThat(version.status()).isEqualTo(ErrorCode.VERSION.code());
            assertThat(version.poolPath()).as("the engine's message").contains("major version");
            assertThatThrownBy(() -> IpcConnection.connect(IpcTestSupport.socket(engine), 8, new byte[0], 7))
                .isInstanceOfSatisfying(IpcException.class, ex -> assertThat(ex.errorCode()).isEqualTo(ErrorCode.VERSION));
            try (IpcConnection fine = IpcConnection.connect(IpcTestSupport.socket(engine), 8))
            {
                assertThat(fine.welcome().status()).isZero();
            }
        }
    }

    private static HandshakeDescriptor.Welcome hello(final Engine engine, final int magic, final int major) throws Exception
    {
        try (SocketChannel socket = SocketChannel.open(StandardProtocolFamily.UNIX))
        {
            socket.connect(UnixDomainSocketAddress.of(IpcTestSupport.socket(engine)));
            return IpcConnection.handshake(socket, new HandshakeDescriptor.Hello(magic, major, 0, 8, 1, 0, new byte[0]).encode());
        }
    }

    @Test
    void ringFilesADeadEngineLeftBesideThePoolAreRemovedAtStart() throws Exception
    {
        final Path stale = Files.write(directory.resolve("pool.client-3-5eed"), new byte[4096]);
        final Path other = Files.write(directory.resolve("pool.other"), new byte[16]);
        final Path linked = Files.createSymbolicLink(directory.resolve("pool.client-9-link"), other);
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 16)))
        {
            assertThat(stale).as("a ring file of the pool's dead engine").doesNotExist();
            assertThat(other).as("not a ring file").exists();
            assertThat(Files.isSymbolicLink(linked)).as("a link is not a ring file this engine made: left alone").isTrue();
        }
    }

    @Test
    void onlyTheSocketIsEverOpenToOthersAndA12RingHasNoName() throws Exception
    {
        final String group = Files.readAttributes(directory, PosixFileAttributes.class).group().getName();
        for (final boolean withGroup : new boolean[] {false, true})
        {
            final Map<String, String> settings = IpcTestSupport.settings(directory, 16);
            if (withGroup)
            {
                settings.put("ipc.group", group);
            }
            try (Engine engine = IpcTestSupport.start(settings);
                 IpcConnection passed = IpcConnection.connect(IpcTestSupport.socket(engine), 8);
                 IpcConnection byName = IpcConnection.connect(IpcTestSupport.socket(engine), 8, new byte[0], 1, 1, IdleStrategy.Kind.BACKOFF))
            {
                assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(IpcTestSupport.socket(engine))))
                    .as("the socket, which decides who may connect").isEqualTo(withGroup ? "rw-rw----" : "rw-------");
                if (withGroup)
                {
                    assertThat(Files.readAttributes(IpcTestSupport.socket(engine), PosixFileAttributes.class).group().getName()).isEqualTo(group);
                }
                // Whatever the group: the files a client maps are the engine's alone; a 1.2 client gets them as descriptors.
                for (final Path file : List.of(engine.ipc().orElseThrow().controlPath(), engine.pool().path(), Path.of(byName.welcome().ringPath())))
                {
                    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).as(file.toString()).isEqualTo("rw-------");
                }
                assertThat(passed.welcome().descriptors()).isEqualTo(3);
                assertThat(passed.welcome().ringPath()).as("a ring passed as a descriptor has no name").isEmpty();
                assertThat(byName.welcome().descriptors()).isZero();
                try (Stream<Path> files = Files.list(directory))
                {
                    assertThat(files.filter(p -> p.getFileName().toString().startsWith("pool.client-")).toList())
                        .as("ring files: only the 1.1 client's").containsExactly(Path.of(byName.welcome().ringPath()));
                }
                final long id = passed.send(MessageType.STATS, 0, 0, 0);
                assertThat(passed.awaitResponse(id).status()).isZero();
                passed.releaseResponse();
            }
        }
    }

    @Test
    void aSocketPathThatCannotBeBoundFailsTheStartNamingTheSetting() throws Exception
    {
        final Map<String, String> settings = IpcTestSupport.settings(directory, 16);
        settings.put("ipc.socket-path", directory.resolve("x".repeat(120) + ".sock").toString());
        assertThatThrownBy(() -> IpcTestSupport.start(settings))
            .isInstanceOfSatisfying(io.kvtier.engine.config.ConfigException.class, ex -> assertThat(ex.key()).isEqualTo("ipc.socket-path"));
        assertThat(Files.list(directory).toList()).as("nothing is left behind").isEmpty();
    }

    @Test
    void aUserNotOnTheAllowListIsRefused() throws Exception
    {
        final int ownUid = (Integer)Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        final Map<String, String> settings = IpcTestSupport.settings(directory, 16);
        settings.put("ipc.allowed-uids", String.valueOf(ownUid + 4242));
        try (Engine engine = IpcTestSupport.start(settings))
        {
            assertThatThrownBy(() -> IpcConnection.connect(IpcTestSupport.socket(engine), 8))
                .isInstanceOfSatisfying(IpcException.class, ex -> assertThat(ex.errorCode()).isEqualTo(ErrorCode.NOT_ALLOWED));
            assertThat(engine.ipc().orElseThrow().clientCount()).isZero();
        }
    }

    @Test
    void aClientBeyondIpcMaxClientsIsRefusedAndOneGoingFreesItsPlace() throws Exception
    {
        final Map<String, String> settings = IpcTestSupport.settings(directory, 16);
        settings.put("ipc.max-clients", "1");
        try (Engine engine = IpcTestSupport.start(settings))
        {
            try (IpcConnection first = IpcConnection.connect(IpcTestSupport.socket(engine), 8))
            {
                assertThatThrownBy(() -> IpcConnection.connect(IpcTestSupport.socket(engine), 8))
                    .isInstanceOfSatisfying(IpcException.class, ex -> assertThat(ex.errorCode()).isEqualTo(ErrorCode.TOO_MANY_CLIENTS))
                    .hasMessageContaining("ipc.max-clients");
                assertThat(await(first, first.send(MessageType.STATS, 0, 0, 0)).status()).as("the first is served on").isZero();
            }
            final long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
            while (engine.ipc().orElseThrow().clientCount() > 0 && System.nanoTime() < deadline)
            {
                Thread.sleep(5);
            }
            try (IpcConnection next = IpcConnection.connect(IpcTestSupport.socket(engine), 8))
            {
                assertThat(next.maxKeys()).isEqualTo(8);
            }
        }
    }
}
