package io.kvtier.engine.ipc;

import io.kvtier.client.PageKeyChain;
import io.kvtier.client.pool.CountersDescriptor;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.HandshakeDescriptor;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.client.protocol.RequestDecoder;
import io.kvtier.client.protocol.RequestDescriptor;
import io.kvtier.client.protocol.RequestValidator;
import io.kvtier.client.protocol.ResponseDescriptor;
import io.kvtier.client.protocol.ResponseEncoder;
import io.kvtier.client.protocol.RingConsumer;
import io.kvtier.engine.core.Agent;
import io.kvtier.engine.core.InternalOp;
import io.kvtier.engine.core.Pipeline;
import io.kvtier.engine.pool.Counters;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;
import io.kvtier.engine.status.ThreadWatch;
import io.kvtier.nativeaccess.libc.UnixSockets;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The IPC adapter, run by the engine thread in each of its duty cycles as an {@link Agent} (Aeron's
 * driver conductor reads its clients' command rings the same way): accepts connections and answers
 * their handshakes, reads each client's request ring one request at a time, validates it
 * (docs/ipc-protocol.md section 4), copies its keys and lengths into the client's {@link RemoteClient}
 * and hands it to the engine at once, and notices clients that are gone: socket EOF (the process
 * exited or was killed), a heartbeat that stopped, a response ring that stays full, broken framing. A
 * dropped client's pins and reservations go back through the engine's own session path, reservations
 * through quarantine. When the engine has nothing to do it sleeps on the control file's Doorbell
 * ({@link Doorbell}), which clients ring.
 *
 * <p>Running here instead of on a thread of its own saves a thread hop on every request, and a
 * spinning thread: on a machine with few cores, a third spinning thread between client and engine
 * costs more than all the protocol's work. Commits are sealed (CRC32C, trailer) by the
 * {@link CommitSealer}'s thread before the engine sees them, as an in-process session seals on its own
 * thread: no per-byte work lands on the engine thread. Handshakes (a ring file created and mapped) do
 * run here, once per connection. Serving a request allocates nothing; handshakes and disconnects may.
 */
final class IpcConductor implements Agent, IpcSocketPoller.Drops
{
    private static final System.Logger LOG = System.getLogger(IpcConductor.class.getName());
    private static final long SELECT_PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long HOUSEKEEPING_PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final long HEARTBEAT_PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    static final long SHUTDOWN_WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final IpcServer.Settings settings;
    private final PagePool pool;
    private final Pipeline pipeline;
    private final ControlFile control;
    private final IpcFiles files;
    private final UnixSockets sockets;
    private final int poolFd;
    private final IpcHandshakes handshakes;
    private final Counters counters;
    private final EngineCounters engineCounters;
    private final IpcSocketPoller socketPoller;
    private final int statsCount;
    private final long clientTimeoutNanos;
    private final long keepAliveNanos;
    private final Doorbell doorbell;
    private final ThreadWatch threads;
    private final CommitSealer sealer;
    private final DeviceCopier deviceCopier;
    private final RequestDecoder decoder = new RequestDecoder();
    /**
     * Where each request is copied before anything reads it: the client can rewrite its ring at any
     * moment, so the engine validates and uses only this copy, which no other process maps.
     */
    private final MemorySegment requestCopy;
    private final List<RemoteClient> clients = new ArrayList<>();
    private long now;
    private long lastSelectNanos;
    private long lastHousekeepingNanos;
    private long lastBeatNanos;
    private volatile boolean running = true;
    private volatile boolean stopped;
    private volatile int connected;
    private boolean shutdownBegun;
    private long shutdownDeadlineNanos;

    IpcConductor(final IpcServer.Settings settings, final UnixSockets sockets, final PagePool pool, final Pipeline pipeline, final ControlFile control,
                 final IpcFiles files, final int listening, final int poolFd) throws IOException
    {
        this.settings = settings;
        this.sockets = sockets;
        this.pool = pool;
        this.pipeline = pipeline;
        this.control = control;
        this.files = files;
        this.poolFd = poolFd;
        this.handshakes = new IpcHandshakes(settings, sockets, pool, pipeline, control, files, poolFd);
        this.counters = new Counters(pool.counters());
        // The engine thread runs this duty, so it writes the IPC counters as it writes the engine's own.
        this.engineCounters = new EngineCounters(pool.counters());
        this.socketPoller = new IpcSocketPoller(sockets, listening, handshakes, engineCounters, settings.maxClients(), this);
        int allocated = 0;
        while (allocated < CountersDescriptor.MAX_COUNTERS && counters.recordStateAcquire(allocated) == CountersDescriptor.RECORD_ALLOCATED)
        {
            allocated++;
        }
        this.statsCount = Math.min(allocated, (settings.ringBytes() / 2 - ResponseDescriptor.STATS_VALUES_OFFSET) / 8);
        this.requestCopy = Arena.ofAuto().allocate(RequestDescriptor.maxMessageLength(settings.maxKeys(), settings.ringBytes()), 8);
        this.clientTimeoutNanos = settings.clientTimeout().toNanos();
        this.keepAliveNanos = settings.sessionTimeout().toNanos() / 4;
        this.doorbell = new Doorbell(control.doorbell(), this::anyRequestAcquire, this::anyAnswerUnreadAcquire);
        this.threads = pipeline.threads();
        this.sealer = new CommitSealer(pool, pipeline, settings.maxClients(), threads);
        this.deviceCopier = new DeviceCopier(pool, sealer, settings.maxClients(), threads);
    }

    /** Any thread: asks the adapter to disconnect every client (CLOSED) and stop; see {@link #awaitStopped}. */
    void stop()
    {
        running = false;
        wake();
    }

    /**
     * Waits for the engine thread to finish the stop: clients released, sockets closed.
     *
     * @param timeoutNanos how long to wait
     * @return whether it finished
     */
    boolean awaitStopped(final long timeoutNanos)
    {
        final long deadline = System.nanoTime() + timeoutNanos;
        while (!stopped && System.nanoTime() - deadline < 0)
        {
            wake();
            LockSupport.parkNanos(1_000_000);
        }
        deviceCopier.stop();
        sealer.stop();
        return stopped;
    }

    /** @return where the engine thread sleeps once this adapter is attached: the control file's Doorbell, which clients ring */
    Doorbell doorbell()
    {
        return doorbell;
    }

    private void wake()
    {
        doorbell.wake();
    }

    @Override
    public String roleName()
    {
        return "kvtier IPC adapter";
    }

    @Override
    public int doWork()
    {
        now = pipeline.cycleNanos();
        if (!running)
        {
            return stopping();
        }
        int work = 0;
        if (now - lastBeatNanos >= HEARTBEAT_PERIOD_NANOS)
        {
            control.beatRelease();
            lastBeatNanos = now;
        }
        if (now - lastSelectNanos >= SELECT_PERIOD_NANOS)
        {
            lastSelectNanos = now;
            work += socketPoller.poll(now, running, clients);
            recount();
        }
        final boolean housekeeping = now - lastHousekeepingNanos >= HOUSEKEEPING_PERIOD_NANOS;
        if (housekeeping)
        {
            lastHousekeepingNanos = now;
            handshakes.expire(now);
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
                recount();
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

    /** Whether an active client has an answer in its response ring it has not consumed (its Response Head, acquire, behind the Tail). */
    private boolean anyAnswerUnreadAcquire()
    {
        for (int i = 0; i < clients.size(); i++)
        {
            final RemoteClient client = clients.get(i);
            if (client.state == RemoteClient.State.ACTIVE && client.responses().headAcquire() != client.responses().tailPlain())
            {
                return true;
            }
        }
        return false;
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
            client.beginRequest(InternalOp.KEEP_ALIVE, 0, 0, 0, 0);
            if (!pipeline.handleOnEngineThread(client, InternalOp.KEEP_ALIVE, 0, 0))
            {
                client.abandonRequest();
            }
        }
    }

    /** Drops a client: it is disconnected once its request in flight (if any) has ended. */
    @Override
    public void drop(final RemoteClient client, final ErrorCode reason, final String why)
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
                // A request that only waits on the engine (a FLUSH, a load, a probe) is not waited for: the client's
                // pins and reservations come back now, whatever a tier does. One on the sealer or the device thread,
                // which touch the client's ring until they answer, ends in bounded time (both are watched).
                if (client.inFlightAcquire() && !client.requestWaitsOnEngine())
                {
                    return 0;
                }
                client.disconnectReasonRelease(client.disconnectReason);
                client.state = RemoteClient.State.DISCONNECTING;
                client.beginRequest(InternalOp.DISCONNECT, 0, 0, 0, 0);
                if (!pipeline.handleOnEngineThread(client, InternalOp.DISCONNECT, 0, 0))
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
        if (offset == RingConsumer.MISPLACED_PADDING)
        {
            drop(client, ErrorCode.MALFORMED, "a padding record that does not run to the end of the ring's data");
            return 1;
        }
        if (offset < 0)
        {
            drop(client, ErrorCode.TOO_LONG, "a request record that does not fit its ring");
            return 1;
        }
        final int recordLength = requests.currentLength();
        if (recordLength > client.maxMessageLength())
        {
            drop(client, ErrorCode.TOO_LONG, "a request of " + recordLength + " bytes");
            return 1;
        }
        // Validated and used only as copied: a client thread rewriting the record in its ring meanwhile
        // changes nothing the engine reads (docs/ipc-protocol.md section 4).
        MemorySegment.copy(client.ring(), offset, requestCopy, 0, recordLength);
        final RequestDecoder request = decoder.wrap(requestCopy, 0, recordLength);
        ErrorCode code = RequestValidator.validate(request, client.lastRequestId, client.maxKeys(), client.namespaceCount(),
            client.maxMessageLength());
        final int type = request.type();
        if (code == ErrorCode.OK && MessageType.isDeviceOperation(type) && client.minorVersion() < 1)
        {
            code = ErrorCode.UNKNOWN_TYPE; // an operation of version 1.1, which a 1.0 client cannot mean
        }
        if (code == ErrorCode.OK && MessageType.isCombinedOperation(type) && client.minorVersion() < HandshakeDescriptor.COMBINED_MINOR_VERSION)
        {
            code = ErrorCode.UNKNOWN_TYPE; // an operation of version 1.3, which an older client cannot mean
        }
        if (code == ErrorCode.OK && !RequestValidator.reserveLimitValid(request))
        {
            code = ErrorCode.INVALID; // a Reserve Limit neither -1 nor within 0..Count
        }
        final long requestId = request.requestId();
        final int first = request.firstSlot();
        final int count = request.count();
        final int namespaceIndex = request.namespaceIndex();
        final boolean keysInBody = code == ErrorCode.OK && MessageType.carriesKeys(type) && (request.flags() & RequestDescriptor.FLAG_KEYS_IN_SLOTS) == 0;
        if (code == ErrorCode.OK && slotHeld(client, request, type, first, count, keysInBody))
        {
            code = ErrorCode.SLOT_HELD;
        }
        if (code == ErrorCode.OK && MessageType.carriesKeys(type) && !keysInBody && !client.keyed(first, count))
        {
            code = ErrorCode.INVALID; // KEYS_IN_SLOTS on a slot no request has written a key into: it has no key to use
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
            request.keysInto(client.keys(), first, count);
            client.markKeyed(first, count);
        }
        else if (MessageType.carriesLengths(type))
        {
            final int[] lengths = client.lengths();
            for (int i = 0; i < count; i++)
            {
                lengths[first + i] = request.commitLength(i);
            }
        }
        else if (type == MessageType.DEVICE_LOAD || type == MessageType.DEVICE_SAVE)
        {
            client.takeCopyEntries(request, first, count);
        }
        else if (type == MessageType.REGISTER_KV)
        {
            client.takeRegisterRecord(requestCopy, 0, recordLength, socketPoller.registerDescriptors(client, request));
        }
        requests.advanceRelease();
        if (type == MessageType.CLOSE)
        {
            client.state = RemoteClient.State.CLOSING;
        }
        client.requestNamespace(namespaceIndex);
        client.requestArguments(type == MessageType.LOOKUP_AND_LOCK ? request.reserveLimit() : RequestDescriptor.RESERVE_ALL,
            (request.flags() & RequestDescriptor.FLAG_BACKUP) != 0);
        if (MessageType.isDeviceOperation(type))
        {
            // A save ends as a commit of the slots it copied into: the engine answers it as a COMMIT, typed DEVICE_SAVE.
            client.beginRequest(type == MessageType.DEVICE_SAVE ? MessageType.COMMIT : type, type, requestId, first, count);
            client.servedOffEngine();
            if (!deviceCopier.offer(client))
            {
                client.abandonRequest();
                throw new IllegalStateException("the device copier's queue is full, which one request per client rules out");
            }
            return 1;
        }
        client.beginRequest(type, type, requestId, first, count);
        if (MessageType.carriesLengths(type))
        {
            client.servedOffEngine();
            if (!sealer.offer(client))
            {
                // One request per client rules this out; should it happen, the client is dropped, not hung.
                client.abandonRequest();
                throw new IllegalStateException("the commit sealer's queue is full, which one request per client rules out");
            }
            return 1;
        }
        if (!pipeline.handleOnEngineThread(client, type, first, count))
        {
            client.abandonRequest();
            answer(client, type, requestId, ErrorCode.CLOSED.code());
        }
        return 1;
    }

    /**
     * SLOT_HELD: a slot that holds a pin or a reservation may only be given the same key again; and,
     * whatever the keys, a RESERVE may not name a pinned slot nor an ACQUIRE or a LOOKUP_AND_LOCK a reserved
     * one (a LOOKUP_AND_LOCK's pinned slot past its new prefix is released before it reserves), since the
     * engine would write the new outcome over the slot's and so lose track of the pin (held until the
     * client ends) or of the reservation (held until it lapses).
     */
    private static boolean slotHeld(final RemoteClient client, final RequestDecoder request, final int type, final int first, final int count,
                                    final boolean keysInBody)
    {
        final byte[] statuses = client.statuses();
        final PageKeyChain keys = client.keys();
        for (int i = 0; i < count; i++)
        {
            final int slot = first + i;
            final int held = statuses[slot];
            final boolean pinned = PageEntryStatus.isPinned(held);
            final boolean reserved = held == PageEntryStatus.RESERVED;
            if ((type == MessageType.RESERVE && pinned) || ((type == MessageType.ACQUIRE || type == MessageType.LOOKUP_AND_LOCK) && reserved))
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

    /** The client's end: its ring file (if it has one) unlinked, its socket and the descriptors it sent closed, the engine's mapping dropped. */
    private void remove(final RemoteClient client)
    {
        client.state = RemoteClient.State.GONE;
        if (client.hasKvBuffers())
        {
            client.kvBuffers().close();
        }
        if (client.ringPath() != null && !IpcFiles.unlink(client.ringPath()))
        {
            LOG.log(System.Logger.Level.WARNING, "could not unlink ring file {0}", client.ringPath());
        }
        release(client);
    }

    /** Last resort, when releasing a client itself failed: its files and mapping go, logged, whatever it held. */
    private void forget(final RemoteClient client)
    {
        client.state = RemoteClient.State.GONE;
        try
        {
            if (client.hasKvBuffers())
            {
                client.kvBuffers().close();
            }
            if (client.ringPath() != null)
            {
                IpcFiles.unlink(client.ringPath());
            }
            release(client);
        }
        catch (final RuntimeException ex)
        {
            LOG.log(System.Logger.Level.ERROR, "could not release IPC client " + client.clientId(), ex);
        }
    }

    private void release(final RemoteClient client)
    {
        socketPoller.closeSocket(client);
        for (int i = 0; i < client.heldDescriptorCount(); i++)
        {
            sockets.close(client.heldDescriptor(i));
        }
        client.clearHeldDescriptors();
        for (int i = 0; i < client.socketMessageFdCount; i++)
        {
            sockets.close(client.socketMessageFds[i]);
        }
        client.socketMessageFdCount = 0;
        client.arena().close();
    }

    /**
     * One step of the stop, on the engine thread: first the control file says CLOSED and every client
     * is dropped and the listener closed; then clients are served until they are released (at most
     * 10 s); then the pool's descriptor closes and {@link #awaitStopped} returns.
     */
    private int stopping()
    {
        if (stopped)
        {
            return 0;
        }
        if (!shutdownBegun)
        {
            shutdownBegun = true;
            shutdownDeadlineNanos = now + SHUTDOWN_WAIT_NANOS;
            control.closedRelease();
            socketPoller.closeListener();
            handshakes.closeAll();
            for (final RemoteClient client : clients)
            {
                drop(client, ErrorCode.CLOSED, "the engine is stopping");
            }
        }
        for (int i = 0; i < clients.size(); i++)
        {
            final RemoteClient client = clients.get(i);
            try
            {
                serve(client);
            }
            catch (final RuntimeException ex)
            {
                LOG.log(System.Logger.Level.ERROR, "IPC client " + client.clientId() + " failed while stopping; forgetting it", ex);
                forget(client);
            }
            if (client.state == RemoteClient.State.GONE)
            {
                clients.remove(i--);
            }
        }
        recount();
        if (!clients.isEmpty() && now - shutdownDeadlineNanos < 0)
        {
            return 1;
        }
        if (!clients.isEmpty())
        {
            LOG.log(System.Logger.Level.WARNING, "{0} IPC clients were still being released at shutdown", clients.size());
        }
        files.close(poolFd);
        stopped = true;
        return 1;
    }

    /** Publishes the number of clients, connected or being released, to other threads and to the ipc_clients gauge. */
    private void recount()
    {
        connected = clients.size();
        engineCounters.set(EngineCounter.IPC_CLIENTS, connected);
    }

    /** @return clients connected or being released, as the IPC thread last counted them (any thread) */
    int clientCount()
    {
        return connected;
    }
}
