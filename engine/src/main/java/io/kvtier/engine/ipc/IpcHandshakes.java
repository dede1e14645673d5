package io.kvtier.engine.ipc;

import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.HandshakeDescriptor;
import io.kvtier.client.protocol.LittleEndian;
import io.kvtier.client.protocol.RequestDescriptor;
import io.kvtier.client.protocol.RingFileDescriptor;
import io.kvtier.engine.client.RequestOp;
import io.kvtier.engine.client.RequestStatus;
import io.kvtier.engine.core.Pipeline;
import io.kvtier.engine.pool.PagePool;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.UserPrincipal;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;

/**
 * The socket half of the IPC protocol (docs/ipc-protocol.md section 2), on the {@code kvtier-ipc}
 * thread: connections whose HELLO is still arriving, the peer's credentials (SO_PEERCRED) against
 * {@code ipc.allowed-uids} / {@code ipc.allowed-gids}, the HELLO's checks in the document's order, the
 * client's registration with the engine, its ring file, and the WELCOME or the refusal. Handshakes
 * happen once per client, so this class may allocate.
 */
final class IpcHandshakes
{
    private static final System.Logger LOG = System.getLogger(IpcHandshakes.class.getName());

    private final IpcServer.Settings settings;
    private final PagePool pool;
    private final Pipeline pipeline;
    private final Path controlPath;
    private final IpcFiles files;
    private final long clientTimeoutNanos;
    private final UserPrincipal engineUser;
    private final List<UserPrincipal> allowedUsers = new ArrayList<>();
    private final List<GroupPrincipal> allowedGroups = new ArrayList<>();
    private final List<Handshake> handshakes = new ArrayList<>();
    private final NamespaceAllowList namespaces;
    private final java.util.Map<Integer, UserPrincipal> namespaceUsers = new java.util.HashMap<>();
    private final java.util.Map<Integer, GroupPrincipal> namespaceGroups = new java.util.HashMap<>();

    IpcHandshakes(final IpcServer.Settings settings, final PagePool pool, final Pipeline pipeline, final Path controlPath, final IpcFiles files)
        throws IOException
    {
        this.settings = settings;
        this.pool = pool;
        this.pipeline = pipeline;
        this.controlPath = controlPath;
        this.files = files;
        this.clientTimeoutNanos = settings.clientTimeout().toNanos();
        final UserPrincipalLookupService lookup = pool.path().getFileSystem().getUserPrincipalLookupService();
        // The engine's own user: the owner of the pool file it just created.
        this.engineUser = Files.getOwner(pool.path());
        // Numeric names: the lookup service takes a uid or gid as its name, and its principals compare by id.
        for (final int uid : settings.allowedUids())
        {
            allowedUsers.add(lookup.lookupPrincipalByName(Integer.toString(uid)));
        }
        for (final int gid : settings.allowedGids())
        {
            allowedGroups.add(lookup.lookupPrincipalByGroupName(Integer.toString(gid)));
        }
        this.namespaces = NamespaceAllowList.parse(settings.allowedNamespaces());
        for (final int uid : namespaces.userIds())
        {
            namespaceUsers.put(uid, lookup.lookupPrincipalByName(Integer.toString(uid)));
        }
        for (final int gid : namespaces.groupIds())
        {
            namespaceGroups.put(gid, lookup.lookupPrincipalByGroupName(Integer.toString(gid)));
        }
    }

    /**
     * Closes every connection that has not sent its whole HELLO within the client timeout.
     *
     * @param now the IPC thread's time
     */
    void expire(final long now)
    {
        // By index, not through the selector's key set, whose iterator would be garbage every 10 ms.
        for (int i = 0; i < handshakes.size(); i++)
        {
            final Handshake handshake = handshakes.get(i);
            if (now - handshake.startNanos > clientTimeoutNanos)
            {
                handshakes.remove(i--);
                IpcConductor.closeQuietly(handshake.channel);
            }
        }
    }

    /** Accepts a connection, if one is waiting, and waits for its HELLO. */
    void accept(final ServerSocketChannel server, final Selector selector, final long now) throws IOException
    {
        final SocketChannel channel = server.accept();
        if (channel == null)
        {
            return;
        }
        channel.configureBlocking(false);
        final Handshake handshake = new Handshake(channel, now);
        handshakes.add(handshake);
        channel.register(selector, SelectionKey.OP_READ, handshake);
    }

    /** A connection whose HELLO is still arriving. */
    static final class Handshake
    {
        final SocketChannel channel;
        final long startNanos;
        ByteBuffer buffer = ByteBuffer.allocate(HandshakeDescriptor.HELLO_HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer header;

        Handshake(final SocketChannel channel, final long startNanos)
        {
            this.channel = channel;
            this.startNanos = startNanos;
        }
    }

    /**
     * Reads what arrived of a HELLO; once it is whole, answers it.
     *
     * @param key     the connection's key, which from then on stands for the client
     * @param h       the handshake
     * @param now     the IPC thread's time
     * @param running whether the IPC server still takes clients
     * @return the client, connected and welcomed, or null (the HELLO is not whole yet, or was refused)
     */
    RemoteClient read(final SelectionKey key, final Handshake h, final long now, final boolean running, final int connected) throws IOException
    {
        if (h.channel.read(h.buffer) < 0)
        {
            handshakes.remove(h);
            key.cancel();
            IpcConductor.closeQuietly(h.channel);
            return null;
        }
        if (h.buffer.hasRemaining())
        {
            return null;
        }
        if (h.header == null)
        {
            h.header = h.buffer.flip();
            final int namespaces = HandshakeDescriptor.Hello.namespaceCount(h.header);
            if (h.header.getInt(HandshakeDescriptor.HELLO_MAGIC_OFFSET) == HandshakeDescriptor.HELLO_MAGIC
                && namespaces > 0 && namespaces <= HandshakeDescriptor.MAX_NAMESPACES)
            {
                h.buffer = ByteBuffer.allocate(namespaces * HandshakeDescriptor.NAMESPACE_ROOT_LENGTH);
                return null;
            }
            h.buffer = ByteBuffer.allocate(0);
        }
        handshakes.remove(h);
        final byte[] roots = new byte[h.buffer.flip().remaining()];
        h.buffer.get(roots);
        return welcome(key, h.channel, HandshakeDescriptor.Hello.decode(h.header, roots), HandshakeDescriptor.Hello.namespaceCount(h.header), roots,
            now, running, connected);
    }

    /** Forgets a handshake whose connection failed. */
    void forget(final Handshake h)
    {
        handshakes.remove(h);
    }

    /** Closes every connection whose HELLO is still arriving (the server stops). */
    void closeAll()
    {
        for (final Handshake handshake : handshakes)
        {
            IpcConductor.closeQuietly(handshake.channel);
        }
        handshakes.clear();
    }

    private RemoteClient welcome(final SelectionKey key, final SocketChannel channel, final HandshakeDescriptor.Hello hello, final int declaredNamespaces,
                                 final byte[] roots, final long now, final boolean running, final int connected) throws IOException
    {
        // From here the key stands for the client (or is cancelled with the refusal).
        key.attach(null);
        final UnixDomainPrincipal peer = channel.getOption(ExtendedSocketOptions.SO_PEERCRED);
        if (!allowed(peer))
        {
            refuse(channel, ErrorCode.NOT_ALLOWED, "user " + peer.user().getName() + " (group " + peer.group().getName()
                + ") is not in ipc.allowed-uids / ipc.allowed-gids");
            return null;
        }
        if (hello.magic() != HandshakeDescriptor.HELLO_MAGIC)
        {
            refuse(channel, ErrorCode.BAD_HELLO, "HELLO magic " + Integer.toHexString(hello.magic()) + " is not " + Integer.toHexString(HandshakeDescriptor.HELLO_MAGIC));
            return null;
        }
        if (hello.majorVersion() != HandshakeDescriptor.MAJOR_VERSION)
        {
            refuse(channel, ErrorCode.VERSION, "this engine speaks major version " + HandshakeDescriptor.MAJOR_VERSION + ", not " + hello.majorVersion());
            return null;
        }
        final int namespaces = hello.namespaceCount();
        if (hello.maxKeys() < 1 || hello.maxKeys() > HandshakeDescriptor.MAX_KEYS_LIMIT || declaredNamespaces < 0
            || declaredNamespaces > HandshakeDescriptor.MAX_NAMESPACES || hello.reserved() != 0)
        {
            refuse(channel, ErrorCode.BAD_HELLO, "HELLO fields out of range: max keys " + hello.maxKeys() + ", namespaces " + declaredNamespaces
                + ", reserved " + hello.reserved());
            return null;
        }
        if (!running || pipeline.isHalted())
        {
            refuse(channel, ErrorCode.CLOSED, "the engine is shutting down");
            return null;
        }
        final int denied = this.namespaces.firstDenied(uid -> peer.user().equals(namespaceUsers.get(uid)),
            gid -> peer.group().equals(namespaceGroups.get(gid)), roots);
        if (denied == NamespaceAllowList.UNTAGGED_DENIED)
        {
            refuse(channel, ErrorCode.NAMESPACE_DENIED, "the HELLO names no namespace, and ipc.allowed-namespaces does not list "
                + NamespaceAllowList.UNTAGGED + " for user " + peer.user().getName() + " (group " + peer.group().getName()
                + "): name an allowed namespace");
            return null;
        }
        if (denied >= 0)
        {
            refuse(channel, ErrorCode.NAMESPACE_DENIED, "namespace " + denied + " of the HELLO (root "
                + java.util.HexFormat.of().formatHex(roots, 16 * denied, 16 * denied + 16) + ") is not allowed for user " + peer.user().getName()
                + " (group " + peer.group().getName() + ") by ipc.allowed-namespaces");
            return null;
        }
        final long[] tags = new long[namespaces];
        for (int n = 0; n < namespaces; n++)
        {
            tags[n] = io.kvtier.client.Namespace.tagOf(roots, 16 * n);
        }
        if (connected >= settings.maxClients())
        {
            refuse(channel, ErrorCode.TOO_MANY_CLIENTS, connected + " clients are connected, which is ipc.max-clients");
            return null;
        }
        final int granted = Math.min(hello.maxKeys(), settings.maxKeys());
        final int capacity = settings.ringBytes();
        final RemoteClient client = new RemoteClient(granted, tags, hello.clientPid(), hello.minorVersion(), peer.user(), capacity);
        final RequestStatus opened = internal(client, RequestOp.OPEN);
        if (opened != RequestStatus.OK)
        {
            refuse(channel, opened == RequestStatus.INVALID ? ErrorCode.TOO_MANY_CLIENTS : ErrorCode.CLOSED,
                opened == RequestStatus.INVALID ? "every client slot of the engine is taken" : "the engine is shutting down");
            return null;
        }
        final Path ringPath = Path.of(pool.path() + ".client-" + client.clientId() + "-" + Long.toHexString(ThreadLocalRandom.current().nextLong()));
        final Arena arena = Arena.ofShared();
        final MemorySegment ring;
        try
        {
            ring = files.createMapped(ringPath, RingFileDescriptor.fileLength(capacity), arena);
        }
        catch (final IOException | RuntimeException ex)
        {
            arena.close();
            internal(client, RequestOp.DISCONNECT);
            refuse(channel, ErrorCode.INTERNAL_ERROR, "cannot create the ring file " + ringPath + ": " + ex.getMessage());
            return null;
        }
        ring.set(LittleEndian.INT, RingFileDescriptor.CLIENT_ID_OFFSET, client.clientId());
        ring.set(LittleEndian.INT, RingFileDescriptor.RING_CAPACITY_OFFSET, capacity);
        ring.set(LittleEndian.LONG, RingFileDescriptor.EPOCH_OFFSET, pool.header().epochPlain());
        LittleEndian.LONG_HANDLE.setRelease(ring, (long)RingFileDescriptor.MAGIC_OFFSET, RingFileDescriptor.MAGIC);
        client.attach(arena, ring, ringPath, capacity, channel);
        client.heartbeatChangedNanos = now;
        client.lastRequestNanos = now;
        final HandshakeDescriptor.Welcome welcome = new HandshakeDescriptor.Welcome(0, client.clientId(), granted, pool.header().epochPlain(),
            (int)pool.pageSize(), pool.pageCount(), pool.layout().dataOffset(), pool.frameLength(), capacity, (int)settings.clientTimeout().toMillis(),
            client.maxMessageLength(), pool.path().toAbsolutePath().toString(), controlPath.toAbsolutePath().toString(),
            ringPath.toAbsolutePath().toString());
        try
        {
            writeFully(channel, welcome.encode());
            key.attach(client);
        }
        catch (final IOException ex)
        {
            LOG.log(System.Logger.Level.INFO, "IPC client {0} went away during its handshake", client.clientId());
            internal(client, RequestOp.DISCONNECT);
            IpcFiles.unlink(ringPath);
            IpcConductor.closeQuietly(channel);
            arena.close();
            return null;
        }
        LOG.log(System.Logger.Level.INFO, "IPC client {0} connected: pid {1}, user {2}, {3} slots, ring file {4}",
            client.clientId(), hello.clientPid(), peer.user().getName(), granted, ringPath);
        return client;
    }

    private boolean allowed(final UnixDomainPrincipal peer)
    {
        if (allowedUsers.isEmpty() && allowedGroups.isEmpty())
        {
            return peer.user().equals(engineUser);
        }
        return allowedUsers.contains(peer.user()) || allowedGroups.contains(peer.group());
    }

    private void refuse(final SocketChannel channel, final ErrorCode code, final String message)
    {
        LOG.log(System.Logger.Level.INFO, "IPC connection refused ({0}): {1}", code, message);
        try
        {
            writeFully(channel, HandshakeDescriptor.Welcome.refused(code, message).encode());
        }
        catch (final IOException ignored)
        {
            // the peer is gone already
        }
        IpcConductor.closeQuietly(channel);
    }

    private static void writeFully(final SocketChannel channel, final ByteBuffer bytes) throws IOException
    {
        // A WELCOME is far smaller than a socket buffer: a non-blocking write takes it whole unless the
        // peer stopped reading with a full buffer, which a fresh connection cannot have.
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        while (bytes.hasRemaining())
        {
            if (channel.write(bytes) == 0)
            {
                if (System.nanoTime() - deadline > 0)
                {
                    throw new IOException("peer does not read its WELCOME");
                }
                LockSupport.parkNanos(100_000);
            }
        }
    }

    /**
     * Runs an internal operation (OPEN, DISCONNECT) at once: handshakes run on the engine thread, as
     * part of the IPC adapter's duty, and these operations complete within the call.
     */
    private RequestStatus internal(final RemoteClient client, final int op)
    {
        client.beginRequest(op, 0, 0, 0, 0);
        if (!pipeline.handleOnEngineThread(client, op, 0, 0))
        {
            client.abandonRequest();
            return RequestStatus.CLOSED;
        }
        if (client.inFlightAcquire())
        {
            LOG.log(System.Logger.Level.WARNING, "the engine did not complete an internal {0} at once", RequestOp.name(op));
            return RequestStatus.INTERNAL_ERROR;
        }
        return client.internalOutcome();
    }
}
