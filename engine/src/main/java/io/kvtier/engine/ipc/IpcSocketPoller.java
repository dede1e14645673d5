package io.kvtier.engine.ipc;

import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.HandshakeDescriptor;
import io.kvtier.client.protocol.LittleEndian;
import io.kvtier.client.protocol.RequestDecoder;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;
import io.kvtier.nativeaccess.libc.LibC;
import io.kvtier.nativeaccess.libc.UnixSockets;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The IPC adapter's sockets, on the engine thread: accepts connections (pausing when the process or
 * the system is out of descriptors, never closing the listener), moves handshakes on, and reads what a
 * connected client sends on its socket: the end of it (the process exited or was killed) and, in a 1.2
 * session, DESCRIPTORS messages, whose descriptors a HOST_FD registration then names. One {@code poll(2)}
 * over all of them per call, without waiting; allocation-free.
 */
final class IpcSocketPoller
{
    /** Drops a client whose socket ended or sent what the protocol forbids. */
    interface Drops
    {
        /**
         * @param client the client
         * @param reason the Disconnect Reason it is told
         * @param why    what it did, for the log
         */
        void drop(RemoteClient client, ErrorCode reason, String why);
    }

    private static final System.Logger LOG = System.getLogger(IpcSocketPoller.class.getName());
    /** How long the engine stops accepting after the process or the system ran out of descriptors or memory. */
    private static final long ACCEPT_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** Connections accepted per cycle at most, so that a flood of them never starves the requests of those connected. */
    private static final int ACCEPTS_PER_CYCLE = 16;
    /** Reads of one client's socket per cycle at most. */
    private static final int SOCKET_READS_PER_CYCLE = 16;
    private static final int EMFILE = 24;
    private static final int ENFILE = 23;
    private static final int ENOBUFS = 105;
    private static final int ENOMEM = 12;

    private final UnixSockets sockets;
    private final int listening;
    private final IpcHandshakes handshakes;
    private final EngineCounters ipcCounters;
    private final Drops drops;
    /** The descriptors polled each cycle ({@code struct pollfd}), and who each one is: null the listener, else a handshake or a client. */
    private final MemorySegment pollfds;
    private final Object[] pollOwners;
    private final int[] received = new int[2];
    private final int[] receivedFds = new int[UnixSockets.MAX_DESCRIPTORS];
    private long now;
    private long acceptPausedUntilNanos;
    private long acceptErrorsInEpisode;
    private boolean listenerClosed;

    /**
     * @param sockets     the socket front
     * @param listening   the listening socket
     * @param handshakes  the connections not yet clients
     * @param ipcCounters the IPC counters, written by the engine thread
     * @param maxClients  clients at most
     * @param drops       drops a client
     */
    IpcSocketPoller(final UnixSockets sockets, final int listening, final IpcHandshakes handshakes, final EngineCounters ipcCounters,
                    final int maxClients, final Drops drops)
    {
        this.sockets = sockets;
        this.listening = listening;
        this.handshakes = handshakes;
        this.ipcCounters = ipcCounters;
        this.drops = drops;
        final int pollCapacity = 1 + IpcHandshakes.MAX_PENDING + maxClients;
        this.pollfds = Arena.ofAuto().allocate(UnixSockets.POLLFD_LAYOUT.byteSize() * pollCapacity, 8);
        this.pollOwners = new Object[pollCapacity];
    }

    /** Closes the listening socket: no connection is accepted any more. */
    void closeListener()
    {
        sockets.close(listening);
        listenerClosed = true;
    }

    /**
     * Polls the listener, every handshake and every connected client's socket once, without waiting, and
     * handles what is ready: a handshake that completes adds its client to {@code clients}.
     *
     * @param nowNanos the time of this cycle
     * @param running  whether the engine still takes clients
     * @param clients  the connected clients
     * @return how many descriptors had something
     */
    int poll(final long nowNanos, final boolean running, final List<RemoteClient> clients)
    {
        now = nowNanos;
        int count = 0;
        final boolean accepting = !listenerClosed && now - acceptPausedUntilNanos >= 0 && handshakes.pending() < IpcHandshakes.MAX_PENDING;
        if (accepting)
        {
            count = watch(count, listening, UnixSockets.POLLIN, null);
        }
        for (int i = 0; i < handshakes.pending() && count < pollOwners.length; i++)
        {
            final IpcHandshakes.Handshake handshake = handshakes.pending(i);
            count = watch(count, handshake.fd, UnixSockets.POLLIN, handshake);
        }
        for (int i = 0; i < clients.size() && count < pollOwners.length; i++)
        {
            final RemoteClient client = clients.get(i);
            if (client.socket() >= 0)
            {
                count = watch(count, client.socket(), (short)(UnixSockets.POLLIN | UnixSockets.POLLRDHUP), client);
            }
        }
        if (count == 0)
        {
            return 0;
        }
        final int ready = sockets.poll(pollfds, count, 0);
        if (ready <= 0)
        {
            return 0;
        }
        int work = 0;
        for (int i = 0; i < count; i++)
        {
            final short events = pollfds.get(ValueLayout.JAVA_SHORT, i * UnixSockets.POLLFD_LAYOUT.byteSize() + UnixSockets.POLLFD_REVENTS_OFFSET);
            final Object owner = pollOwners[i];
            pollOwners[i] = null;
            if (events == 0)
            {
                continue;
            }
            work++;
            if (owner == null)
            {
                acceptConnections();
            }
            else if (owner instanceof IpcHandshakes.Handshake handshake)
            {
                final RemoteClient client = handshakes.read(handshake, now, running, clients.size());
                if (client != null)
                {
                    clients.add(client);
                }
            }
            else if (owner instanceof RemoteClient client)
            {
                readClientSocket(client);
            }
        }
        return work;
    }

    private int watch(final int index, final int fd, final short events, final Object owner)
    {
        final long at = index * UnixSockets.POLLFD_LAYOUT.byteSize();
        pollfds.set(ValueLayout.JAVA_INT, at + UnixSockets.POLLFD_FD_OFFSET, fd);
        pollfds.set(ValueLayout.JAVA_SHORT, at + UnixSockets.POLLFD_EVENTS_OFFSET, events);
        pollfds.set(ValueLayout.JAVA_SHORT, at + UnixSockets.POLLFD_REVENTS_OFFSET, (short)0);
        pollOwners[index] = owner;
        return index + 1;
    }

    /**
     * Accepts waiting connections. When the process or the system is out of descriptors or memory the
     * connection stays queued in the kernel and the engine keeps listening: it pauses accepting for a
     * moment, says so once, and counts every failure; other clients are served meanwhile.
     */
    private void acceptConnections()
    {
        for (int n = 0; n < ACCEPTS_PER_CYCLE && handshakes.pending() < IpcHandshakes.MAX_PENDING; n++)
        {
            final int rc = handshakes.accept(listening, now);
            if (rc > 0)
            {
                if (acceptErrorsInEpisode > 0)
                {
                    LOG.log(System.Logger.Level.INFO, "IPC: accepting connections again, after {0} failed attempts", acceptErrorsInEpisode);
                    acceptErrorsInEpisode = 0;
                }
                continue;
            }
            if (rc == -LibC.EAGAIN || rc == -LibC.EINTR)
            {
                return;
            }
            ipcCounters.increment(EngineCounter.IPC_ACCEPT_ERRORS);
            if (acceptErrorsInEpisode++ == 0)
            {
                final boolean outOfSomething = rc == -EMFILE || rc == -ENFILE || rc == -ENOBUFS || rc == -ENOMEM;
                LOG.log(System.Logger.Level.WARNING, "IPC: cannot accept a connection: {0}{1}; the socket keeps listening and the engine retries"
                        + " every {2} ms (counted in ipc_accept_errors)", LibC.instance().map(libc -> libc.strerror(-rc)).orElse("errno " + -rc),
                    outOfSomething ? " (the process or the system is out of descriptors or memory)" : "",
                    TimeUnit.NANOSECONDS.toMillis(ACCEPT_BACKOFF_NANOS));
            }
            acceptPausedUntilNanos = now + ACCEPT_BACKOFF_NANOS;
            return;
        }
    }

    /**
     * What a connected client sent on its socket: nothing is expected but the end of it (the process
     * exited or was killed) and, in a 1.2 session, DESCRIPTORS messages. Bytes from an older client are
     * read and ignored; descriptors from one are closed.
     */
    private void readClientSocket(final RemoteClient client)
    {
        // Bounded: a client that writes without end must not keep the engine thread here.
        for (int reads = 0; reads < SOCKET_READS_PER_CYCLE && client.socket() >= 0; reads++)
        {
            final int[] fds = client.socketMessageFds;
            final int room = HandshakeDescriptor.DESCRIPTORS_LENGTH - client.socketMessageFilled;
            final long n = sockets.receive(client.socket(), client.socketMessage.asSlice(client.socketMessageFilled), room, receivedFds,
                received, false);
            if (n == -LibC.EAGAIN)
            {
                return;
            }
            if (n <= 0)
            {
                closeReceived();
                closeSocket(client);
                drops.drop(client, ErrorCode.CLOSED, n == 0 ? "its socket closed" : "its socket failed: errno " + -n);
                return;
            }
            if (!client.passesDescriptors())
            {
                closeReceived();
                continue;
            }
            for (int i = 0; i < received[0]; i++)
            {
                if (client.socketMessageFdCount < fds.length)
                {
                    fds[client.socketMessageFdCount++] = receivedFds[i];
                }
                else
                {
                    sockets.close(receivedFds[i]);
                }
            }
            client.socketMessageFilled += (int)n;
            if (client.socketMessageFilled == HandshakeDescriptor.DESCRIPTORS_LENGTH)
            {
                takeDescriptorsMessage(client);
            }
            if (client.state != RemoteClient.State.ACTIVE)
            {
                return;
            }
        }
    }

    private void closeReceived()
    {
        for (int i = 0; i < received[0]; i++)
        {
            sockets.close(receivedFds[i]);
        }
        received[0] = 0;
    }

    /** A whole DESCRIPTORS message: its count must be the descriptors that came with it, and the client may hold only so many. */
    private void takeDescriptorsMessage(final RemoteClient client)
    {
        final int magic = client.socketMessage.get(LittleEndian.INT, HandshakeDescriptor.DESCRIPTORS_MAGIC_OFFSET);
        final int count = client.socketMessage.get(LittleEndian.INT, HandshakeDescriptor.DESCRIPTORS_COUNT_OFFSET);
        final int arrived = client.socketMessageFdCount;
        client.socketMessageFilled = 0;
        client.socketMessageFdCount = 0;
        String wrong = null;
        if (magic != HandshakeDescriptor.DESCRIPTORS_MAGIC)
        {
            wrong = "a socket message with magic " + Integer.toHexString(magic) + ", not DESCRIPTORS";
        }
        else if (count < 1 || count > HandshakeDescriptor.DESCRIPTORS_MAX_COUNT || count != arrived)
        {
            wrong = "a DESCRIPTORS message of count " + count + " with " + arrived + " descriptors attached";
        }
        for (int i = 0; i < arrived; i++)
        {
            final int fd = client.socketMessageFds[i];
            if (wrong != null)
            {
                sockets.close(fd);
            }
            else if (!client.holdDescriptor(fd))
            {
                sockets.close(fd);
                wrong = "more than " + HandshakeDescriptor.DESCRIPTORS_MAX_HELD + " descriptors sent and not yet named in a registration";
            }
        }
        if (wrong != null)
        {
            drops.drop(client, ErrorCode.MALFORMED, wrong);
        }
    }

    /**
     * The descriptors a HOST_FD registration names, taken out of what the client sent (its socket read
     * first: the client sends its DESCRIPTORS message before it queues the request). They become the
     * device thread's, which closes them; -1 for a number never received.
     *
     * @param client  the registering client
     * @param request its REGISTER_KV
     * @return per allocation its descriptor, or null for a registration of another handle kind or an older session
     */
    int[] registerDescriptors(final RemoteClient client, final RequestDecoder request)
    {
        if (request.handleKind() != io.kvtier.client.protocol.DeviceRequestDescriptor.HANDLE_HOST_FD || !client.passesDescriptors())
        {
            return null;
        }
        readClientSocket(client);
        final int allocations = request.allocationCount();
        final int[] fds = new int[allocations];
        final long[] numbers = new long[allocations];
        final byte[] handle = new byte[io.kvtier.client.protocol.DeviceRequestDescriptor.HANDLE_LENGTH];
        for (int i = 0; i < allocations; i++)
        {
            request.allocationHandle(i, handle);
            numbers[i] = Integer.toUnsignedLong(java.nio.ByteBuffer.wrap(handle).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt(0));
            fds[i] = -1;
            // Tensors carved from one file name one descriptor: taken once, shared.
            for (int j = 0; j < i && fds[i] < 0; j++)
            {
                if (numbers[j] == numbers[i])
                {
                    fds[i] = fds[j];
                }
            }
            if (fds[i] < 0)
            {
                fds[i] = client.takeDescriptor(numbers[i]);
            }
        }
        return fds;
    }

    /**
     * Closes a client's socket, once.
     *
     * @param client the client
     */
    void closeSocket(final RemoteClient client)
    {
        if (client.socket() >= 0)
        {
            sockets.close(client.socket());
            client.socketClosed();
        }
    }
}
