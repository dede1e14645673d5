package io.kvtier.engine.ipc;

import io.kvtier.client.PageKeyChain;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.FutexWord;
import io.kvtier.client.protocol.IdleStrategy;
import io.kvtier.client.protocol.LittleEndian;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.ResponseDescriptor;
import io.kvtier.client.protocol.ResponseEncoder;
import io.kvtier.client.protocol.RingConsumer;
import io.kvtier.client.protocol.RingFileDescriptor;
import io.kvtier.client.protocol.RingProducer;
import io.kvtier.engine.core.ClientPort;
import io.kvtier.engine.core.InternalOp;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.file.Path;

/**
 * One client of another process, as the engine sees it: a {@link ClientPort} whose keys and lengths
 * the IPC thread fills from the client's request ring, and whose {@link #complete} (on the engine
 * thread) encodes the per-slot results into the client's response ring and wakes it. The engine thread
 * runs the same code for it as for an in-process {@code Session}.
 *
 * <p>One request at a time: the IPC thread publishes a request only when none is in flight and the
 * response ring has room for its whole answer, so the engine thread never waits on a client and each
 * response ring has one producer at a time (the engine thread while a request is in flight, the IPC
 * thread, for the errors and STATS it answers itself, otherwise). {@link #inFlightAcquire()} is the
 * hand-over: set with release by the IPC thread before publishing, cleared with release by the engine
 * thread after the response is out.
 */
final class RemoteClient implements ClientPort
{
    private static final VarHandle IN_FLIGHT;

    static
    {
        try
        {
            IN_FLIGHT = MethodHandles.lookup().findVarHandle(RemoteClient.class, "inFlight", int.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    /** Lifecycle, IPC thread only. */
    enum State
    {
        /** Requests are read and served. */
        ACTIVE,
        /** A CLOSE is in flight; when it ends the client's files go. */
        CLOSING,
        /** Dropped: waiting for the request in flight to end before the engine releases everything. */
        DYING,
        /** The engine is releasing everything the client held (an internal DISCONNECT in flight). */
        DISCONNECTING,
        /** Gone; its files are unlinked. */
        GONE
    }

    private final PageKeyChain keys;
    private final int[] lengths;
    private final byte[] statuses;
    private final int[] pageIds;
    private final int[] generations;
    /** Whether a request has written a key into each slot: KEYS_IN_SLOTS may only use such slots. IPC thread only. */
    private final boolean[] keyed;
    private final int maxKeys;
    private final int namespaceCount;
    private final long[] namespaceTags;
    private final int pid;
    private final int minorVersion;
    private final int peerUid;
    private final int maxMessageLength;
    private final ResponseEncoder responseEncoder = new ResponseEncoder();
    // Device operations (version 1.1): made at the first one, used by the IPC thread then the device thread in turn.
    private ClientKvBuffers kvBuffers;
    private int[] copyBlocks;
    private int[] copyTokens;
    private byte[] copyOutcomes;
    private byte[] registerRecord;
    private int[] registerDescriptors;
    private int copyLayoutId;
    private int id;
    private volatile boolean expired;

    // The request in flight: written before it is handed to the engine (or the sealer), read by whoever completes it.
    private int requestOp;
    private int requestType;
    private long requestId;
    private int requestFirst;
    private int requestCount;
    private long requestTag;
    private int requestReserveLimit = io.kvtier.client.protocol.RequestDescriptor.RESERVE_ALL;
    private boolean requestBackup;
    private ErrorCode internalOutcome;
    private boolean answerInternalError;
    /** Whether the request in flight waits on the engine thread (not on the sealer or the device thread). */
    private boolean withEngine;
    @SuppressWarnings("unused")
    private volatile int inFlight;
    private boolean responseLost;

    // Set once the ring file exists (after the engine opened the client).
    private Arena arena;
    private MemorySegment ring;
    private Path ringPath;
    private RingConsumer requests;
    private RingProducer responses;
    private FutexWord clientSleeping;
    private int socket = -1;

    // Descriptors the client sent over its socket (DESCRIPTORS messages, protocol 1.2) and has not yet named
    // in a registration: numbered from 0 in the order received. IPC thread only.
    private final long[] heldNumbers = new long[io.kvtier.client.protocol.HandshakeDescriptor.DESCRIPTORS_MAX_HELD];
    private final int[] heldFds = new int[io.kvtier.client.protocol.HandshakeDescriptor.DESCRIPTORS_MAX_HELD];
    private int heldCount;
    private long descriptorsReceived;
    /** A DESCRIPTORS message still arriving: its bytes so far, and the descriptors that came with them. */
    final java.lang.foreign.MemorySegment socketMessage = java.lang.foreign.Arena.ofAuto().allocate(
        io.kvtier.client.protocol.HandshakeDescriptor.DESCRIPTORS_LENGTH, 8);
    int socketMessageFilled;
    final int[] socketMessageFds = new int[io.kvtier.nativeaccess.libc.UnixSockets.MAX_DESCRIPTORS];
    int socketMessageFdCount;

    // IPC thread only.
    State state = State.ACTIVE;
    int disconnectReason;
    long lastRequestId;
    long lastHeartbeat;
    long heartbeatChangedNanos;
    long responseBlockedSinceNanos;
    long lastRequestNanos;

    /**
     * @param maxKeys       slots granted
     * @param namespaceTags the tags of the namespaces the HELLO named, in order
     * @param pid           the client's process id
     * @param minorVersion  the HELLO's Minor Version: operations of later minor versions are unknown to it
     * @param peerUid       the peer's uid (SO_PEERCRED), whose files a HOST_FILE registration may name
     * @param ringCapacity  the client's Ring Capacity
     */
    RemoteClient(final int maxKeys, final long[] namespaceTags, final int pid, final int minorVersion, final int peerUid, final int ringCapacity)
    {
        this.maxKeys = maxKeys;
        this.minorVersion = minorVersion;
        this.peerUid = peerUid;
        this.maxMessageLength = io.kvtier.client.protocol.RequestDescriptor.maxMessageLength(maxKeys, ringCapacity);
        this.namespaceCount = namespaceTags.length;
        this.namespaceTags = namespaceTags;
        this.pid = pid;
        // Every slot is a position of the chain from the start: requests write keys into any run of them.
        this.keys = new PageKeyChain(maxKeys);
        for (int i = 0; i < maxKeys; i++)
        {
            keys.add(0, 0);
        }
        this.lengths = new int[maxKeys];
        this.statuses = new byte[maxKeys];
        this.pageIds = new int[maxKeys];
        this.generations = new int[maxKeys];
        this.keyed = new boolean[maxKeys];
        java.util.Arrays.fill(pageIds, -1);
    }

    /** Maps the client's rings once its ring file exists. */
    void attach(final Arena ringArena, final MemorySegment ringFile, final Path path, final int ringCapacity, final int socketFd)
    {
        this.arena = ringArena;
        this.ring = ringFile;
        this.ringPath = path;
        this.socket = socketFd;
        this.requests = new RingConsumer(ringFile, RingFileDescriptor.requestRingOffset(), ringCapacity,
            RingFileDescriptor.REQUEST_TAIL_OFFSET, RingFileDescriptor.REQUEST_HEAD_OFFSET);
        this.responses = new RingProducer(ringFile, RingFileDescriptor.responseRingOffset(ringCapacity), ringCapacity,
            RingFileDescriptor.RESPONSE_TAIL_OFFSET, RingFileDescriptor.RESPONSE_HEAD_OFFSET);
        this.clientSleeping = new FutexWord(ringFile, RingFileDescriptor.CLIENT_SLEEPING_OFFSET);
    }

    int maxKeys()
    {
        return maxKeys;
    }

    int namespaceCount()
    {
        return namespaceCount;
    }

    /** @return the HELLO's Minor Version */
    int minorVersion()
    {
        return minorVersion;
    }

    /** @return whether the session passes descriptors over the socket (both sides at minor version 2 or later) */
    boolean passesDescriptors()
    {
        return minorVersion >= io.kvtier.client.protocol.HandshakeDescriptor.DESCRIPTORS_MINOR_VERSION;
    }

    /** IPC thread: slots {@code [first, first + count)} now hold keys a request wrote. */
    void markKeyed(final int first, final int count)
    {
        java.util.Arrays.fill(keyed, first, first + count, true);
    }

    /** @return whether every slot of {@code [first, first + count)} holds a key a request wrote (IPC thread) */
    boolean keyed(final int first, final int count)
    {
        for (int i = first; i < first + count; i++)
        {
            if (!keyed[i])
            {
                return false;
            }
        }
        return true;
    }

    /** @return the peer's uid, from SO_PEERCRED */
    int peerUid()
    {
        return peerUid;
    }

    /**
     * IPC thread: keeps a descriptor the client sent, under the next number.
     *
     * @return false when the client already holds the most it may (the caller closes the descriptor)
     */
    boolean holdDescriptor(final int fd)
    {
        if (heldCount == heldFds.length)
        {
            return false;
        }
        heldNumbers[heldCount] = descriptorsReceived++;
        heldFds[heldCount++] = fd;
        return true;
    }

    /**
     * IPC thread: takes the descriptor the client sent under {@code number} out of what it holds.
     *
     * @return the descriptor, now the caller's, or -1 when none was received under that number (or it was taken)
     */
    int takeDescriptor(final long number)
    {
        for (int i = 0; i < heldCount; i++)
        {
            if (heldNumbers[i] == number)
            {
                final int fd = heldFds[i];
                heldCount--;
                heldNumbers[i] = heldNumbers[heldCount];
                heldFds[i] = heldFds[heldCount];
                return fd;
            }
        }
        return -1;
    }

    /** @return descriptors held, to close when the client ends (IPC thread) */
    int heldDescriptorCount()
    {
        return heldCount;
    }

    /** @return the i-th descriptor held */
    int heldDescriptor(final int i)
    {
        return heldFds[i];
    }

    /** Forgets every held descriptor: the caller has closed them. */
    void clearHeldDescriptors()
    {
        heldCount = 0;
    }

    /** @return Max Message Length as WELCOME granted it */
    int maxMessageLength()
    {
        return maxMessageLength;
    }

    /** @return the KV buffers the client registered, made at its first registration */
    ClientKvBuffers kvBuffers()
    {
        if (kvBuffers == null)
        {
            kvBuffers = new ClientKvBuffers();
        }
        return kvBuffers;
    }

    /** @return whether the client registered any KV buffers (without making the holder) */
    boolean hasKvBuffers()
    {
        return kvBuffers != null;
    }

    /**
     * IPC thread: copies a device copy's body out of the ring (the client may rewrite the record once
     * the request is taken), so the device thread reads only values the IPC thread took.
     */
    void takeCopyEntries(final io.kvtier.client.protocol.RequestDecoder request, final int first, final int count)
    {
        if (copyBlocks == null)
        {
            copyBlocks = new int[maxKeys];
            copyTokens = new int[maxKeys];
            copyOutcomes = new byte[maxKeys];
        }
        copyLayoutId = request.layoutId();
        for (int i = 0; i < count; i++)
        {
            copyBlocks[first + i] = request.copyBlock(i);
            copyTokens[first + i] = request.copyValidTokens(i);
        }
    }

    /**
     * IPC thread: copies a REGISTER_KV record out of the engine's copy of the request, for the device
     * thread, with the descriptors its HOST_FD allocations name (-1 where none was received).
     */
    void takeRegisterRecord(final MemorySegment record, final long offset, final int length, final int[] descriptors)
    {
        registerRecord = new byte[length];
        MemorySegment.copy(record, java.lang.foreign.ValueLayout.JAVA_BYTE, offset, registerRecord, 0, length);
        registerDescriptors = descriptors;
    }

    /**
     * @return per allocation of the REGISTER_KV taken, the descriptor a HOST_FD allocation names (the
     *         device thread's to close), -1 where none; null for other handle kinds
     */
    int[] registerDescriptors()
    {
        return registerDescriptors;
    }

    /** @return the REGISTER_KV record taken, a copy the client cannot change */
    byte[] registerRecord()
    {
        return registerRecord;
    }

    int copyLayoutId()
    {
        return copyLayoutId;
    }

    int[] copyBlocks()
    {
        return copyBlocks;
    }

    int[] copyTokens()
    {
        return copyTokens;
    }

    /** @return per slot, what a DEVICE_LOAD did ({@link io.kvtier.client.protocol.PageEntryStatus}) */
    byte[] copyOutcomes()
    {
        return copyOutcomes;
    }

    /** @return the Type of the request in flight */
    int requestType()
    {
        return requestType;
    }

    int pid()
    {
        return pid;
    }

    Arena arena()
    {
        return arena;
    }

    MemorySegment ring()
    {
        return ring;
    }

    Path ringPath()
    {
        return ringPath;
    }

    RingConsumer requests()
    {
        return requests;
    }

    RingProducer responses()
    {
        return responses;
    }

    FutexWord clientSleeping()
    {
        return clientSleeping;
    }

    /** @return the client's socket, or -1 once closed */
    int socket()
    {
        return socket;
    }

    /** The socket was closed. */
    void socketClosed()
    {
        socket = -1;
    }

    /** @return whether a request (or an internal operation) is with the engine thread */
    boolean inFlightAcquire()
    {
        return (int)IN_FLIGHT.getAcquire(this) != 0;
    }

    /** @return the outcome of the last internal operation (OPEN, KEEP_ALIVE, DISCONNECT) */
    ErrorCode internalOutcome()
    {
        return internalOutcome;
    }

    /** @return whether the engine thread found no room for a response (the client moved its Head back) */
    boolean responseLost()
    {
        return responseLost;
    }

    /** @return the client's heartbeat, read opaque: only whether it changes matters */
    long clientHeartbeatOpaque()
    {
        return (long)LittleEndian.LONG_HANDLE.getOpaque(ring, (long)RingFileDescriptor.CLIENT_HEARTBEAT_OFFSET);
    }

    /** Writes why the engine dropped the client (release), then wakes it if it sleeps. */
    void disconnectReasonRelease(final int reason)
    {
        LittleEndian.INT_HANDLE.setRelease(ring, (long)RingFileDescriptor.DISCONNECT_REASON_OFFSET, reason);
        IdleStrategy.wake(clientSleeping);
    }

    /**
     * Hands a request to the engine thread: what {@link #complete} will answer. IPC thread.
     *
     * @param op    the engine operation (a {@link io.kvtier.client.protocol.MessageType} or {@link InternalOp} code)
     * @param type  the protocol's Type to answer with, 0 for an internal operation that gets no response
     * @param reqId the request id to echo
     * @param first first slot
     * @param count slots
     */
    void beginRequest(final int op, final int type, final long reqId, final int first, final int count)
    {
        requestOp = op;
        requestType = type;
        requestId = reqId;
        requestFirst = first;
        requestCount = count;
        internalOutcome = null;
        answerInternalError = false;
        withEngine = true;
        IN_FLIGHT.setRelease(this, 1);
    }

    /**
     * Names the namespace of the next request: call before {@link #beginRequest}.
     *
     * @param index a validated Namespace Index (0 when the HELLO named none)
     */
    void requestNamespace(final int index)
    {
        requestTag = namespaceCount == 0 ? 0 : namespaceTags[index];
    }

    @Override
    public long namespaceTag()
    {
        return requestTag;
    }

    /**
     * Names what the next request asks beyond its slots: call before {@link #beginRequest}.
     *
     * @param reserveLimit a LOOKUP_AND_LOCK's validated Reserve Limit ({@code RESERVE_ALL} for any other request)
     * @param backup       whether a COMMIT_AND_RELEASE carries the BACKUP flag
     */
    void requestArguments(final int reserveLimit, final boolean backup)
    {
        requestReserveLimit = reserveLimit;
        requestBackup = backup;
    }

    @Override
    public int reserveLimit()
    {
        return requestReserveLimit;
    }

    @Override
    public boolean backupOnCommit()
    {
        return requestBackup;
    }

    /** @return the engine operation of the request in flight (a COMMIT or a COMMIT_AND_RELEASE, for the sealer) */
    int requestOp()
    {
        return requestOp;
    }

    /** @return the first slot of the request in flight */
    int requestFirst()
    {
        return requestFirst;
    }

    /** @return the slots of the request in flight */
    int requestCount()
    {
        return requestCount;
    }

    /**
     * The request just begun goes to the sealer or the device thread, which touch the client until they
     * answer: it cannot be cancelled, only waited for. Call after {@link #beginRequest}, before handing it on.
     */
    void servedOffEngine()
    {
        withEngine = false;
    }

    /**
     * @return whether the request in flight (if any) waits on the engine thread alone, so that the engine,
     *         on that thread, may end the client without waiting for it: the engine ignores what a
     *         cancelled request was waiting for once the client's record moved on
     */
    boolean requestWaitsOnEngine()
    {
        return withEngine;
    }

    /**
     * The request failed where it was being served (a device copy faulted): whatever the engine does
     * with its slots (a failed save's reservations are given back), it is answered INTERNAL_ERROR.
     */
    void answerInternalError()
    {
        answerInternalError = true;
    }

    /** The engine refused the publication (it stopped): the request is not in flight after all. */
    void abandonRequest()
    {
        IN_FLIGHT.setRelease(this, 0);
    }

    /**
     * Answers a request on the IPC thread (an error, STATS): only while none is in flight, and after
     * checking there is room.
     *
     * @return the encoder, wrapped on the claimed record; then {@link #publishResponse()}
     */
    ResponseEncoder claimResponse(final int type, final int length)
    {
        final long offset = responses.tryClaim(type, length);
        if (offset < 0)
        {
            return null;
        }
        return responseEncoder.wrap(ring, offset);
    }

    /** Publishes the claimed response (Response Tail, release) and wakes the client if it sleeps. */
    void publishResponse()
    {
        responses.commitRelease();
        IdleStrategy.wake(clientSleeping);
    }

    /**
     * @param type  a request's Type
     * @param count its Count
     * @return the Length of its response
     */
    static int responseLength(final int type, final int count, final int statsCount)
    {
        return type == io.kvtier.client.protocol.MessageType.STATS ? ResponseDescriptor.statsLength(statsCount) : ResponseDescriptor.length(count);
    }

    @Override
    public int clientId()
    {
        return id;
    }

    @Override
    public void clientId(final int clientId)
    {
        this.id = clientId;
    }

    @Override
    public boolean isExpired()
    {
        return expired;
    }

    @Override
    public void expired()
    {
        expired = true;
    }

    @Override
    public PageKeyChain keys()
    {
        return keys;
    }

    @Override
    public int[] lengths()
    {
        return lengths;
    }

    @Override
    public byte[] statuses()
    {
        return statuses;
    }

    @Override
    public int[] pageIds()
    {
        return pageIds;
    }

    @Override
    public int[] generations()
    {
        return generations;
    }

    /**
     * Engine thread: encodes the response from the per-slot arrays into the response ring and wakes the
     * client; an internal operation only records its outcome. Allocation-free, no lock: the IPC thread
     * made sure the ring has room before publishing the request.
     */
    @Override
    public void complete(final ErrorCode status, final int resultCount, final int l2Pages, final int l3Pages, final int fromPool, final int fromL3)
    {
        completeWith(status, resultCount, l2Pages, l3Pages, fromPool, fromL3, statuses);
    }

    /**
     * Device thread: answers a DEVICE_LOAD, whose entries carry what the copy did for each slot while
     * the slot keeps its pin.
     *
     * @param copied the slots copied
     */
    void completeCopy(final int copied)
    {
        completeWith(ErrorCode.OK, copied, 0, 0, 0, 0, copyOutcomes);
    }

    private void completeWith(final ErrorCode status, final int resultCount, final int l2Pages, final int l3Pages, final int fromPool,
                              final int fromL3, final byte[] entryStatuses)
    {
        if (requestType == 0)
        {
            internalOutcome = status;
            IN_FLIGHT.setRelease(this, 0);
            return;
        }
        final int code = answerInternalError && status == ErrorCode.OK ? ErrorCode.INTERNAL_ERROR.code() : status.code();
        final boolean ok = code == ErrorCode.OK.code();
        final int entries = ok && requestOp != MessageType.FLUSH && requestOp != MessageType.CLOSE ? requestCount : 0;
        final int length = ResponseDescriptor.length(entries);
        final long offset = responses.tryClaim(requestType, length);
        if (offset < 0)
        {
            responseLost = true;
        }
        else
        {
            // A refusal carries no counts (a REGISTER_KV refused carries its detail in Result Count).
            final int result = ok || requestType == io.kvtier.client.protocol.MessageType.REGISTER_KV ? resultCount : 0;
            responseEncoder.wrap(ring, offset).header(length, requestType, requestId, code, result, ok ? requestFirst : 0, entries,
                ok ? l2Pages : 0, ok ? l3Pages : 0, ok ? fromPool : 0, ok ? fromL3 : 0).entries(requestFirst, entries, pageIds, generations, entryStatuses);
            responses.commitRelease();
            IdleStrategy.wake(clientSleeping);
        }
        IN_FLIGHT.setRelease(this, 0);
    }
}
