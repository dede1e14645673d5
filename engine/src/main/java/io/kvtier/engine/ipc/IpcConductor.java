package io.kvtier.engine.ipc;

import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.HandshakeDescriptor;
import io.kvtier.client.protocol.IdleStrategy;
import io.kvtier.client.protocol.LittleEndian;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.RequestDecoder;
import io.kvtier.client.protocol.RequestDescriptor;
import io.kvtier.client.protocol.RequestValidator;
import io.kvtier.client.protocol.ResponseDescriptor;
import io.kvtier.client.protocol.ResponseEncoder;
import io.kvtier.client.protocol.RingConsumer;
import io.kvtier.client.protocol.RingFileDescriptor;
import io.kvtier.engine.client.PageStatus;
import io.kvtier.engine.client.RequestOp;
import io.kvtier.engine.client.RequestStatus;
import io.kvtier.engine.core.Pipeline;
import io.kvtier.engine.key.KeyChain;
import io.kvtier.engine.pool.Counters;
import io.kvtier.engine.pool.CountersDescriptor;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.engine.pool.PageStateWord;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.UserPrincipal;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;

/**
 * The {@code kvtier-ipc} thread: accepts connections and answers their handshakes, reads each client's
 * request ring one request at a time, validates it (docs/ipc-protocol.md section 4), copies its keys
 * and lengths into the client's {@link RemoteClient} and publishes it into the engine's pipeline exactly
 * as an in-process {@code Session} does, and notices clients that are gone: socket EOF (the process
 * exited or was killed), a heartbeat that stopped, a response ring that stays full, broken framing. A
 * dropped client's pins and reservations go back through the engine's own session path, reservations
 * through quarantine. In between it idles per {@code ipc.idle-strategy} on the control file's Doorbell.
 *
 * <p>Commits are sealed (CRC32C, trailer) here, not on the engine thread, as an in-process session seals
 * on its own thread: no per-byte work lands on the engine thread. Serving a request allocates nothing;
 * handshakes and disconnects may.
 */
final class IpcConductor implements Runnable
{
    private static final System.Logger LOG = System.getLogger(IpcConductor.class.getName());
    private static final long SELECT_PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long HOUSEKEEPING_PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final long HEARTBEAT_PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    private static final long OPEN_WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final long SHUTDOWN_WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final IpcServer.Settings settings;
    private final PagePool pool;
    private final Pipeline pipeline;
    private final ControlFile control;
    private final IpcFiles files;
    private final ServerSocketChannel server;
    private final Selector selector;
    private final UserPrincipal engineUser;
    private final List<UserPrincipal> allowedUsers = new ArrayList<>();
    private final List<GroupPrincipal> allowedGroups = new ArrayList<>();
    private final Counters counters;
    private final int statsCount;
    private final long clientTimeoutNanos;
    private final long keepAliveNanos;
    private final IdleStrategy idle;
    private final IdleStrategy.WorkCheck anyRequest = this::anyRequestAcquire;
    private final Consumer<SelectionKey> onSelected = this::onSelected;
    private final RequestDecoder decoder = new RequestDecoder();
    private final ByteBuffer scratch = ByteBuffer.allocateDirect(256);
    private final List<RemoteClient> clients = new ArrayList<>();
    private final List<Handshake> handshakes = new ArrayList<>();
    private long now;
    private long lastSelectNanos;
    private long lastHousekeepingNanos;
    private long lastBeatNanos;
    private volatile boolean running = true;
    private volatile int connected;

    IpcConductor(final IpcServer.Settings settings, final PagePool pool, final Pipeline pipeline, final ControlFile control, final IpcFiles files,
                 final ServerSocketChannel server) throws IOException
    {
        this.settings = settings;
        this.pool = pool;
        this.pipeline = pipeline;
        this.control = control;
        this.files = files;
        this.server = server;
        this.selector = Selector.open();
        server.configureBlocking(false);
        server.register(selector, SelectionKey.OP_ACCEPT);
        final var lookup = pool.path().getFileSystem().getUserPrincipalLookupService();
        this.engineUser = java.nio.file.Files.getOwner(pool.path());
        for (final int uid : settings.allowedUids())
        {
            allowedUsers.add(lookup.lookupPrincipalByName(Integer.toString(uid)));
        }
        for (final int gid : settings.allowedGids())
        {
            allowedGroups.add(lookup.lookupPrincipalByGroupName(Integer.toString(gid)));
        }
        this.counters = new Counters(pool.counters());
        int allocated = 0;
        while (allocated < CountersDescriptor.MAX_COUNTERS && counters.recordStateAcquire(allocated) == CountersDescriptor.RECORD_ALLOCATED)
        {
            allocated++;
        }
        this.statsCount = Math.min(allocated, (settings.ringBytes() / 2 - ResponseDescriptor.STATS_VALUES_OFFSET) / 8);
        this.clientTimeoutNanos = settings.clientTimeout().toNanos();
        this.keepAliveNanos = settings.sessionTimeout().toNanos() / 4;
        this.idle = new IdleStrategy(settings.idleStrategy(), IdleStrategy.MAX_SLEEP_NANOS);
    }

    /** Asks the thread to disconnect every client (CLOSED) and stop. */
    void stop()
    {
        running = false;
        IdleStrategy.wake(control.doorbell());
    }

    @Override
    public void run()
    {
        try
        {
            while (running)
            {
                if (doWork() > 0)
                {
                    idle.reset();
                }
                else
                {
                    idle.idle(control.doorbell(), anyRequest);
                }
            }
        }
        catch (final RuntimeException | Error ex)
        {
            LOG.log(System.Logger.Level.ERROR, "the IPC thread failed; IPC clients are disconnected", ex);
        }
        finally
        {
            shutdown();
        }
    }

    int doWork()
    {
        now = System.nanoTime();
        int work = 0;
        if (now - lastBeatNanos >= HEARTBEAT_PERIOD_NANOS)
        {
            control.beatRelease();
            lastBeatNanos = now;
        }
        if (now - lastSelectNanos >= SELECT_PERIOD_NANOS)
        {
            lastSelectNanos = now;
            try
            {
                work += selector.selectNow(onSelected);
            }
            catch (final IOException ex)
            {
                LOG.log(System.Logger.Level.WARNING, "IPC selector failed", ex);
            }
        }
        final boolean housekeeping = now - lastHousekeepingNanos >= HOUSEKEEPING_PERIOD_NANOS;
        if (housekeeping)
        {
            lastHousekeepingNanos = now;
            expireHandshakes();
        }
        for (int i = 0; i < clients.size(); i++)
        {
            final RemoteClient client = clients.get(i);
            try
            {
                if (housekeeping)
                {
                    checkLiveness(client);
                }
                work += serve(client);
            }
            catch (final RuntimeException ex)
            {
                // One client's failure must not end the thread that serves every other.
                LOG.log(System.Logger.Level.ERROR, "IPC client " + client.clientId() + " failed; dropping it", ex);
                if (client.state == RemoteClient.State.ACTIVE || client.state == RemoteClient.State.CLOSING)
                {
                    drop(client, ErrorCode.INTERNAL_ERROR, "the engine failed serving it");
                }
                else if (!client.inFlightAcquire())
                {
                    forget(client);
                }
            }
            if (client.state == RemoteClient.State.GONE)
            {
                clients.remove(i--);
                connected = clients.size();
            }
        }
        return work;
    }

    private boolean anyRequestAcquire()
    {
        for (int i = 0; i < clients.size(); i++)
        {
            final RemoteClient client = clients.get(i);
            if (client.state == RemoteClient.State.ACTIVE && client.requests().hasRecordAcquire())
            {
                return true;
            }
        }
        return !running;
    }

    // Sockets: accepts, handshakes, and EOF of connected clients.

    private void onSelected(final SelectionKey key)
    {
        try
        {
            if (key.isAcceptable())
            {
                accept();
            }
            else if (key.isReadable() && key.attachment() instanceof Handshake handshake)
            {
                handshake(key, handshake);
            }
            else if (key.isReadable() && key.attachment() instanceof RemoteClient client)
            {
                scratch.clear();
                if (client.socket().read(scratch) < 0)
                {
                    // The process exited or was killed: the kernel closed its end.
                    key.cancel();
                    drop(client, ErrorCode.CLOSED, "its socket closed");
                }
            }
        }
        catch (final IOException ex)
        {
            key.cancel();
            if (key.attachment() instanceof RemoteClient client)
            {
                drop(client, ErrorCode.CLOSED, "its socket failed: " + ex.getMessage());
            }
            else
            {
                if (key.attachment() instanceof Handshake handshake)
                {
                    handshakes.remove(handshake);
                }
                closeQuietly(key.channel());
            }
        }
    }

    /** A connection that has not sent its whole HELLO within the client timeout is closed. */
    private void expireHandshakes()
    {
        // By index, not through the selector's key set, whose iterator would be garbage every 10 ms.
        for (int i = 0; i < handshakes.size(); i++)
        {
            final Handshake handshake = handshakes.get(i);
            if (now - handshake.startNanos > clientTimeoutNanos)
            {
                handshakes.remove(i--);
                closeQuietly(handshake.channel);
            }
        }
    }

    private void accept() throws IOException
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
    private static final class Handshake
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

    private void handshake(final SelectionKey key, final Handshake h) throws IOException
    {
        if (h.channel.read(h.buffer) < 0)
        {
            handshakes.remove(h);
            key.cancel();
            closeQuietly(h.channel);
            return;
        }
        if (h.buffer.hasRemaining())
        {
            return;
        }
        if (h.header == null)
        {
            h.header = h.buffer.flip();
            final int namespaces = HandshakeDescriptor.Hello.namespaceCount(h.header);
            if (h.header.getInt(HandshakeDescriptor.HELLO_MAGIC_OFFSET) == HandshakeDescriptor.HELLO_MAGIC
                && namespaces > 0 && namespaces <= HandshakeDescriptor.MAX_NAMESPACES)
            {
                h.buffer = ByteBuffer.allocate(namespaces * HandshakeDescriptor.NAMESPACE_ROOT_LENGTH);
                return;
            }
            h.buffer = ByteBuffer.allocate(0);
        }
        handshakes.remove(h);
        final byte[] roots = new byte[h.buffer.flip().remaining()];
        h.buffer.get(roots);
        welcome(key, h.channel, HandshakeDescriptor.Hello.decode(h.header, roots), HandshakeDescriptor.Hello.namespaceCount(h.header));
    }

    private void welcome(final SelectionKey key, final SocketChannel channel, final HandshakeDescriptor.Hello hello, final int declaredNamespaces)
        throws IOException
    {
        // From here the key stands for the client (or is cancelled with the refusal).
        key.attach(null);
        final UnixDomainPrincipal peer = channel.getOption(ExtendedSocketOptions.SO_PEERCRED);
        if (!allowed(peer))
        {
            refuse(channel, ErrorCode.NOT_ALLOWED, "user " + peer.user().getName() + " (group " + peer.group().getName()
                + ") is not in ipc.allowed-uids / ipc.allowed-gids");
            return;
        }
        if (hello.magic() != HandshakeDescriptor.HELLO_MAGIC)
        {
            refuse(channel, ErrorCode.BAD_HELLO, "HELLO magic " + Integer.toHexString(hello.magic()) + " is not " + Integer.toHexString(HandshakeDescriptor.HELLO_MAGIC));
            return;
        }
        if (hello.majorVersion() != HandshakeDescriptor.MAJOR_VERSION)
        {
            refuse(channel, ErrorCode.VERSION, "this engine speaks major version " + HandshakeDescriptor.MAJOR_VERSION + ", not " + hello.majorVersion());
            return;
        }
        final int namespaces = hello.namespaceCount();
        if (hello.maxKeys() < 1 || hello.maxKeys() > HandshakeDescriptor.MAX_KEYS_LIMIT || declaredNamespaces < 0
            || declaredNamespaces > HandshakeDescriptor.MAX_NAMESPACES || hello.reserved() != 0)
        {
            refuse(channel, ErrorCode.BAD_HELLO, "HELLO fields out of range: max keys " + hello.maxKeys() + ", namespaces " + declaredNamespaces
                + ", reserved " + hello.reserved());
            return;
        }
        if (!running || pipeline.isHalted())
        {
            refuse(channel, ErrorCode.CLOSED, "the engine is shutting down");
            return;
        }
        final int granted = Math.min(hello.maxKeys(), settings.maxKeys());
        final RemoteClient client = new RemoteClient(granted, namespaces, hello.clientPid());
        final RequestStatus opened = internal(client, RequestOp.OPEN);
        if (opened != RequestStatus.OK)
        {
            refuse(channel, opened == RequestStatus.INVALID ? ErrorCode.TOO_MANY_CLIENTS : ErrorCode.CLOSED,
                opened == RequestStatus.INVALID ? "every client slot of the engine is taken" : "the engine is shutting down");
            return;
        }
        final int capacity = settings.ringBytes();
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
            return;
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
            RequestDescriptor.maxMessageLength(granted), pool.path().toAbsolutePath().toString(), control.path().toAbsolutePath().toString(),
            ringPath.toAbsolutePath().toString());
        try
        {
            writeFully(channel, welcome.encode());
            key.attach(client);
        }
        catch (final IOException ex)
        {
            clients.add(client);
            drop(client, ErrorCode.CLOSED, "its socket failed during the handshake");
            return;
        }
        clients.add(client);
        connected = clients.size();
        LOG.log(System.Logger.Level.INFO, "IPC client {0} connected: pid {1}, user {2}, {3} slots, ring file {4}",
            client.clientId(), hello.clientPid(), peer.user().getName(), granted, ringPath);
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
        closeQuietly(channel);
    }

    private void writeFully(final SocketChannel channel, final ByteBuffer bytes) throws IOException
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

    /** Runs an internal operation on the engine thread and waits for it (handshakes and shutdown only). */
    private RequestStatus internal(final RemoteClient client, final int op)
    {
        client.beginRequest(op, 0, 0, 0, 0);
        if (!pipeline.publish(client, op, 0, 0))
        {
            client.abandonRequest();
            return RequestStatus.CLOSED;
        }
        final long deadline = System.nanoTime() + OPEN_WAIT_NANOS;
        while (client.inFlightAcquire())
        {
            if (System.nanoTime() - deadline > 0)
            {
                LOG.log(System.Logger.Level.WARNING, "the engine did not answer an internal {0} in {1} s", RequestOp.name(op),
                    TimeUnit.NANOSECONDS.toSeconds(OPEN_WAIT_NANOS));
                return RequestStatus.INTERNAL_ERROR;
            }
            LockSupport.parkNanos(10_000);
        }
        return client.internalOutcome();
    }

    // Clients.

    private void checkLiveness(final RemoteClient client)
    {
        if (client.state != RemoteClient.State.ACTIVE)
        {
            return;
        }
        final long beat = client.clientHeartbeatOpaque();
        if (beat != client.lastHeartbeat)
        {
            client.lastHeartbeat = beat;
            client.heartbeatChangedNanos = now;
        }
        else if (now - client.heartbeatChangedNanos > clientTimeoutNanos)
        {
            drop(client, ErrorCode.TIMED_OUT, "its heartbeat stood still for " + settings.clientTimeout().toMillis() + " ms");
            return;
        }
        if (!client.inFlightAcquire() && now - client.lastRequestNanos > keepAliveNanos)
        {
            // A live client that is only reading its pinned pages must not lose them to the engine's
            // session lease: its heartbeat renews the lease on its behalf.
            client.lastRequestNanos = now;
            client.beginRequest(RequestOp.KEEP_ALIVE, 0, 0, 0, 0);
            if (!pipeline.publish(client, RequestOp.KEEP_ALIVE, 0, 0))
            {
                client.abandonRequest();
            }
        }
    }

    /** Drops a client: it is disconnected once its request in flight (if any) has ended. */
    void drop(final RemoteClient client, final ErrorCode reason, final String why)
    {
        if (client.state == RemoteClient.State.ACTIVE || client.state == RemoteClient.State.CLOSING)
        {
            LOG.log(System.Logger.Level.INFO, "IPC client {0} (pid {1}) disconnected, {2}: {3}", client.clientId(), client.pid(), reason, why);
            client.state = RemoteClient.State.DYING;
            client.disconnectReason = reason.code();
        }
    }

    private int serve(final RemoteClient client)
    {
        switch (client.state)
        {
            case ACTIVE ->
            {
                return serveActive(client);
            }
            case CLOSING ->
            {
                if (!client.inFlightAcquire())
                {
                    remove(client);
                    return 1;
                }
                return 0;
            }
            case DYING ->
            {
                if (client.inFlightAcquire())
                {
                    return 0;
                }
                client.disconnectReasonRelease(client.disconnectReason);
                client.state = RemoteClient.State.DISCONNECTING;
                client.beginRequest(RequestOp.DISCONNECT, 0, 0, 0, 0);
                if (!pipeline.publish(client, RequestOp.DISCONNECT, 0, 0))
                {
                    client.abandonRequest(); // the engine stopped: it holds nothing for anyone any more
                }
                return 1;
            }
            case DISCONNECTING ->
            {
                if (!client.inFlightAcquire())
                {
                    remove(client);
                    return 1;
                }
                return 0;
            }
            default ->
            {
                return 0;
            }
        }
    }

    private int serveActive(final RemoteClient client)
    {
        if (client.inFlightAcquire())
        {
            return 0;
        }
        if (client.responseLost())
        {
            drop(client, ErrorCode.NOT_READING, "its response ring had no room for an answer");
            return 1;
        }
        if (client.isExpired())
        {
            drop(client, ErrorCode.LEASE_EXPIRED, "the engine took its lease back");
            return 1;
        }
        final RingConsumer requests = client.requests();
        final long offset = requests.poll();
        if (offset == RingConsumer.EMPTY)
        {
            return 0;
        }
        if (offset == RingConsumer.SHORTER_THAN_HEADER)
        {
            drop(client, ErrorCode.MALFORMED, "a request record shorter than its header");
            return 1;
        }
        if (offset < 0)
        {
            drop(client, ErrorCode.TOO_LONG, "a request record that does not fit its ring");
            return 1;
        }
        final RequestDecoder request = decoder.wrap(client.ring(), offset, requests.currentLength());
        ErrorCode code = RequestValidator.validate(request, client.lastRequestId, client.maxKeys(), client.namespaceCount(),
            RequestDescriptor.maxMessageLength(client.maxKeys()));
        if (code == ErrorCode.TOO_LONG)
        {
            drop(client, ErrorCode.TOO_LONG, "a request of " + requests.currentLength() + " bytes");
            return 1;
        }
        // Each field read once: the client may rewrite the record under us, and only these values were checked.
        final int type = request.type();
        final long requestId = request.requestId();
        final int first = request.firstSlot();
        final int count = request.count();
        final boolean keysInBody = code == ErrorCode.OK && MessageType.carriesKeys(type) && (request.flags() & RequestDescriptor.FLAG_KEYS_IN_SLOTS) == 0;
        if (code == ErrorCode.OK && slotHeld(client, request, type, first, count, keysInBody))
        {
            code = ErrorCode.SLOT_HELD;
        }
        final int responseLength = code != ErrorCode.OK ? ResponseDescriptor.length(0)
            : type == MessageType.STATS ? ResponseDescriptor.statsLength(statsCount)
            : ResponseDescriptor.length(type == MessageType.FLUSH || type == MessageType.CLOSE ? 0 : count);
        if (!client.responses().hasRoomAcquire(responseLength))
        {
            // The request stays in its ring until the client reads its earlier answers.
            if (client.responseBlockedSinceNanos == 0)
            {
                client.responseBlockedSinceNanos = now;
            }
            else if (now - client.responseBlockedSinceNanos > clientTimeoutNanos)
            {
                drop(client, ErrorCode.NOT_READING, "its response ring stayed full for " + settings.clientTimeout().toMillis() + " ms");
            }
            return 0;
        }
        client.responseBlockedSinceNanos = 0;
        if (code != ErrorCode.OK)
        {
            requests.advanceRelease();
            answer(client, type, requestId, code.code());
            return 1;
        }
        client.lastRequestId = requestId;
        client.lastRequestNanos = now;
        if (type == MessageType.STATS)
        {
            requests.advanceRelease();
            answerStats(client, requestId);
            return 1;
        }
        if (keysInBody)
        {
            final KeyChain keys = client.keys();
            for (int i = 0; i < count; i++)
            {
                keys.set(first + i, request.keyHigh(i), request.keyLow(i));
            }
        }
        else if (type == MessageType.COMMIT)
        {
            final int[] lengths = client.lengths();
            for (int i = 0; i < count; i++)
            {
                lengths[first + i] = request.commitLength(i);
            }
            seal(client, first, count);
        }
        requests.advanceRelease();
        if (type == MessageType.CLOSE)
        {
            client.state = RemoteClient.State.CLOSING;
        }
        // The protocol's operation codes are the engine's RequestOp codes (2..11, 13).
        client.beginRequest(type, type, requestId, first, count);
        if (!pipeline.publish(client, type, first, count))
        {
            client.abandonRequest();
            answer(client, type, requestId, ErrorCode.CLOSED.code());
        }
        return 1;
    }

    /**
     * SLOT_HELD: a slot that holds a pin or a reservation may only be given the same key again; and,
     * whatever the keys, a RESERVE may not name a pinned slot nor an ACQUIRE a reserved one, since the
     * engine would write the new outcome over the slot's and so lose track of the pin (held until the
     * client ends) or of the reservation (held until it lapses).
     */
    private static boolean slotHeld(final RemoteClient client, final RequestDecoder request, final int type, final int first, final int count,
                                    final boolean keysInBody)
    {
        final byte[] statuses = client.statuses();
        final KeyChain keys = client.keys();
        for (int i = 0; i < count; i++)
        {
            final int slot = first + i;
            final PageStatus held = PageStatus.of(statuses[slot]);
            final boolean pinned = held.isPinned();
            final boolean reserved = held == PageStatus.RESERVED;
            if ((type == MessageType.RESERVE && pinned) || (type == MessageType.ACQUIRE && reserved))
            {
                return true;
            }
            if (keysInBody && (pinned || reserved) && (keys.high(slot) != request.keyHigh(i) || keys.low(slot) != request.keyLow(i)))
            {
                return true;
            }
        }
        return false;
    }

    /** Seals each reserved page of the commit, as {@code Session.commit} does on the client's thread. */
    private void seal(final RemoteClient client, final int first, final int count)
    {
        final byte[] statuses = client.statuses();
        final int[] pageIds = client.pageIds();
        final int[] generations = client.generations();
        final int[] lengths = client.lengths();
        for (int slot = first; slot < first + count; slot++)
        {
            if (statuses[slot] != PageStatus.RESERVED.ordinal() || lengths[slot] < 1 || lengths[slot] > pool.pageSize())
            {
                continue; // the engine answers it NONE or INVALID
            }
            final int page = pageIds[slot];
            final long word = pool.metadata().stateWordAcquire(page);
            if (PageStateWord.state(word) == PageStateWord.WRITING && PageStateWord.generation(word) == generations[slot]
                && pool.metadata().ownerPlain(page) == client.clientId())
            {
                pool.frames().seal(page, pool.metadata().keyHighPlain(page), pool.metadata().keyLowPlain(page), lengths[slot]);
            }
        }
    }

    private void answer(final RemoteClient client, final int type, final long requestId, final int status)
    {
        final int length = ResponseDescriptor.length(0);
        final ResponseEncoder encoder = client.claimResponse(type, length);
        if (encoder == null)
        {
            drop(client, ErrorCode.NOT_READING, "its response ring had no room for an answer");
            return;
        }
        encoder.header(length, type, requestId, status, 0, 0, 0, 0, 0, 0, 0);
        client.publishResponse();
    }

    private void answerStats(final RemoteClient client, final long requestId)
    {
        final int length = ResponseDescriptor.statsLength(statsCount);
        final ResponseEncoder encoder = client.claimResponse(MessageType.STATS, length);
        if (encoder == null)
        {
            drop(client, ErrorCode.NOT_READING, "its response ring had no room for an answer");
            return;
        }
        encoder.header(length, MessageType.STATS, requestId, ErrorCode.OK.code(), statsCount, 0, 0, 0, 0, 0, 0).statsCount(statsCount);
        for (int i = 0; i < statsCount; i++)
        {
            encoder.statsValue(i, counters.valueOpaque(i));
        }
        client.publishResponse();
    }

    /** The client's end: its ring file is unlinked (mappings live on), its socket closed, the engine's mapping dropped. */
    private void remove(final RemoteClient client)
    {
        client.state = RemoteClient.State.GONE;
        if (!IpcFiles.unlink(client.ringPath()))
        {
            LOG.log(System.Logger.Level.WARNING, "could not unlink ring file {0}", client.ringPath());
        }
        closeQuietly(client.socket());
        client.arena().close();
    }

    /** Last resort, when releasing a client itself failed: its files and mapping go, logged, whatever it held. */
    private void forget(final RemoteClient client)
    {
        client.state = RemoteClient.State.GONE;
        try
        {
            IpcFiles.unlink(client.ringPath());
            closeQuietly(client.socket());
            client.arena().close();
        }
        catch (final RuntimeException ex)
        {
            LOG.log(System.Logger.Level.ERROR, "could not release IPC client " + client.clientId(), ex);
        }
    }

    private static void closeQuietly(final java.nio.channels.Channel channel)
    {
        try
        {
            channel.close();
        }
        catch (final IOException ignored)
        {
            // closing anyway
        }
    }

    private void shutdown()
    {
        control.closedRelease();
        closeQuietly(server);
        for (final Handshake handshake : handshakes)
        {
            closeQuietly(handshake.channel);
        }
        handshakes.clear();
        for (final RemoteClient client : clients)
        {
            drop(client, ErrorCode.CLOSED, "the engine is stopping");
        }
        final long deadline = System.nanoTime() + SHUTDOWN_WAIT_NANOS;
        while (!clients.isEmpty() && System.nanoTime() - deadline < 0)
        {
            now = System.nanoTime();
            for (int i = 0; i < clients.size(); i++)
            {
                final RemoteClient client = clients.get(i);
                serve(client);
                if (client.state == RemoteClient.State.GONE)
                {
                    clients.remove(i--);
                }
            }
            LockSupport.parkNanos(100_000);
        }
        if (!clients.isEmpty())
        {
            LOG.log(System.Logger.Level.WARNING, "{0} IPC clients were still being released at shutdown", clients.size());
        }
        connected = clients.size();
        try
        {
            selector.close();
        }
        catch (final IOException ignored)
        {
            // stopping anyway
        }
    }

    /** @return clients connected or being released, as the IPC thread last counted them (any thread) */
    int clientCount()
    {
        return connected;
    }
}
