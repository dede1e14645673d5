package io.kvtier.client;

import io.kvtier.client.protocol.DeviceRequestDescriptor;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.client.protocol.RequestDescriptor;
import io.kvtier.client.protocol.RequestEncoder;
import io.kvtier.client.protocol.ResponseDecoder;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayDeque;

/**
 * A process's connection to a running kvtier engine (docs/ipc-protocol.md), for an inference engine:
 * look keys up, pin cached pages and read them in place, reserve pages, write them in place and commit
 * them. Pins and reservations are leases closed with try-with-resources, so none outlives its use:
 *
 * <pre>{@code
 * try (KvtierClient client = KvtierClient.connect(socket, ClientOptions.of(4096, namespace))) {
 *     PageKeyChain keys = new PageKeyChain(4096).compute(namespace, tokens, n, 16, false);
 *     try (PinnedPages cached = client.acquire(keys)) { ... cached.page(i) ... }
 *     try (ReservedPages fresh = client.reserve(keys, cached, keys.size() - cached)) { ...; fresh.commit(pageSize); }
 * }
 * }</pre>
 *
 * <p>Each request takes a run of the client's slots (Max Keys of them) for its keys: a lease keeps its
 * run until closed, the other requests give theirs back when answered. After warm-up a request
 * allocates nothing: records are written and read in place, and leases and the lookup result are
 * reused. Not thread-safe: one client per thread (the rings are single-producer, single-consumer).
 * Errors are {@link KvtierException}s naming the protocol's error code.
 */
public final class KvtierClient implements AutoCloseable
{
    private final RequestChannel channel;
    private final int namespaceCount;
    private final SlotAllocator slots;
    private final int maxKeysPerRequest;
    private final MemorySegment pool;
    private final int pageSize;
    private final long dataOffset;
    private final long frameLength;
    private final LookupResult lookup = new LookupResult();
    private final ArrayDeque<PinnedPages> idlePinned = new ArrayDeque<>();
    private final ArrayDeque<ReservedPages> idleReserved = new ArrayDeque<>();
    private final ArrayDeque<LockedPages> idleLocked = new ArrayDeque<>();
    private boolean closed;

    KvtierClient(final RequestChannel channel, final int namespaceCount)
    {
        this.channel = channel;
        this.namespaceCount = namespaceCount;
        this.slots = new SlotAllocator(channel.maxKeys());
        // A request's keys must fit both its slots and the engine's longest record.
        this.maxKeysPerRequest = Math.min(channel.maxKeys(),
            (channel.maxMessageLength() - RequestDescriptor.HEADER_LENGTH) / RequestDescriptor.KEY_LENGTH);
        this.pool = channel.pool();
        this.pageSize = channel.pageSize();
        this.dataOffset = channel.dataOffset();
        this.frameLength = channel.frameLength();
    }

    /**
     * Connects to the engine listening on {@code socketPath} ({@code ipc.socket-path}, by default
     * {@code <pool.path>.sock}), and maps its pool and this client's rings.
     *
     * @param socketPath the engine's socket
     * @param options    namespaces and slots
     * @return the connected client
     * @throws IOException     if the socket or the shared files cannot be reached
     * @throws KvtierException if the engine refuses the client (NOT_ALLOWED, TOO_MANY_CLIENTS, VERSION, ...)
     */
    public static KvtierClient connect(final Path socketPath, final ClientOptions options) throws IOException
    {
        return connect(socketPath, options, io.kvtier.client.protocol.IdleStrategy.CLIENT_DEFAULT);
    }

    /**
     * Connects as {@link #connect(Path, ClientOptions)} does, waiting for answers as {@code idleKind} says.
     *
     * @param socketPath the engine's socket
     * @param options    namespaces and slots
     * @param idleKind   how the client's thread waits for an answer: {@code AWAKE} (the default), {@code BACKOFF},
     *                   {@code ADAPTIVE}, {@code TIMED}, {@code SPIN} or {@code SLEEP} (docs/ipc-protocol.md section 5)
     * @return the connected client
     * @throws IOException     if the socket or the shared files cannot be reached
     * @throws KvtierException if the engine refuses the client
     */
    public static KvtierClient connect(final Path socketPath, final ClientOptions options, final io.kvtier.client.protocol.IdleStrategy.Kind idleKind)
        throws IOException
    {
        return new KvtierClient(IpcChannel.connect(socketPath, options, idleKind), options.namespaces().size());
    }

    /**
     * How this client's thread has waited for answers so far: what {@code kvtier bench ipc} reports of
     * each side's sleeps and wakes. Allocates the record: not for a hot path.
     *
     * @return the counts
     */
    public io.kvtier.client.protocol.IdleStrategy.Counts waitCounts()
    {
        return channel.waitCounts();
    }

    /** @return the pool file, mapped: every page's bytes, read and written in place */
    public MemorySegment pool()
    {
        return pool;
    }

    /** @return payload bytes per page */
    public int pageSize()
    {
        return pageSize;
    }

    /** @return slots the engine granted: the most keys all open leases hold together */
    public int maxKeys()
    {
        return slots.slots();
    }

    /** @return the most keys one request carries (slots, and the engine's longest record) */
    public int maxKeysPerRequest()
    {
        return maxKeysPerRequest;
    }

    /** @return slots held by open leases */
    public int slotsInUse()
    {
        return slots.inUse();
    }

    /**
     * @param pageId a pool page
     * @return where its bytes start in {@link #pool()}
     */
    public long pageOffset(final int pageId)
    {
        return dataOffset + pageId * frameLength;
    }

    /**
     * LOOKUP of all the chain's keys in namespace 0.
     *
     * @param keys the chain
     * @return the counts, reused by the next lookup
     */
    public LookupResult lookup(final PageKeyChain keys)
    {
        return lookup(0, keys, 0, keys.size());
    }

    /**
     * LOOKUP: counts the longest prefix of the keys in the pool, then in L3 after it.
     *
     * @param namespaceIndex the keys' namespace, an index into {@link ClientOptions#namespaces()}
     * @param keys           the chain
     * @param from           first key to send
     * @param count          keys to send
     * @return the counts, reused by the next lookup
     */
    public LookupResult lookup(final int namespaceIndex, final PageKeyChain keys, final int from, final int count)
    {
        lookup.poolPages = 0;
        lookup.l3Pages = 0;
        if (count == 0)
        {
            return lookup;
        }
        final int first = takeSlots(count);
        try
        {
            final ResponseDecoder response = sendKeys(MessageType.LOOKUP, namespaceIndex, keys, from, count, first);
            lookup.poolPages = response.poolPages();
            lookup.l3Pages = response.l3Pages();
            channel.finish();
            return lookup;
        }
        finally
        {
            slots.free(first, count);
        }
    }

    /**
     * ACQUIRE of all the chain's keys in namespace 0.
     *
     * @param keys the chain
     * @return the pinned prefix; close it to release the pins
     */
    public PinnedPages acquire(final PageKeyChain keys)
    {
        return acquire(0, keys, 0, keys.size());
    }

    /**
     * ACQUIRE: pins the longest cached prefix of the keys, loading its L3 part into the pool and
     * verifying it; answers once the bytes are in place.
     *
     * @param namespaceIndex the keys' namespace
     * @param keys           the chain
     * @param from           first key to send
     * @param count          keys to send
     * @return the pinned prefix; close it to release the pins
     */
    public PinnedPages acquire(final int namespaceIndex, final PageKeyChain keys, final int from, final int count)
    {
        final PinnedPages lease = idlePinned.isEmpty() ? new PinnedPages(this, maxKeysPerRequest) : idlePinned.pop();
        lease.pinned = 0;
        lease.fromPool = 0;
        lease.fromL3 = 0;
        lease.start(namespaceIndex, count == 0 ? 0 : takeSlots(count), count);
        if (count == 0)
        {
            return lease;
        }
        try
        {
            final ResponseDecoder response = sendKeys(MessageType.ACQUIRE, namespaceIndex, keys, from, count, lease.firstSlot);
            lease.readEntries(response);
            lease.pinned = response.resultCount();
            lease.fromPool = response.fromPool();
            lease.fromL3 = response.fromL3();
            channel.finish();
            return lease;
        }
        catch (final RuntimeException | Error ex)
        {
            // the engine changed nothing: the slots hold no pins
            lease.open = false;
            recycle(lease);
            throw ex;
        }
    }

    /**
     * RESERVE of all the chain's keys in namespace 0.
     *
     * @param keys the chain
     * @return the reservations; commit them, or close to abort
     */
    public ReservedPages reserve(final PageKeyChain keys)
    {
        return reserve(0, keys, 0, keys.size());
    }

    /**
     * RESERVE in namespace 0.
     *
     * @param keys  the chain
     * @param from  first key to reserve (after the cached prefix, typically)
     * @param count keys to reserve
     * @return the reservations; commit them, or close to abort
     */
    public ReservedPages reserve(final PageKeyChain keys, final int from, final int count)
    {
        return reserve(0, keys, from, count);
    }

    /**
     * RESERVE: a page for each key to write, unless the pool holds it already (EXISTS) or another
     * client is writing it (BUSY).
     *
     * @param namespaceIndex the keys' namespace
     * @param keys           the chain
     * @param from           first key to reserve
     * @param count          keys to reserve
     * @return the reservations; commit them, or close to abort
     */
    public ReservedPages reserve(final int namespaceIndex, final PageKeyChain keys, final int from, final int count)
    {
        final ReservedPages lease = idleReserved.isEmpty() ? new ReservedPages(this, maxKeysPerRequest) : idleReserved.pop();
        lease.reserved = 0;
        lease.committed = false;
        lease.start(namespaceIndex, count == 0 ? 0 : takeSlots(count), count);
        if (count == 0)
        {
            return lease;
        }
        try
        {
            final ResponseDecoder response = sendKeys(MessageType.RESERVE, namespaceIndex, keys, from, count, lease.firstSlot);
            lease.readEntries(response);
            lease.reserved = response.resultCount();
            channel.finish();
            return lease;
        }
        catch (final RuntimeException | Error ex)
        {
            lease.open = false;
            recycle(lease);
            throw ex;
        }
    }

    /**
     * LOOKUP_AND_LOCK (protocol 1.3) of all the chain's keys in namespace 0, reserving pages for every key
     * after the cached prefix.
     *
     * @param keys the chain
     * @return the pinned prefix and the reservations; {@link LockedPages#commitAndRelease} them, or close to give them back
     */
    public LockedPages lookupAndLock(final PageKeyChain keys)
    {
        return lookupAndLock(0, keys, 0, keys.size(), RequestDescriptor.RESERVE_ALL);
    }

    /**
     * LOOKUP_AND_LOCK (protocol 1.3): pins the longest cached prefix of the keys as {@link #acquire} does,
     * then reserves pages for keys after it as {@link #reserve} does, at most {@code reserveLimit} of them,
     * in one round trip.
     *
     * @param namespaceIndex the keys' namespace
     * @param keys           the chain
     * @param from           first key to send
     * @param count          keys to send
     * @param reserveLimit   the most keys after the prefix to reserve pages for, 0..count, or {@link RequestDescriptor#RESERVE_ALL}
     * @return the pinned prefix and the reservations; {@link LockedPages#commitAndRelease} them, or close to give them back
     * @throws KvtierException UNKNOWN_TYPE from an engine before protocol 1.3
     */
    public LockedPages lookupAndLock(final int namespaceIndex, final PageKeyChain keys, final int from, final int count, final int reserveLimit)
    {
        if (reserveLimit < RequestDescriptor.RESERVE_ALL || reserveLimit > count)
        {
            throw new IllegalArgumentException("reserve limit " + reserveLimit + " must be from 0 to the count " + count + ", or -1 for all");
        }
        final LockedPages lease = idleLocked.isEmpty() ? new LockedPages(this, maxKeysPerRequest) : idleLocked.pop();
        lease.pinned = 0;
        lease.reserved = 0;
        lease.fromPool = 0;
        lease.fromL3 = 0;
        lease.released = 0;
        lease.committed = false;
        lease.start(namespaceIndex, count == 0 ? 0 : takeSlots(count), count);
        if (count == 0)
        {
            return lease;
        }
        try
        {
            final ResponseDecoder response = sendKeys(MessageType.LOOKUP_AND_LOCK, namespaceIndex, keys, from, count, lease.firstSlot, reserveLimit);
            lease.readEntries(response);
            lease.pinned = response.resultCount();
            lease.reserved = response.reservedPages();
            lease.fromPool = response.fromPool();
            lease.fromL3 = response.fromL3();
            channel.finish();
            return lease;
        }
        catch (final RuntimeException | Error ex)
        {
            // the engine changed nothing: the slots hold no pins and no reservations
            lease.open = false;
            recycle(lease);
            throw ex;
        }
    }

    /**
     * PREFETCH: starts loading the L3 part of the keys' prefix into the pool.
     *
     * @param namespaceIndex the keys' namespace
     * @param keys           the chain
     * @param from           first key
     * @param count          keys
     * @return the engine's Result Count (pages it set loading)
     */
    public int prefetch(final int namespaceIndex, final PageKeyChain keys, final int from, final int count)
    {
        return keysOnly(MessageType.PREFETCH, namespaceIndex, keys, from, count);
    }

    /**
     * BACKUP: copies the keys' pool pages to L3; {@link #flush()} waits for the copies.
     *
     * @param namespaceIndex the keys' namespace
     * @param keys           the chain
     * @param from           first key
     * @param count          keys
     * @return the engine's Result Count (backups started)
     */
    public int backup(final int namespaceIndex, final PageKeyChain keys, final int from, final int count)
    {
        return keysOnly(MessageType.BACKUP, namespaceIndex, keys, from, count);
    }

    /**
     * EVICT (admin): drops the keys' unpinned pages from the pool.
     *
     * @param namespaceIndex the keys' namespace
     * @param keys           the chain
     * @param from           first key
     * @param count          keys
     * @return the engine's Result Count (pages dropped)
     */
    public int evict(final int namespaceIndex, final PageKeyChain keys, final int from, final int count)
    {
        return keysOnly(MessageType.EVICT, namespaceIndex, keys, from, count);
    }

    /** FLUSH: returns once every backup started so far has ended. */
    public void flush()
    {
        check(MessageType.FLUSH, channel.begin(MessageType.FLUSH, 0, 0, 0, 0, 0));
        channel.finish();
    }

    /**
     * STATS: the engine's counters, in the order of the pool's counters region (whose descriptor
     * names them).
     *
     * @return counter values (allocates: not a per-request call)
     */
    public long[] stats()
    {
        final ResponseDecoder response = check(MessageType.STATS, channel.begin(MessageType.STATS, 0, 0, 0, 0, 0));
        final long[] values = new long[response.statsCount()];
        for (int i = 0; i < values.length; i++)
        {
            values[i] = response.statsValue(i);
        }
        channel.finish();
        return values;
    }

    /** Ends the client: the engine gives back every pin and reservation still held. */
    @Override
    public void close()
    {
        if (!closed)
        {
            closed = true;
            channel.close();
        }
    }

    // --- leases

    void release(final PinnedPages lease)
    {
        try
        {
            if (lease.pinned > 0)
            {
                check(MessageType.RELEASE, channel.begin(MessageType.RELEASE, 0, lease.firstSlot, lease.count, lease.namespaceIndex, 0));
                channel.finish();
            }
        }
        finally
        {
            recycle(lease);
        }
    }

    int commit(final ReservedPages lease, final int[] lengths, final int length)
    {
        if (!lease.open)
        {
            throw new IllegalStateException("the reservation is closed");
        }
        if (lease.committed)
        {
            throw new IllegalStateException("the reservation is already committed");
        }
        if (lease.reserved == 0)
        {
            lease.committed = true;
            return 0;
        }
        final ResponseDecoder response = sendCommitLengths(MessageType.COMMIT, lease, lengths, length, 0);
        lease.committed = true;
        final int committed = response.resultCount();
        channel.finish();
        return committed;
    }

    int commitAndRelease(final LockedPages lease, final int[] lengths, final int length, final boolean backup)
    {
        if (!lease.open)
        {
            throw new IllegalStateException("the lock is closed");
        }
        if (lease.committed)
        {
            throw new IllegalStateException("the lock is already committed and released");
        }
        if (lease.count == 0)
        {
            lease.committed = true;
            return 0;
        }
        final ResponseDecoder response = sendCommitLengths(MessageType.COMMIT_AND_RELEASE, lease, lengths, length,
            backup ? RequestDescriptor.FLAG_BACKUP : 0);
        lease.committed = true;
        lease.released = response.pinsReleased();
        final int committed = response.resultCount();
        channel.finish();
        return committed;
    }

    /**
     * Sends a COMMIT or COMMIT_AND_RELEASE of a lease's slots with each reserved page's payload length, and reads
     * the answer's entries into the lease; the caller finishes the channel.
     */
    private ResponseDecoder sendCommitLengths(final int type, final SlotLease lease, final int[] lengths, final int length, final int flags)
    {
        final RequestEncoder request = channel.begin(type, lease.count * RequestDescriptor.COMMIT_LENGTH_LENGTH, lease.firstSlot, lease.count,
            lease.namespaceIndex, flags);
        for (int i = 0; i < lease.count; i++)
        {
            // Only a reserved slot's length is read (the others are answered NONE, or are pins); send a valid one anyway.
            final boolean reserved = lease.statuses[i] == PageEntryStatus.RESERVED;
            request.commitLength(i, reserved ? (lengths == null ? length : lengths[i]) : pageSize);
        }
        final ResponseDecoder response = check(type, request);
        lease.readEntries(response);
        return response;
    }

    void finishLock(final LockedPages lease)
    {
        try
        {
            if (!lease.committed && lease.reserved > 0)
            {
                check(MessageType.ABORT, channel.begin(MessageType.ABORT, 0, lease.firstSlot, lease.count, lease.namespaceIndex, 0));
                channel.finish();
            }
            if (!lease.committed && lease.pinned > 0)
            {
                check(MessageType.RELEASE, channel.begin(MessageType.RELEASE, 0, lease.firstSlot, lease.count, lease.namespaceIndex, 0));
                channel.finish();
            }
        }
        finally
        {
            recycle(lease);
        }
    }

    /**
     * REGISTER_KV (protocol 1.1): tells the engine where this process's KV blocks are, so that
     * {@link PinnedPages#loadInto} and {@link ReservedPages#saveFrom} have the engine copy them.
     *
     * @param registration the buffers and their layout
     * @return the Layout Id
     * @throws KvtierException INVALID naming the refusal detail (DeviceRequestDescriptor.DETAIL_*) when the engine refuses it
     */
    public int registerKv(final KvBufferRegistration registration)
    {
        final int allocations = registration.offsets().length;
        final RequestEncoder request = channel.begin(MessageType.REGISTER_KV,
            (int)DeviceRequestDescriptor.registerLength(allocations) - RequestDescriptor.HEADER_LENGTH, 0, 0, 0, 0);
        request.registerKv(registration.handleKind(), registration.device(), registration.arrangement(), registration.wireShape(), allocations);
        for (int i = 0; i < allocations; i++)
        {
            request.allocation(i, registration.offsets()[i], registration.handles()[i]);
        }
        final ResponseDecoder response = channel.sendAndAwait();
        final int status = response.status();
        final int result = response.resultCount();
        channel.finish();
        if (status != ErrorCode.OK.code())
        {
            throw new KvtierException(status, MessageType.REGISTER_KV,
                status == ErrorCode.INVALID.code() ? "refused for " + DeviceRequestDescriptor.detailName(result) + " (the engine's log says more)" : null);
        }
        return result;
    }

    /** DEVICE_LOAD or DEVICE_SAVE of a lease's slots: the answer's entries go to {@code outcomes}, Result Count is returned. */
    int deviceCopy(final SlotLease lease, final int type, final int layoutId, final int[] blocks, final int[] validTokens, final int[] outcomes)
    {
        if (!lease.open)
        {
            throw new IllegalStateException("the lease is closed");
        }
        if (blocks.length < lease.count || validTokens.length < lease.count)
        {
            throw new IllegalArgumentException(blocks.length + " blocks and " + validTokens.length + " token counts for " + lease.count + " keys");
        }
        final RequestEncoder request = channel.begin(type, (int)DeviceRequestDescriptor.copyLength(lease.count) - RequestDescriptor.HEADER_LENGTH,
            lease.firstSlot, lease.count, lease.namespaceIndex, 0);
        request.layoutId(layoutId);
        for (int i = 0; i < lease.count; i++)
        {
            request.copyEntry(i, blocks[i], validTokens[i]);
        }
        final ResponseDecoder response = check(type, request);
        final int entries = Math.min(response.entryCount(), lease.count);
        for (int i = 0; i < entries; i++)
        {
            outcomes[i] = response.entryStatus(i);
        }
        final int result = response.resultCount();
        channel.finish();
        return result;
    }

    void finishReservation(final ReservedPages lease)
    {
        try
        {
            if (!lease.committed && lease.reserved > 0)
            {
                check(MessageType.ABORT, channel.begin(MessageType.ABORT, 0, lease.firstSlot, lease.count, lease.namespaceIndex, 0));
                channel.finish();
            }
        }
        finally
        {
            recycle(lease);
        }
    }

    private void recycle(final PinnedPages lease)
    {
        if (lease.count > 0)
        {
            slots.free(lease.firstSlot, lease.count);
        }
        lease.count = 0;
        idlePinned.push(lease);
    }

    private void recycle(final ReservedPages lease)
    {
        if (lease.count > 0)
        {
            slots.free(lease.firstSlot, lease.count);
        }
        lease.count = 0;
        idleReserved.push(lease);
    }

    private void recycle(final LockedPages lease)
    {
        if (lease.count > 0)
        {
            slots.free(lease.firstSlot, lease.count);
        }
        lease.count = 0;
        idleLocked.push(lease);
    }

    // --- requests

    private int keysOnly(final int type, final int namespaceIndex, final PageKeyChain keys, final int from, final int count)
    {
        if (count == 0)
        {
            return 0;
        }
        final int first = takeSlots(count);
        try
        {
            final int result = sendKeys(type, namespaceIndex, keys, from, count, first).resultCount();
            channel.finish();
            return result;
        }
        finally
        {
            slots.free(first, count);
        }
    }

    private int takeSlots(final int count)
    {
        if (closed)
        {
            throw new IllegalStateException("the client is closed");
        }
        if (count < 0 || count > maxKeysPerRequest)
        {
            throw new IllegalArgumentException(count + " keys in one request; this client sends 0.." + maxKeysPerRequest);
        }
        final int first = slots.allocate(count);
        if (first < 0)
        {
            throw new IllegalStateException("no run of " + count + " free slots of " + slots.slots() + " (" + slots.inUse()
                + " held by open leases): close leases, or connect with more maxKeys");
        }
        return first;
    }

    private ResponseDecoder sendKeys(final int type, final int namespaceIndex, final PageKeyChain keys, final int from, final int count,
                                     final int firstSlot)
    {
        return sendKeys(type, namespaceIndex, keys, from, count, firstSlot, 0);
    }

    /** Sends a keyed request whose header's word at offset 28 is {@code reserveLimit} (a LOOKUP_AND_LOCK's; 0 for any other). */
    private ResponseDecoder sendKeys(final int type, final int namespaceIndex, final PageKeyChain keys, final int from, final int count,
                                     final int firstSlot, final int reserveLimit)
    {
        if (from < 0 || from + count > keys.size())
        {
            throw new IndexOutOfBoundsException("keys " + from + ".." + (from + count) + " of a chain of " + keys.size());
        }
        if (namespaceIndex < 0 || namespaceIndex >= Math.max(1, namespaceCount))
        {
            throw new IllegalArgumentException("namespace index " + namespaceIndex + " of " + namespaceCount + " namespaces");
        }
        final RequestEncoder request = channel.begin(type, count * RequestDescriptor.KEY_LENGTH, firstSlot, count, namespaceIndex, 0);
        if (reserveLimit != 0)
        {
            request.reserveLimit(reserveLimit);
        }
        request.keys(keys, from, count);
        return check(type, request);
    }

    /** Sends the request begun last and checks its Status; on an error it is finished and thrown. */
    private ResponseDecoder check(final int type, final RequestEncoder ignored)
    {
        final ResponseDecoder response = channel.sendAndAwait();
        final int status = response.status();
        if (status != ErrorCode.OK.code())
        {
            channel.finish();
            throw new KvtierException(status, type, null);
        }
        return response;
    }
}
