package io.kvtier.client;

import io.kvtier.client.protocol.ControlFileDescriptor;
import io.kvtier.client.protocol.DeviceRequestDescriptor;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.FutexWord;
import io.kvtier.client.protocol.HandshakeDescriptor;
import io.kvtier.client.protocol.IdleStrategy;
import io.kvtier.client.protocol.LittleEndian;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.RequestDescriptor;
import io.kvtier.client.protocol.RequestEncoder;
import io.kvtier.client.protocol.ResponseDecoder;
import io.kvtier.client.protocol.RingConsumer;
import io.kvtier.client.protocol.RingFileDescriptor;
import io.kvtier.client.protocol.RingProducer;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import io.kvtier.nativeaccess.libc.UnixSockets;

/**
 * The low-level client of a running kvtier engine over the IPC protocol (docs/ipc-protocol.md): the
 * socket handshake, the three mappings, and the request and response rings. It speaks the wire and
 * nothing more: slots, keys and pages are the caller's to track.
 *
 * <pre>{@code
 * try (IpcConnection c = IpcConnection.connect(socketPath, 64))
 * {
 *     long id = c.send(MessageType.RESERVE, 0, n, keyHighs, keyLows);   // keys into slots 0..n-1
 *     ResponseDecoder r = c.awaitResponse(id);
 *     int page = r.entryPageId(0);                                       // PageEntryStatus.RESERVED
 *     c.releaseResponse();
 *     c.page(page).copyFrom(bytes);                                      // write in place
 *     c.awaitResponse(c.sendCommit(0, 1, lengths)); c.releaseResponse();
 * }
 * }</pre>
 *
 * <p>Not thread-safe: one thread sends and awaits (as with an in-process {@code Session}); a daemon
 * thread only bumps the Client Heartbeat. Sending and awaiting allocate nothing.
 */
public final class IpcConnection implements AutoCloseable
{
    private static final long CLOSE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(5);
    /**
     * With {@code AWAKE}, a request of this many keys or more is waited for with the back-off: the engine's work for
     * it takes tens of microseconds and more (about 40 ns a key for a lookup here), where spinning would hold a core.
     */
    public static final int LARGE_REQUEST_KEYS = 64;
    /**
     * How often a wait for a large request yields before it sleeps. A lookup of 1,024 keys takes the engine 40 to 60
     * µs, longer than the back-off's 100 spins and 50 yields last here: with 50, the client slept on nearly every such
     * request and each answer then paid a futex wake-up (4,900 sleeps in 5,000 batched lookups). With 200, as the C
     * client yields, it slept on 6-13% of them and moved 18-44% more keys a second, in three alternated pairs of
     * {@code kvtier bench ipc} (docs/PERFORMANCE.md, IPC round trips, round nine).
     */
    static final int LARGE_REQUEST_YIELDS = 200;

    /** The socket: a channel (a session that passes no descriptors), or a descriptor of the UnixSockets front, else -1. */
    private final SocketChannel socket;
    private final int socketFd;
    private final Arena arena;
    private final HandshakeDescriptor.Welcome welcome;
    private final MemorySegment pool;
    private final MemorySegment control;
    private final MemorySegment ring;
    private final RingProducer requests;
    private final RingConsumer responses;
    private final RequestEncoder encoder = new RequestEncoder();
    private final ResponseDecoder decoder = new ResponseDecoder();
    private final FutexWord doorbell;
    private final FutexWord clientSleeping;
    private final IdleStrategy idle;
    /**
     * How it waits for the answer to a request of {@link #LARGE_REQUEST_KEYS} keys or more: with {@code AWAKE}, the
     * back-off, since spinning through the engine's long work for it holds a core the engine may need; otherwise
     * {@link #idle} itself.
     */
    private final IdleStrategy largeIdle;
    private final IdleStrategy roomIdle;
    /** The Count of the request claimed last: how much work its answer takes the engine. */
    private int lastRequestCount;
    private final IdleStrategy.WorkCheck responseArrived;
    private final IdleStrategy.WorkCheck requestRoom;
    private final long timeoutNanos;
    private final Thread heartbeat;
    private int roomWanted;
    private long lastRequestId;
    private long descriptorsSent;
    /** The Request Tail just after the request last published: the engine has taken it once its Head is there. */
    private long publishedTail;
    /** Whether publishing the last request woke the engine from a sleep. */
    private boolean rangTheEngine;
    private long engineBeat;
    private long engineBeatNanos;
    private boolean responseHeld;
    private volatile boolean closed;

    /**
     * Takes over what {@link IpcHandshake} connected and mapped, and starts the heartbeat.
     *
     * @param socket   the socket as a channel, or null when {@code socketFd} is the socket
     * @param socketFd the socket as a descriptor of the UnixSockets front, or -1
     * @param arena    the arena the three files are mapped in; closed with the connection
     * @param welcome  the engine's WELCOME
     * @param pool     the mapped pool
     * @param control  the mapped control file
     * @param ring     this client's mapped ring file
     * @param idleKind how this connection waits
     */
    IpcConnection(final SocketChannel socket, final int socketFd, final Arena arena, final HandshakeDescriptor.Welcome welcome,
                  final MemorySegment pool, final MemorySegment control, final MemorySegment ring, final IdleStrategy.Kind idleKind)
    {
        this.idle = new IdleStrategy(idleKind, IdleStrategy.MAX_SLEEP_NANOS, new EngineSeen());
        this.largeIdle = idleKind == IdleStrategy.Kind.AWAKE
            ? IdleStrategy.backoffYielding(IdleStrategy.MAX_SLEEP_NANOS, LARGE_REQUEST_YIELDS) : idle;
        // Room in the request ring comes as the engine catches up, which a wait for an answer does not tell apart: the fixed back-off.
        this.roomIdle = new IdleStrategy(IdleStrategy.timesWaits(idleKind) ? IdleStrategy.Kind.BACKOFF : idleKind, IdleStrategy.MAX_SLEEP_NANOS);
        this.socket = socket;
        this.socketFd = socketFd;
        this.arena = arena;
        this.welcome = welcome;
        this.pool = pool;
        this.control = control;
        this.ring = ring;
        final int capacity = welcome.ringCapacity();
        this.requests = new RingProducer(ring, RingFileDescriptor.requestRingOffset(), capacity,
            RingFileDescriptor.REQUEST_TAIL_OFFSET, RingFileDescriptor.REQUEST_HEAD_OFFSET);
        this.responses = new RingConsumer(ring, RingFileDescriptor.responseRingOffset(capacity), capacity,
            RingFileDescriptor.RESPONSE_TAIL_OFFSET, RingFileDescriptor.RESPONSE_HEAD_OFFSET);
        this.doorbell = new FutexWord(control, ControlFileDescriptor.DOORBELL_OFFSET);
        this.clientSleeping = new FutexWord(ring, RingFileDescriptor.CLIENT_SLEEPING_OFFSET);
        this.responseArrived = () -> responses.hasRecordAcquire() || disconnectReasonAcquire() != 0;
        this.requestRoom = () -> requests.hasRoomAcquire(roomWanted) || disconnectReasonAcquire() != 0;
        this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(Math.max(1, welcome.clientTimeoutMs()));
        final long beatMillis = Math.max(1, welcome.clientTimeoutMs() / 8);
        this.heartbeat = Thread.ofPlatform().daemon(true).name("kvtier-ipc-heartbeat-" + welcome.clientId()).unstarted(() -> beat(beatMillis));
        heartbeat.start();
    }

    /**
     * Connects with no namespaces (Namespace Index 0 only).
     *
     * @param socketPath the engine's {@code ipc.socket-path}
     * @param maxKeys    slots wanted (the engine may grant fewer)
     * @return the connection
     * @throws IpcException if the engine refused the HELLO
     * @throws IOException  if the socket or a file cannot be reached
     */
    public static IpcConnection connect(final Path socketPath, final int maxKeys) throws IOException
    {
        return connect(socketPath, maxKeys, new byte[0], HandshakeDescriptor.MAJOR_VERSION);
    }

    /**
     * Connects.
     *
     * @param socketPath     the engine's {@code ipc.socket-path}
     * @param maxKeys        slots wanted
     * @param namespaceRoots N namespace roots, 16 bytes each (keys.md)
     * @param majorVersion   the major version to announce ({@link HandshakeDescriptor#MAJOR_VERSION}; others are refused)
     * @return the connection
     * @throws IpcException if the engine refused the HELLO
     * @throws IOException  if the socket or a file cannot be reached
     */
    public static IpcConnection connect(final Path socketPath, final int maxKeys, final byte[] namespaceRoots, final int majorVersion) throws IOException
    {
        return connect(socketPath, maxKeys, namespaceRoots, majorVersion, IdleStrategy.CLIENT_DEFAULT);
    }

    /**
     * Connects, waiting for responses and ring room per {@code idleKind}.
     *
     * @param socketPath     the engine's {@code ipc.socket-path}
     * @param maxKeys        slots wanted
     * @param namespaceRoots N namespace roots, 16 bytes each (keys.md)
     * @param majorVersion   the major version to announce
     * @param idleKind       how this client waits: {@code AWAKE} (the default, {@link IdleStrategy#CLIENT_DEFAULT}: spin
     *                       while the engine is awake, taken or not, then sleep, never yield; requests of
     *                       {@link #LARGE_REQUEST_KEYS} keys or more as {@code BACKOFF}), {@code BACKOFF} (spin, yield,
     *                       then sleep on its Client Sleeping word), {@code ADAPTIVE} (spin while the engine is awake, for a
     *                       budget that follows the waits seen, then sleep), {@code TIMED} (as {@code ADAPTIVE}, but yield
     *                       rather than sleep while an awake engine leaves the request untaken), {@code SPIN} (never
     *                       sleeps: lowest latency, a core) or {@code SLEEP}
     * @return the connection
     * @throws IpcException if the engine refused the HELLO
     * @throws IOException  if the socket or a file cannot be reached
     */
    public static IpcConnection connect(final Path socketPath, final int maxKeys, final byte[] namespaceRoots, final int majorVersion,
                                        final IdleStrategy.Kind idleKind) throws IOException
    {
        return connect(socketPath, maxKeys, namespaceRoots, majorVersion, HandshakeDescriptor.MINOR_VERSION, idleKind);
    }

    /**
     * Connects announcing a given minor version: an engine answers operations later than it with
     * UNKNOWN_TYPE, as it would for a client written against that version.
     *
     * @param socketPath     the engine's {@code ipc.socket-path}
     * @param maxKeys        slots wanted
     * @param namespaceRoots N namespace roots, 16 bytes each (keys.md)
     * @param majorVersion   the major version to announce
     * @param minorVersion   the minor version to announce
     * @param idleKind       how this client waits
     * @return the connection
     * @throws IpcException if the engine refused the HELLO
     * @throws IOException  if the socket or a file cannot be reached
     */
    public static IpcConnection connect(final Path socketPath, final int maxKeys, final byte[] namespaceRoots, final int majorVersion,
                                        final int minorVersion, final IdleStrategy.Kind idleKind) throws IOException
    {
        return IpcHandshake.connect(socketPath, maxKeys, namespaceRoots, majorVersion, minorVersion, idleKind);
    }

    /**
     * Sends one HELLO and reads the WELCOME.
     *
     * @param socket a connected socket
     * @param hello  the HELLO's bytes (any bytes: tests send broken ones)
     * @return the engine's answer
     * @throws IOException if the socket fails or closes first
     */
    public static HandshakeDescriptor.Welcome handshake(final SocketChannel socket, final ByteBuffer hello) throws IOException
    {
        return IpcHandshake.handshake(socket, hello);
    }

    /**
     * Passes open files to the engine (a DESCRIPTORS message over the socket, protocol 1.2), for a later
     * REGISTER_KV of Handle Kind HOST_FD to name ({@link KvBufferRegistration#hostDescriptors}). The
     * engine numbers what it receives from 0, in the order sent; this connection counts the same way.
     * The caller keeps its own descriptors; the engine closes its copies once a registration named them.
     *
     * @param fds descriptors open read-write, 1 to {@value HandshakeDescriptor#DESCRIPTORS_MAX_COUNT}
     * @return the number of the first of them
     * @throws IOException if the session does not pass descriptors, or the socket fails
     */
    public long sendDescriptors(final int... fds) throws IOException
    {
        if (socketFd < 0 || welcome.descriptors() == 0)
        {
            throw new IOException("this session does not pass descriptors (engine minor version " + welcome.engineMinorVersion()
                + "; it needs both sides at 1." + HandshakeDescriptor.DESCRIPTORS_MINOR_VERSION + " and the UnixSockets front)");
        }
        if (fds.length < 1 || fds.length > HandshakeDescriptor.DESCRIPTORS_MAX_COUNT)
        {
            throw new IllegalArgumentException(fds.length + " descriptors: a DESCRIPTORS message carries 1 to " + HandshakeDescriptor.DESCRIPTORS_MAX_COUNT);
        }
        final UnixSockets sockets = UnixSockets.instance().orElseThrow();
        try (Arena scratch = Arena.ofConfined())
        {
            final MemorySegment message = scratch.allocate(HandshakeDescriptor.DESCRIPTORS_LENGTH);
            message.set(LittleEndian.INT, HandshakeDescriptor.DESCRIPTORS_MAGIC_OFFSET, HandshakeDescriptor.DESCRIPTORS_MAGIC);
            message.set(LittleEndian.INT, HandshakeDescriptor.DESCRIPTORS_COUNT_OFFSET, fds.length);
            final long sent = sockets.send(socketFd, message, message.byteSize(), fds, fds.length);
            if (sent != message.byteSize())
            {
                throw new IOException("sending descriptors to the engine failed: " + (sent < 0 ? IpcHandshake.errnoText((int)-sent) : "a short send of " + sent + " bytes"));
            }
        }
        final long first = descriptorsSent;
        descriptorsSent += fds.length;
        return first;
    }

    /** @return what the engine granted: ids, sizes, paths */
    public HandshakeDescriptor.Welcome welcome()
    {
        return welcome;
    }

    /** @return slots granted */
    public int maxKeys()
    {
        return welcome.maxKeys();
    }

    /**
     * @param pageId a page a slot holds pinned or reserved
     * @return its Page Size bytes in the mapped pool, read and written in place (a new slice each call;
     *         {@link #pool()} and {@link #pageOffset} reach them without allocating)
     */
    public MemorySegment page(final int pageId)
    {
        if (pageId < 0 || pageId >= welcome.pageCount())
        {
            throw new IndexOutOfBoundsException("page " + pageId + " of " + welcome.pageCount());
        }
        return pool.asSlice(welcome.dataOffset() + pageId * welcome.frameLength(), welcome.pageSize());
    }

    /** @return the whole mapped pool file: with {@link #pageOffset} an allocation-free way to a page's bytes */
    public MemorySegment pool()
    {
        return pool;
    }

    /**
     * @param pageId a page a slot holds pinned or reserved
     * @return where its Page Size bytes start in {@link #pool()}: Data Offset + page x Frame Length
     */
    public long pageOffset(final int pageId)
    {
        if (pageId < 0 || pageId >= welcome.pageCount())
        {
            throw new IndexOutOfBoundsException("page " + pageId + " of " + welcome.pageCount());
        }
        return welcome.dataOffset() + pageId * welcome.frameLength();
    }

    /** @return the mapped ring file (header, then both rings) */
    public MemorySegment ringFile()
    {
        return ring;
    }

    /** @return the mapped control file */
    public MemorySegment controlFile()
    {
        return control;
    }

    /** @return the engine's reason for dropping this client (0 while connected), read with acquire */
    public int disconnectReasonAcquire()
    {
        return (int)LittleEndian.INT_HANDLE.getAcquire(ring, (long)RingFileDescriptor.DISCONNECT_REASON_OFFSET);
    }

    /**
     * Claims a request record, writes its header with the next request id, and returns the encoder for
     * the body; then {@link #publish()}. Waits for room (the engine consumes as it goes).
     *
     * @param type           the operation
     * @param firstSlot      first slot
     * @param count          slots
     * @param namespaceIndex the namespace
     * @param flags          request flags
     * @param bodyLength     body bytes that follow the header
     * @return the encoder, wrapped on the record
     * @throws IpcException if the engine dropped the client, stopped, or its heartbeat stood still for the client timeout
     */
    public RequestEncoder claim(final int type, final int firstSlot, final int count, final int namespaceIndex, final int flags, final int bodyLength)
        throws IpcException
    {
        final int length = RequestDescriptor.HEADER_LENGTH + bodyLength;
        roomWanted = length;
        lastRequestCount = count;
        long offset = requests.tryClaim(type, length);
        if (offset < 0)
        {
            startWaiting();
            roomIdle.reset();
            while ((offset = requests.tryClaim(type, length)) < 0)
            {
                // No deadline of its own: a live engine either makes room or drops this client (NOT_READING).
                checkConnected();
                roomIdle.idle(clientSleeping, requestRoom);
            }
        }
        lastRequestId++;
        return encoder.wrap(ring, offset).header(length, type, lastRequestId, firstSlot, count, namespaceIndex, flags);
    }

    /**
     * Publishes the claimed request (Request Tail, release) and rings the engine's Doorbell if it sleeps.
     *
     * @return the request's id, to pass to {@link #awaitResponse}
     */
    public long publish()
    {
        requests.commitRelease();
        publishedTail = requests.tailPlain();
        bumpHeartbeat();
        rangTheEngine = idle.wakeCounted(doorbell);
        return lastRequestId;
    }

    /**
     * Sends a request without a body (RELEASE, ABORT, FLUSH, CLOSE, STATS, or a keyed one with
     * {@link RequestDescriptor#FLAG_KEYS_IN_SLOTS}).
     *
     * @param type      the operation
     * @param firstSlot first slot
     * @param count     slots
     * @param flags     request flags
     * @return its id
     * @throws IpcException if the engine dropped the client
     */
    public long send(final int type, final int firstSlot, final int count, final int flags) throws IpcException
    {
        claim(type, firstSlot, count, 0, flags, 0);
        return publish();
    }

    /**
     * Sends a request carrying keys: slots {@code [firstSlot, firstSlot + count)} get
     * {@code keyHighs[i], keyLows[i]} for {@code i < count}.
     *
     * @param type      LOOKUP, ACQUIRE, RESERVE, PREFETCH, BACKUP or EVICT
     * @param firstSlot first slot
     * @param count     keys
     * @param keyHighs  the keys' high halves
     * @param keyLows   their low halves
     * @return its id
     * @throws IpcException if the engine dropped the client
     */
    public long send(final int type, final int firstSlot, final int count, final long[] keyHighs, final long[] keyLows) throws IpcException
    {
        final RequestEncoder request = claim(type, firstSlot, count, 0, 0, count * RequestDescriptor.KEY_LENGTH);
        for (int i = 0; i < count; i++)
        {
            request.key(i, keyHighs[i], keyLows[i]);
        }
        return publish();
    }

    /**
     * Sends a COMMIT of slots {@code [firstSlot, firstSlot + count)} with their payload lengths.
     *
     * @param firstSlot first slot
     * @param count     slots
     * @param lengths   payload bytes written into slot {@code firstSlot + i}'s page
     * @return its id
     * @throws IpcException if the engine dropped the client
     */
    public long sendCommit(final int firstSlot, final int count, final int[] lengths) throws IpcException
    {
        final RequestEncoder request = claim(MessageType.COMMIT, firstSlot, count, 0, 0, count * RequestDescriptor.COMMIT_LENGTH_LENGTH);
        for (int i = 0; i < count; i++)
        {
            request.commitLength(i, lengths[i]);
        }
        return publish();
    }

    /**
     * Sends a LOOKUP_AND_LOCK (version 1.3): slots {@code [firstSlot, firstSlot + count)} get
     * {@code keyHighs[i], keyLows[i]}; the engine pins their longest prefix as ACQUIRE does and reserves
     * pages for keys after it as RESERVE does, at most {@code reserveLimit} of them. Its response's Result
     * Count is the prefix pinned, {@link ResponseDecoder#reservedPages()} the pages reserved; the entries say
     * which slot holds what. With {@code keyHighs} null the keys already in the slots are used
     * ({@link RequestDescriptor#FLAG_KEYS_IN_SLOTS}).
     *
     * @param firstSlot    first slot
     * @param count        keys
     * @param reserveLimit the most keys after the prefix to reserve pages for, 0 to {@code count}, or
     *                     {@link RequestDescriptor#RESERVE_ALL}
     * @param keyHighs     the keys' high halves, or null to use the keys in the slots
     * @param keyLows      their low halves
     * @return its id
     * @throws IpcException if the engine dropped the client
     */
    public long sendLookupAndLock(final int firstSlot, final int count, final int reserveLimit, final long[] keyHighs, final long[] keyLows)
        throws IpcException
    {
        final boolean inBody = keyHighs != null;
        final RequestEncoder request = claim(MessageType.LOOKUP_AND_LOCK, firstSlot, count, 0, inBody ? 0 : RequestDescriptor.FLAG_KEYS_IN_SLOTS,
            inBody ? count * RequestDescriptor.KEY_LENGTH : 0);
        request.reserveLimit(reserveLimit);
        for (int i = 0; inBody && i < count; i++)
        {
            request.key(i, keyHighs[i], keyLows[i]);
        }
        return publish();
    }

    /**
     * Sends a COMMIT_AND_RELEASE (version 1.3) of slots {@code [firstSlot, firstSlot + count)}: the pins
     * they hold are dropped and their reserved pages committed with these payload lengths (a pinned
     * slot's length is not read). Its response's Result Count is the pages committed,
     * {@link ResponseDecoder#pinsReleased()} the pins dropped.
     *
     * @param firstSlot first slot
     * @param count     slots
     * @param lengths   payload bytes written into slot {@code firstSlot + i}'s reserved page
     * @param backup    whether to copy each committed page to L3 as BACKUP would ({@link RequestDescriptor#FLAG_BACKUP})
     * @return its id
     * @throws IpcException if the engine dropped the client
     */
    public long sendCommitAndRelease(final int firstSlot, final int count, final int[] lengths, final boolean backup) throws IpcException
    {
        final RequestEncoder request = claim(MessageType.COMMIT_AND_RELEASE, firstSlot, count, 0, backup ? RequestDescriptor.FLAG_BACKUP : 0,
            count * RequestDescriptor.COMMIT_LENGTH_LENGTH);
        for (int i = 0; i < count; i++)
        {
            request.commitLength(i, lengths[i]);
        }
        return publish();
    }

    /**
     * Sends a REGISTER_KV (version 1.1): its response's Result Count is the Layout Id that DEVICE_LOAD
     * and DEVICE_SAVE name, or, with Status INVALID, a {@code DeviceRequestDescriptor.DETAIL_*} saying
     * what was refused.
     *
     * @param registration the buffers and their layout
     * @return its id
     * @throws IpcException if the engine dropped the client
     */
    public long sendRegisterKv(final KvBufferRegistration registration) throws IpcException
    {
        final int allocations = registration.offsets().length;
        final RequestEncoder request = claim(MessageType.REGISTER_KV, 0, 0, 0, 0,
            (int)DeviceRequestDescriptor.registerLength(allocations) - RequestDescriptor.HEADER_LENGTH);
        request.registerKv(registration.handleKind(), registration.device(), registration.arrangement(), registration.wireShape(), allocations);
        for (int i = 0; i < allocations; i++)
        {
            request.allocation(i, registration.offsets()[i], registration.handles()[i]);
        }
        return publish();
    }

    /**
     * Sends a DEVICE_LOAD (the pinned pages of the slots into blocks) or a DEVICE_SAVE (blocks into the
     * reserved pages of the slots, then their commit), version 1.1.
     *
     * @param type        {@link MessageType#DEVICE_LOAD} or {@link MessageType#DEVICE_SAVE}
     * @param layoutId    a REGISTER_KV's Layout Id
     * @param firstSlot   first slot
     * @param count       slots
     * @param blocks      slot {@code firstSlot + i}'s block
     * @param validTokens its tokens to copy, 1..Block Tokens
     * @return its id
     * @throws IpcException if the engine dropped the client
     */
    public long sendDeviceCopy(final int type, final int layoutId, final int firstSlot, final int count, final int[] blocks,
                               final int[] validTokens) throws IpcException
    {
        final RequestEncoder request = claim(type, firstSlot, count, 0, 0,
            (int)DeviceRequestDescriptor.copyLength(count) - RequestDescriptor.HEADER_LENGTH);
        request.layoutId(layoutId);
        for (int i = 0; i < count; i++)
        {
            request.copyEntry(i, blocks[i], validTokens[i]);
        }
        return publish();
    }

    /**
     * Waits for the response to {@code requestId} (responses come in request order; earlier ones not
     * awaited are skipped). Read it, then {@link #releaseResponse()}.
     *
     * @param requestId an id from {@link #publish()}
     * @return the decoder, wrapped on the response
     * @throws IpcException if the engine dropped the client, stopped, or its heartbeat stood still for the
     *                     client timeout (a request may take longer than that: an acquire waits for L3)
     */
    public ResponseDecoder awaitResponse(final long requestId) throws IpcException
    {
        if (responseHeld)
        {
            releaseResponse();
        }
        startWaiting();
        final IdleStrategy wait = lastRequestCount >= LARGE_REQUEST_KEYS ? largeIdle : idle;
        wait.reset();
        int looks = 0;
        while (true)
        {
            final long offset = responses.poll();
            if (offset >= 0)
            {
                decoder.wrap(ring, offset);
                if (decoder.requestId() == requestId)
                {
                    wait.arrived();
                    responseHeld = true;
                    return decoder;
                }
                responses.advanceRelease();
                continue;
            }
            if (offset != RingConsumer.EMPTY)
            {
                throw new IpcException(ErrorCode.MALFORMED.code(), "the engine's response ring is corrupt");
            }
            // Every 16th look: its three loads and a clock read would otherwise stretch each look of a spin that
            // usually ends within a microsecond. A drop still wakes this thread (the Disconnect Reason ends a sleep).
            if ((looks++ & 15) == 0)
            {
                checkConnected();
            }
            wait.idle(clientSleeping, responseArrived);
        }
    }

    /** Consumes the response {@link #awaitResponse} returned (Response Head, release). */
    public void releaseResponse()
    {
        if (responseHeld)
        {
            responseHeld = false;
            responses.advanceRelease();
        }
    }

    /**
     * How this connection has waited so far: waits for answers, yields, futex sleeps and the time in
     * them, and the wakes it sent to a sleeping engine. Not for a hot path (it allocates the record).
     *
     * @return the counts of this connection's thread
     */
    public IdleStrategy.Counts waitCounts()
    {
        final IdleStrategy.Counts answers = idle.counts();
        final IdleStrategy.Counts large = largeIdle == idle ? new IdleStrategy.Counts(0, 0, 0, 0, 0) : largeIdle.counts();
        final IdleStrategy.Counts room = roomIdle.counts();
        return new IdleStrategy.Counts(answers.waits() + large.waits(), answers.yields() + large.yields() + room.yields(),
            answers.sleeps() + large.sleeps() + room.sleeps(), answers.sleepNanos() + large.sleepNanos() + room.sleepNanos(),
            answers.wakesSent());
    }

    /** What this client sees of the engine while it waits for an answer (docs/ipc-protocol.md section 5). */
    private final class EngineSeen implements IdleStrategy.Peer
    {
        @Override
        public boolean awakeVolatile()
        {
            return doorbell.getVolatile() == 0;
        }

        @Override
        public boolean tookItAcquire()
        {
            return requests.headAcquire() - publishedTail >= 0;
        }

        @Override
        public boolean wokeIt()
        {
            return rangTheEngine;
        }
    }

    private void startWaiting()
    {
        engineBeat = ControlFileDescriptor.engineHeartbeatAcquire(control);
        engineBeatNanos = System.nanoTime();
    }

    /** Whether to go on waiting: not dropped, the engine open and its heartbeat moving (docs/ipc-protocol.md section 7). */
    private void checkConnected() throws IpcException
    {
        final int reason = disconnectReasonAcquire();
        if (reason != 0)
        {
            throw new IpcException(reason, "the engine dropped client " + welcome.clientId());
        }
        if (ControlFileDescriptor.stateAcquire(control) == ControlFileDescriptor.STATE_CLOSED)
        {
            throw new IpcException(ErrorCode.CLOSED.code(), "the engine stopped");
        }
        final long beat = ControlFileDescriptor.engineHeartbeatAcquire(control);
        final long now = System.nanoTime();
        if (beat != engineBeat)
        {
            engineBeat = beat;
            engineBeatNanos = now;
        }
        else if (now - engineBeatNanos > timeoutNanos)
        {
            throw new IpcException(ErrorCode.CLOSED.code(), "the engine's heartbeat stood still for " + welcome.clientTimeoutMs() + " ms: it is gone");
        }
    }

    private void bumpHeartbeat()
    {
        final long beat = (long)LittleEndian.LONG_HANDLE.getOpaque(ring, (long)RingFileDescriptor.CLIENT_HEARTBEAT_OFFSET);
        LittleEndian.LONG_HANDLE.setRelease(ring, (long)RingFileDescriptor.CLIENT_HEARTBEAT_OFFSET, beat + 1);
    }

    private void beat(final long periodMillis)
    {
        // Client Timeout / 8: twice as often as the protocol's Client Timeout / 4 requires, so a late
        // wake-up of this thread under load does not end the client.
        while (!closed)
        {
            bumpHeartbeat();
            try
            {
                Thread.sleep(periodMillis);
            }
            catch (final InterruptedException ex)
            {
                return;
            }
        }
    }

    /**
     * Sends CLOSE and waits (briefly) for its answer, then closes the socket and unmaps everything.
     * Every page address from {@link #page} becomes invalid. Idempotent.
     */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        try
        {
            if (disconnectReasonAcquire() == 0 && ControlFileDescriptor.stateAcquire(control) == ControlFileDescriptor.STATE_OPEN)
            {
                final long id = send(MessageType.CLOSE, 0, 0, 0);
                startWaiting();
                idle.reset();
                final long deadline = System.nanoTime() + CLOSE_WAIT_NANOS;
                while (System.nanoTime() - deadline < 0)
                {
                    final long offset = responses.poll();
                    if (offset >= 0)
                    {
                        final boolean done = decoder.wrap(ring, offset).requestId() == id;
                        responses.advanceRelease();
                        if (done)
                        {
                            break;
                        }
                    }
                    else if (offset != RingConsumer.EMPTY || disconnectReasonAcquire() != 0)
                    {
                        break;
                    }
                    else
                    {
                        checkConnected();
                        idle.idle(clientSleeping, responseArrived);
                    }
                }
            }
        }
        catch (final IpcException ex)
        {
            // Dropped already: the engine has given back everything this client held.
        }
        finally
        {
            closed = true;
            heartbeat.interrupt();
            try
            {
                heartbeat.join(1000);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
            if (socket != null)
            {
                try
                {
                    socket.close();
                }
                catch (final IOException ignored)
                {
                    // closing: nothing to do about it
                }
            }
            else
            {
                UnixSockets.instance().ifPresent(sockets -> sockets.close(socketFd));
            }
            arena.close();
        }
    }
}
