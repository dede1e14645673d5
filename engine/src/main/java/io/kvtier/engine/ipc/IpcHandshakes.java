package io.kvtier.engine.ipc;

import io.kvtier.client.Namespace;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.HandshakeDescriptor;
import io.kvtier.client.protocol.LittleEndian;
import io.kvtier.client.protocol.RingFileDescriptor;
import io.kvtier.engine.core.InternalOp;
import io.kvtier.engine.core.Pipeline;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.nativeaccess.libc.LibC;
import io.kvtier.nativeaccess.libc.UnixSockets;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The socket half of the IPC protocol (docs/ipc-protocol.md section 2), on the engine thread as part
 * of the IPC duty: connections whose HELLO is still arriving, the peer's credentials (SO_PEERCRED)
 * against {@code ipc.allowed-uids} / {@code ipc.allowed-gids}, the HELLO's checks in the document's
 * order, the client's registration with the engine, its ring, and the WELCOME or the refusal.
 *
 * <p>A session of minor version 2 or later gets its ring as an anonymous memory file and the pool,
 * control file and ring as descriptors attached to the WELCOME: no other process can open any of
 * them. An older client opens them by name, so it must be of the engine's own user: its ring file is
 * 0600 like every IPC file. Handshakes happen once per client, so this class may allocate.
 */
final class IpcHandshakes
{
    private static final System.Logger LOG = System.getLogger(IpcHandshakes.class.getName());
    /** Connections whose HELLO is still arriving, at most: past it the engine stops accepting until some finish or time out. */
    static final int MAX_PENDING = 128;

    private final IpcServer.Settings settings;
    private final UnixSockets sockets;
    private final PagePool pool;
    private final Pipeline pipeline;
    private final ControlFile control;
    private final IpcFiles files;
    private final int poolFd;
    private final long clientTimeoutNanos;
    private final int engineUid;
    private final List<Handshake> handshakes = new ArrayList<>();
    private final NamespaceAllowList namespaces;
    private final int[] credentials = new int[3];
    private final int[] descriptors = new int[UnixSockets.MAX_DESCRIPTORS];
    private final int[] received = new int[2];

    IpcHandshakes(final IpcServer.Settings settings, final UnixSockets sockets, final PagePool pool, final Pipeline pipeline, final ControlFile control,
                  final IpcFiles files, final int poolFd) throws IOException
    {
        this.settings = settings;
        this.sockets = sockets;
        this.pool = pool;
        this.pipeline = pipeline;
        this.control = control;
        this.files = files;
        this.poolFd = poolFd;
        this.clientTimeoutNanos = settings.clientTimeout().toNanos();
        // The engine's own user: the owner of the pool file it just created.
        this.engineUid = (Integer)Files.getAttribute(pool.path(), "unix:uid");
        this.namespaces = NamespaceAllowList.parse(settings.allowedNamespaces());
    }

    /** @return connections whose HELLO is still arriving */
    int pending()
    {
        return handshakes.size();
    }

    /** @return the i-th of them */
    Handshake pending(final int i)
    {
        return handshakes.get(i);
    }

    /**
     * Closes every connection that has not sent its whole HELLO within the client timeout.
     *
     * @param now the engine thread's time
     */
    void expire(final long now)
    {
        for (int i = 0; i < handshakes.size(); i++)
        {
            final Handshake handshake = handshakes.get(i);
            if (now - handshake.startNanos > clientTimeoutNanos)
            {
                handshakes.remove(i--);
                sockets.close(handshake.fd);
            }
        }
    }

    /**
     * Accepts one connection, if one waits, and waits for its HELLO.
     *
     * @param listening the listening socket
     * @param now       the engine thread's time
     * @return 1 when one was accepted, or {@code -errno} ({@code -EAGAIN} when none waits)
     */
    int accept(final int listening, final long now)
    {
        final int fd = sockets.accept(listening);
        if (fd < 0)
        {
            return fd;
        }
        handshakes.add(new Handshake(fd, now));
        return 1;
    }

    /** A connection whose HELLO is still arriving. */
    static final class Handshake
    {
        final int fd;
        final long startNanos;
        final MemorySegment buffer = Arena.ofAuto().allocate(HandshakeDescriptor.HELLO_MAX_LENGTH, 8);
        int filled;
        int wanted = HandshakeDescriptor.HELLO_HEADER_LENGTH;

        Handshake(final int fd, final long startNanos)
        {
            this.fd = fd;
            this.startNanos = startNanos;
        }
    }

    /**
     * Reads what arrived of a HELLO; once it is whole, answers it.
     *
     * @param h         the handshake
     * @param now       the engine thread's time
     * @param running   whether the IPC server still takes clients
     * @param connected clients connected now
     * @return the client, connected and welcomed, or null (the HELLO is not whole yet, or was refused)
     */
    RemoteClient read(final Handshake h, final long now, final boolean running, final int connected)
    {
        final long n = sockets.receive(h.fd, h.buffer.asSlice(h.filled), h.wanted - h.filled, descriptors, received, false);
        closeReceived();
        if (n == -LibC.EAGAIN)
        {
            return null;
        }
        if (n <= 0)
        {
            handshakes.remove(h);
            sockets.close(h.fd);
            return null;
        }
        h.filled += (int)n;
        if (h.filled < h.wanted)
        {
            return null;
        }
        if (h.wanted == HandshakeDescriptor.HELLO_HEADER_LENGTH)
        {
            final int count = h.buffer.get(LittleEndian.INT, HandshakeDescriptor.HELLO_NAMESPACE_COUNT_OFFSET);
            if (h.buffer.get(LittleEndian.INT, HandshakeDescriptor.HELLO_MAGIC_OFFSET) == HandshakeDescriptor.HELLO_MAGIC
                && count > 0 && count <= HandshakeDescriptor.MAX_NAMESPACES)
            {
                h.wanted += count * HandshakeDescriptor.NAMESPACE_ROOT_LENGTH;
                return null;
            }
        }
        handshakes.remove(h);
        final ByteBuffer header = h.buffer.asSlice(0, HandshakeDescriptor.HELLO_HEADER_LENGTH).asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
        final byte[] roots = h.buffer.asSlice(HandshakeDescriptor.HELLO_HEADER_LENGTH, h.wanted - HandshakeDescriptor.HELLO_HEADER_LENGTH)
            .toArray(ValueLayout.JAVA_BYTE);
        return welcome(h.fd, HandshakeDescriptor.Hello.decode(header, roots), HandshakeDescriptor.Hello.namespaceCount(header), roots, now,
            running, connected);
    }

    /** Descriptors a peer sends before its session may pass any are not kept. */
    private void closeReceived()
    {
        for (int i = 0; i < received[0]; i++)
        {
            sockets.close(descriptors[i]);
        }
    }

    /** Closes every connection whose HELLO is still arriving (the server stops). */
    void closeAll()
    {
        for (final Handshake handshake : handshakes)
        {
            sockets.close(handshake.fd);
        }
        handshakes.clear();
    }

    private RemoteClient welcome(final int fd, final HandshakeDescriptor.Hello hello, final int declaredNamespaces, final byte[] roots, final long now,
                                 final boolean running, final int connected)
    {
        final int rc = sockets.peerCredentials(fd, credentials);
        if (rc < 0)
        {
            LOG.log(System.Logger.Level.INFO, "IPC connection dropped: its credentials cannot be read (errno {0})", -rc);
            sockets.close(fd);
            return null;
        }
        final int peerUid = credentials[1];
        final int peerGid = credentials[2];
        final String peer = "uid " + peerUid + " (gid " + peerGid + ")";
        if (!allowed(peerUid, peerGid))
        {
            refuse(fd, ErrorCode.NOT_ALLOWED, peer + " is not in ipc.allowed-uids / ipc.allowed-gids"
                + (settings.allowedUids().length == 0 && settings.allowedGids().length == 0 ? " (both empty: only the engine's own uid "
                + engineUid + " may connect)" : ""));
            return null;
        }
        if (hello.magic() != HandshakeDescriptor.HELLO_MAGIC)
        {
            refuse(fd, ErrorCode.BAD_HELLO, "HELLO magic " + Integer.toHexString(hello.magic()) + " is not " + Integer.toHexString(HandshakeDescriptor.HELLO_MAGIC));
            return null;
        }
        if (hello.majorVersion() != HandshakeDescriptor.MAJOR_VERSION)
        {
            refuse(fd, ErrorCode.VERSION, "this engine speaks major version " + HandshakeDescriptor.MAJOR_VERSION + ", not " + hello.majorVersion());
            return null;
        }
        final int namespaceCount = hello.namespaceCount();
        if (hello.maxKeys() < 1 || hello.maxKeys() > HandshakeDescriptor.MAX_KEYS_LIMIT || declaredNamespaces < 0
            || declaredNamespaces > HandshakeDescriptor.MAX_NAMESPACES || hello.reserved() != 0)
        {
            refuse(fd, ErrorCode.BAD_HELLO, "HELLO fields out of range: max keys " + hello.maxKeys() + ", namespaces " + declaredNamespaces
                + ", reserved " + hello.reserved());
            return null;
        }
        if (!running || pipeline.isHalted())
        {
            refuse(fd, ErrorCode.CLOSED, "the engine is shutting down");
            return null;
        }
        final int denied = this.namespaces.firstDenied(uid -> uid == peerUid, gid -> gid == peerGid, roots);
        if (denied == NamespaceAllowList.UNTAGGED_DENIED)
        {
            refuse(fd, ErrorCode.NAMESPACE_DENIED, "the HELLO names no namespace, and ipc.allowed-namespaces does not list "
                + NamespaceAllowList.UNTAGGED + " for " + peer + ": name an allowed namespace");
            return null;
        }
        if (denied >= 0)
        {
            refuse(fd, ErrorCode.NAMESPACE_DENIED, "namespace " + denied + " of the HELLO (root "
                + HexFormat.of().formatHex(roots, 16 * denied, 16 * denied + 16) + ") is not allowed for " + peer + " by ipc.allowed-namespaces");
            return null;
        }
        // A session's minor version is the lower of the two: an engine answers later operations with UNKNOWN_TYPE.
        final int minor = Math.min(hello.minorVersion(), HandshakeDescriptor.MINOR_VERSION);
        final boolean passDescriptors = minor >= HandshakeDescriptor.DESCRIPTORS_MINOR_VERSION;
        if (!passDescriptors && peerUid != engineUid)
        {
            refuse(fd, ErrorCode.NOT_ALLOWED, peer + " is not the engine's user (uid " + engineUid + "), and a client of minor version "
                + hello.minorVersion() + " opens its files by name, which only the engine's user may: announce minor version "
                + HandshakeDescriptor.DESCRIPTORS_MINOR_VERSION + " or later to receive them as descriptors");
            return null;
        }
        final long[] tags = new long[namespaceCount];
        for (int n = 0; n < namespaceCount; n++)
        {
            tags[n] = Namespace.tagOf(roots, 16 * n);
        }
        if (connected >= settings.maxClients())
        {
            refuse(fd, ErrorCode.TOO_MANY_CLIENTS, connected + " clients are connected, which is ipc.max-clients");
            return null;
        }
        final int granted = Math.min(hello.maxKeys(), settings.maxKeys());
        final int capacity = settings.ringBytes();
        final RemoteClient client = new RemoteClient(granted, tags, hello.clientPid(), minor, peerUid, capacity);
        final ErrorCode opened = internal(client, InternalOp.OPEN);
        if (opened != ErrorCode.OK)
        {
            refuse(fd, opened == ErrorCode.INVALID ? ErrorCode.TOO_MANY_CLIENTS : ErrorCode.CLOSED,
                opened == ErrorCode.INVALID ? "every client slot of the engine is taken" : "the engine is shutting down");
            return null;
        }
        final Arena arena = Arena.ofShared();
        final Path ringPath = passDescriptors ? null
            : Path.of(pool.path() + ".client-" + client.clientId() + "-" + Long.toHexString(ThreadLocalRandom.current().nextLong()));
        final IpcFiles.Mapped ring;
        try
        {
            ring = passDescriptors
                ? files.createMemoryFile("kvtier-client-" + client.clientId(), RingFileDescriptor.fileLength(capacity), arena)
                : files.createMapped(ringPath, RingFileDescriptor.fileLength(capacity), arena, false);
        }
        catch (final IOException | RuntimeException ex)
        {
            arena.close();
            internal(client, InternalOp.DISCONNECT);
            LOG.log(System.Logger.Level.WARNING, "IPC client refused: its ring cannot be made: {0}", ex.getMessage());
            refuse(fd, ErrorCode.INTERNAL_ERROR, "the engine cannot make this client's ring: " + ex.getMessage());
            return null;
        }
        final MemorySegment segment = ring.segment();
        segment.set(LittleEndian.INT, RingFileDescriptor.CLIENT_ID_OFFSET, client.clientId());
        segment.set(LittleEndian.INT, RingFileDescriptor.RING_CAPACITY_OFFSET, capacity);
        segment.set(LittleEndian.LONG, RingFileDescriptor.EPOCH_OFFSET, pool.header().epochPlain());
        LittleEndian.LONG_HANDLE.setRelease(segment, (long)RingFileDescriptor.MAGIC_OFFSET, RingFileDescriptor.MAGIC);
        client.attach(arena, segment, ringPath, capacity, fd);
        client.heartbeatChangedNanos = now;
        client.lastRequestNanos = now;
        final HandshakeDescriptor.Welcome welcome = new HandshakeDescriptor.Welcome(0, client.clientId(), granted, pool.header().epochPlain(),
            (int)pool.pageSize(), pool.pageCount(), pool.layout().dataOffset(), pool.frameLength(), capacity, (int)settings.clientTimeout().toMillis(),
            client.maxMessageLength(), HandshakeDescriptor.MINOR_VERSION, passDescriptors ? HandshakeDescriptor.WELCOME_DESCRIPTOR_COUNT : 0,
            pool.path().toAbsolutePath().toString(), control.path().toAbsolutePath().toString(),
            passDescriptors ? "" : ringPath.toAbsolutePath().toString());
        final int[] passed = passDescriptors ? new int[] {poolFd, control.fd(), ring.fd()} : new int[0];
        final boolean sent = send(fd, welcome.encode(), passed);
        files.close(ring.fd()); // the engine keeps its mapping; the client has its own descriptor now
        if (!sent)
        {
            LOG.log(System.Logger.Level.INFO, "IPC client {0} went away during its handshake", client.clientId());
            internal(client, InternalOp.DISCONNECT);
            if (ringPath != null)
            {
                IpcFiles.unlink(ringPath);
            }
            sockets.close(fd);
            client.socketClosed();
            arena.close();
            return null;
        }
        LOG.log(System.Logger.Level.INFO, "IPC client {0} connected: pid {1}, {2}, protocol 1.{3}, {4} slots, ring {5}",
            client.clientId(), hello.clientPid(), peer, minor, granted, passDescriptors ? "passed as a descriptor" : "file " + ringPath);
        return client;
    }

    private boolean allowed(final int uid, final int gid)
    {
        final int[] uids = settings.allowedUids();
        final int[] gids = settings.allowedGids();
        if (uids.length == 0 && gids.length == 0)
        {
            return uid == engineUid;
        }
        for (final int allowed : uids)
        {
            if (allowed == uid)
            {
                return true;
            }
        }
        for (final int allowed : gids)
        {
            if (allowed == gid)
            {
                return true;
            }
        }
        return false;
    }

    private void refuse(final int fd, final ErrorCode code, final String message)
    {
        LOG.log(System.Logger.Level.INFO, "IPC connection refused ({0}): {1}", code, message);
        send(fd, HandshakeDescriptor.Welcome.refused(code, message).encode(), new int[0]);
        sockets.close(fd);
    }

    /**
     * Writes a WELCOME whole, with {@code descriptors} attached to its first byte.
     *
     * @return whether it went; false when the peer is gone or does not read
     */
    private boolean send(final int fd, final ByteBuffer bytes, final int[] descriptors)
    {
        try (Arena scratch = Arena.ofConfined())
        {
            final MemorySegment message = scratch.allocate(bytes.remaining());
            MemorySegment.copy(MemorySegment.ofBuffer(bytes), 0, message, 0, bytes.remaining());
            // A WELCOME is far smaller than a socket buffer: a non-blocking send takes it whole unless the
            // peer stopped reading with a full buffer, which a fresh connection cannot have.
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
            long done = 0;
            while (done < message.byteSize())
            {
                final long n = sockets.send(fd, message.asSlice(done), message.byteSize() - done, descriptors, done == 0 ? descriptors.length : 0);
                if (n > 0)
                {
                    done += n;
                }
                else if (n != -LibC.EAGAIN || System.nanoTime() - deadline > 0)
                {
                    return false;
                }
                else
                {
                    LockSupport.parkNanos(100_000);
                }
            }
            return true;
        }
    }

    /**
     * Runs an internal operation (OPEN, DISCONNECT) at once: handshakes run on the engine thread, as
     * part of the IPC duty, and these operations complete within the call.
     */
    private ErrorCode internal(final RemoteClient client, final int op)
    {
        client.beginRequest(op, 0, 0, 0, 0);
        if (!pipeline.handleOnEngineThread(client, op, 0, 0))
        {
            client.abandonRequest();
            return ErrorCode.CLOSED;
        }
        if (client.inFlightAcquire())
        {
            LOG.log(System.Logger.Level.WARNING, "the engine did not complete an internal {0} at once", InternalOp.name(op));
            return ErrorCode.INTERNAL_ERROR;
        }
        return client.internalOutcome();
    }
}
