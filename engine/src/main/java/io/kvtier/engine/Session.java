package io.kvtier.engine;

import io.kvtier.client.PageKeyChain;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.core.ClientPort;
import io.kvtier.engine.core.InternalOp;
import io.kvtier.engine.pool.PagePool;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * One in-process client of the engine: a key chain, per-key results, and one request at a time.
 *
 * <p>Typical use for one inference request:
 * <pre>{@code
 * session.keys().compute(rootHigh, rootLow, tokens, n, pageTokens, true);
 * int cached = session.acquire(0, session.keys().size());   // pool + L3 prefix, pinned, verified
 * ... read session.page(i) for i < cached ...
 * session.release();
 * int reserved = session.reserve(cached, session.keys().size() - cached);
 * ... write session.page(i) and session.payloadLength(i, bytes) for RESERVED keys ...
 * session.commit(cached, session.keys().size() - cached);
 * }</pre>
 *
 * <p>The same in two round trips instead of five, with {@link #lookupAndLock} and {@link #commitAndRelease}:
 * <pre>{@code
 * int cached = session.lookupAndLock(0, n, RequestDescriptor.RESERVE_ALL); // prefix pinned, the rest reserved
 * ... read session.page(i) for i < cached; write session.page(i) and payloadLength(i, bytes) where RESERVED ...
 * session.commitAndRelease(0, n, false);                                    // pins dropped, reservations committed
 * }</pre>
 *
 * <p>Requests travel through the engine's ring and wait by spinning, then parking; nothing is
 * allocated on the way. A session is not thread-safe: use one per thread, or per concurrent request.
 * Its pins and reservations are leased: after {@code lease.session-timeout} without a request
 * (or {@link #keepAlive()}), the engine reclaims them and the next request fails with
 * {@link ErrorCode#LEASE_EXPIRED}.
 */
public final class Session implements AutoCloseable, ClientPort
{
    private static final VarHandle DONE;
    private static final VarHandle WAITING;
    private static final int SPIN_TRIES = 20;
    private static final int YIELD_TRIES = 100;
    private static final long PARK_NANOS = 50_000;
    /** Spins for the engine's unpark once it claimed the wake-up, before yielding to it. */
    private static final int PERMIT_SPINS = 64;

    private static final int RUNNING = 0;
    private static final int PARKED = 1;
    /** The engine has claimed the wake-up of a parked client and is about to unpark it. */
    private static final int WAKING = 2;
    /** The engine's unpark has been made: its permit is the client's to take. */
    private static final int WOKEN = 3;

    static
    {
        try
        {
            DONE = MethodHandles.lookup().findVarHandle(Session.class, "done", int.class);
            WAITING = MethodHandles.lookup().findVarHandle(Session.class, "waiting", int.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final Engine engine;
    private final PagePool pool;
    private final PageKeyChain keys;

    // Written by the client before publishing; read by the engine thread.
    private final int[] lengths;

    // Written by the engine thread; read by the client after the request completes.
    private final int[] pageIds;
    private final int[] generations;
    private final byte[] status;
    private int resultCount;
    private int l2Pages;
    private int l3Pages;
    private int acquiredFromPool;
    private int acquiredFromL3;
    private int requestStatus;
    private int id;
    private volatile boolean expired;
    // The engine's take and answer of the request in flight (System.nanoTime), written before its completion is published.
    private long engineTakenNanos;
    private long engineAnsweredNanos;
    // A round trip's legs, summed over this session's requests: its publish to the engine's take, the take to the
    // answer, the answer to this thread seeing it. Plain fields of the session's own thread.
    private long legRequests;
    private long legToEngineNanos;
    private long legInEngineNanos;
    private long legBackNanos;

    // Completion handshake.
    @SuppressWarnings("unused")
    private volatile int done;
    @SuppressWarnings("unused")
    private volatile int waiting;
    private volatile Thread waiter;
    private boolean busy;
    private boolean closed;
    // Written by the client between requests; read by the engine thread when one begins.
    private long namespaceTag;
    private boolean scoped;
    private int reserveLimit = io.kvtier.client.protocol.RequestDescriptor.RESERVE_ALL;
    private boolean backupOnCommit;

    Session(final Engine engine, final PagePool pool, final int maxKeys)
    {
        this.engine = engine;
        this.pool = pool;
        this.keys = new PageKeyChain(maxKeys);
        this.lengths = new int[maxKeys];
        this.pageIds = new int[maxKeys];
        this.generations = new int[maxKeys];
        this.status = new byte[maxKeys];
        java.util.Arrays.fill(pageIds, -1);
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
    public int[] lengths()
    {
        return lengths;
    }

    @Override
    public byte[] statuses()
    {
        return status;
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

    @Override
    public long namespaceTag()
    {
        return namespaceTag;
    }

    @Override
    public boolean seesAllNamespaces()
    {
        return !scoped;
    }

    @Override
    public int reserveLimit()
    {
        return reserveLimit;
    }

    @Override
    public boolean backupOnCommit()
    {
        return backupOnCommit;
    }

    /**
     * Scopes the session's following requests to a namespace, as an IPC client's requests are
     * (docs/ipc-protocol.md section 8): pages it reserves carry the namespace's tag, so IPC clients of
     * that namespace are given them, and it is given only pages of that namespace. An unscoped session
     * (the default, or {@code null} here) is the engine's own trusted code: it is given pages of every
     * namespace, and the pages it writes carry no tag, which IPC clients naming a namespace are not given.
     *
     * @param namespace the namespace, or null for none
     * @return this
     */
    public Session scope(final io.kvtier.client.Namespace namespace)
    {
        scoped = namespace != null;
        namespaceTag = namespace == null ? 0 : namespace.tag();
        return this;
    }

    /** @return the key chain requests refer to, by index */
    @Override
    public PageKeyChain keys()
    {
        return keys;
    }

    /** @return the session's id, unique among open sessions */
    public int id()
    {
        return id;
    }

    /**
     * @param index a key's position
     * @return what the last request did for it
     */
    public int status(final int index)
    {
        return status[index];
    }

    /**
     * @param index a key held pinned or reserved
     * @return the page's payload, {@code pool.page-size} bytes, mapped from the shared pool
     * @throws IllegalStateException if the session holds no page for the key
     */
    public MemorySegment page(final int index)
    {
        final int s = status(index);
        if (!PageEntryStatus.isPinned(s) && s != PageEntryStatus.RESERVED)
        {
            throw new IllegalStateException("key " + index + " is " + PageEntryStatus.name(s) + ": only pinned or reserved pages can be accessed");
        }
        return pool.frames().payload(pageIds[index]);
    }

    /**
     * @param index a pinned key
     * @return the committed payload length of its page
     */
    public int payloadLength(final int index)
    {
        if (!PageEntryStatus.isPinned(status(index)))
        {
            throw new IllegalStateException("key " + index + " is " + PageEntryStatus.name(status(index)) + ", not pinned");
        }
        return pool.metadata().payloadLengthPlain(pageIds[index]);
    }

    /**
     * Sets how many payload bytes of a reserved page were written, before {@link #commit}.
     *
     * @param index  a reserved key
     * @param length bytes written, from 1 to the page size
     */
    public void payloadLength(final int index, final int length)
    {
        if (length < 1 || length > pool.pageSize())
        {
            throw new IllegalArgumentException("payload length " + length + " of key " + index + " must be from 1 to the page size " + pool.pageSize());
        }
        lengths[index] = length;
    }

    /**
     * @param index a key
     * @return the pool page id the session holds for it, or -1
     */
    public int pageId(final int index)
    {
        return pageIds[index];
    }

    /** @return leading pages of the last lookup already in the pool */
    public int l2Pages()
    {
        return l2Pages;
    }

    /** @return pages after those that the last lookup found in L3 (or loading) */
    public int l3Pages()
    {
        return l3Pages;
    }

    /** @return pages of the last acquire's prefix that were in the pool */
    public int acquiredFromPool()
    {
        return acquiredFromPool;
    }

    /**
     * @return pages of the last acquire's prefix that came from L3 and were verified: loaded for this
     *         acquire, or prefetched and first used by it
     */
    public int acquiredFromL3()
    {
        return acquiredFromL3;
    }

    /**
     * Counts the prefix of keys {@code [from, from + count)}: how many leading pages are in the pool and
     * how many more follow in L3. Depending on {@code policy.prefetch} it may also load the L3 part into
     * the pool, and wait for it. Probes L3 for keys the index does not know.
     *
     * @param from  first key
     * @param count keys
     * @return pool pages plus L3 pages of the prefix
     */
    public int lookup(final int from, final int count)
    {
        call(MessageType.LOOKUP, from, count);
        return l2Pages + l3Pages;
    }

    /**
     * Pins the longest available prefix of {@code [from, from + count)}, loading L3 pages into the
     * pool at their exact positions and verifying them. A page counts only once its bytes are in the
     * pool and verified; the prefix stops at the first key that is missing or fails.
     *
     * @param from  first key
     * @param count keys
     * @return pages pinned, all contiguous from {@code from}
     */
    public int acquire(final int from, final int count)
    {
        call(MessageType.ACQUIRE, from, count);
        return resultCount;
    }

    /**
     * Pins the longest available prefix of {@code [from, from + count)} as {@link #acquire} does (L3 pages
     * loaded and verified), then reserves pages for the keys after it as {@link #reserve} does, at most
     * {@code reserveLimit} of them, in one request. Keys after the prefix past the limit are
     * {@link PageEntryStatus#MISS}; those reserved {@link PageEntryStatus#RESERVED}, or EXISTS, BUSY or
     * POOL_FULL as a reserve says (a pool that fills midway leaves the reservations made and the rest
     * POOL_FULL). {@link #reservedPages()} says how many were reserved.
     *
     * @param from         first key
     * @param count        keys
     * @param reserveLimit the most keys after the prefix to reserve pages for, 0 to {@code count}, or
     *                     {@code RequestDescriptor.RESERVE_ALL}
     * @return pages pinned, all contiguous from {@code from}
     * @throws IllegalArgumentException if the limit is out of range
     * @throws IllegalStateException if a key of the range holds a reservation (commit or abort it first)
     */
    public int lookupAndLock(final int from, final int count, final int reserveLimit)
    {
        checkRange(from, count);
        if (reserveLimit < io.kvtier.client.protocol.RequestDescriptor.RESERVE_ALL || reserveLimit > count)
        {
            throw new IllegalArgumentException("reserve limit " + reserveLimit + " must be from 0 to the count " + count + ", or -1 for all");
        }
        for (int i = from; i < from + count; i++)
        {
            if (status[i] == PageEntryStatus.RESERVED)
            {
                throw new IllegalStateException("key " + i + " holds a reservation: commit or abort it before a lookupAndLock names it");
            }
        }
        this.reserveLimit = reserveLimit;
        call(MessageType.LOOKUP_AND_LOCK, from, count);
        return resultCount;
    }

    /** @return pages the last {@link #lookupAndLock} reserved after its prefix */
    public int reservedPages()
    {
        return l2Pages;
    }

    /**
     * Drops the pins of {@code [from, from + count)} and commits its reserved pages, as {@link #release(int, int)}
     * then {@link #commit} would, in one request: each reserved page needs its {@link #payloadLength(int, int)}.
     * {@link #releasedPins()} says how many pins were dropped.
     *
     * @param from   first key
     * @param count  keys
     * @param backup whether to copy each committed page to L3, as {@link #backup} would
     * @return pages committed
     */
    public int commitAndRelease(final int from, final int count, final boolean backup)
    {
        checkRange(from, count);
        checkCommitLengths(from, count);
        seal(from, count);
        this.backupOnCommit = backup;
        call(MessageType.COMMIT_AND_RELEASE, from, count);
        return resultCount;
    }

    /** @return pins the last {@link #commitAndRelease} dropped */
    public int releasedPins()
    {
        return l2Pages;
    }

    /** Drops every pin the session holds. */
    public void release()
    {
        release(0, keys.capacity());
    }

    /**
     * Drops the pins on keys {@code [from, from + count)}.
     *
     * @param from  first key
     * @param count keys
     */
    public void release(final int from, final int count)
    {
        call(MessageType.RELEASE, from, count);
    }

    /**
     * Reserves pages for keys {@code [from, from + count)} that the pool lacks. Keys already there are
     * {@link PageEntryStatus#EXISTS}; when no page can be freed the rest are {@link PageEntryStatus#POOL_FULL}.
     *
     * @param from  first key
     * @param count keys
     * @return pages reserved
     */
    public int reserve(final int from, final int count)
    {
        call(MessageType.RESERVE, from, count);
        return resultCount;
    }

    /**
     * Publishes the reserved pages of {@code [from, from + count)}: each gets its CRC32C and becomes
     * visible. A reservation that lapsed is {@link PageEntryStatus#EXPIRED} and never visible.
     *
     * @param from  first key
     * @param count keys
     * @return pages committed
     */
    public int commit(final int from, final int count)
    {
        checkRange(from, count);
        checkCommitLengths(from, count);
        seal(from, count);
        call(MessageType.COMMIT, from, count);
        return resultCount;
    }

    /** Every reserved key of the range has a payload length set: a commit of one without would fail as INVALID. */
    private void checkCommitLengths(final int from, final int count)
    {
        for (int i = from; i < from + count; i++)
        {
            if (status[i] == PageEntryStatus.RESERVED && (lengths[i] < 1 || lengths[i] > pool.pageSize()))
            {
                throw new IllegalArgumentException("key " + i + " is reserved but its payload length " + lengths[i]
                    + " is not from 1 to " + pool.pageSize() + "; call payloadLength(" + i + ", bytes) first");
            }
        }
    }

    /**
     * Seals each reserved page on this thread (zeroes the unused tail, CRC32C, trailer), so that the
     * engine's single thread does no per-byte work: a client committing large pages then slows no
     * other client down, and commits of several clients checksum in parallel. A page whose reservation
     * is no longer this session's (it lapsed) is left alone; the engine answers it EXPIRED.
     */
    private void seal(final int from, final int count)
    {
        for (int i = from; i < from + count; i++)
        {
            if (status[i] != PageEntryStatus.RESERVED)
            {
                continue;
            }
            final int page = pageIds[i];
            final long word = pool.metadata().stateWordAcquire(page);
            if (io.kvtier.client.pool.PageStateWord.state(word) == io.kvtier.client.pool.PageStateWord.WRITING
                && io.kvtier.client.pool.PageStateWord.generation(word) == generations[i] && pool.metadata().ownerPlain(page) == id)
            {
                pool.frames().seal(page, pool.metadata().keyHighPlain(page), pool.metadata().keyLowPlain(page), lengths[i]);
            }
        }
    }

    /**
     * Gives back the reserved pages of {@code [from, from + count)} unwritten; they never become visible.
     *
     * @param from  first key
     * @param count keys
     */
    public void abort(final int from, final int count)
    {
        call(MessageType.ABORT, from, count);
    }

    /**
     * Starts loading the L3 part of the prefix into the pool and returns at once.
     *
     * @param from  first key
     * @param count keys
     * @return pages whose load was started
     */
    public int prefetch(final int from, final int count)
    {
        call(MessageType.PREFETCH, from, count);
        return resultCount;
    }

    /**
     * Starts copying pool pages of {@code [from, from + count)} that L3 lacks to L3.
     *
     * @param from  first key
     * @param count keys
     * @return backups started
     */
    public int backup(final int from, final int count)
    {
        call(MessageType.BACKUP, from, count);
        return resultCount;
    }

    /**
     * Waits until every backup started so far, by anyone, has ended, or {@code l3.io-timeout} at most:
     * a tier that never ends a backup does not hold its caller (nor, for a client of another process,
     * the pins and reservations it would lose if it died meanwhile) for longer.
     *
     * @return backups not yet ended (in flight or queued) when it gave up at {@code l3.io-timeout}; 0
     *         when every one ended
     */
    public int flush()
    {
        call(MessageType.FLUSH, 0, 0);
        return resultCount;
    }

    /**
     * Drops the unpinned pool pages of keys {@code [from, from + count)} (an operator action).
     *
     * @param from  first key
     * @param count keys
     * @return pages evicted
     */
    public int evict(final int from, final int count)
    {
        call(MessageType.EVICT, from, count);
        return resultCount;
    }

    /** Renews the lease without doing anything else. */
    public void keepAlive()
    {
        call(InternalOp.KEEP_ALIVE, 0, 0);
    }

    /** Drops the session's pins and reservations and unregisters it. Idempotent. */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        try
        {
            if (!engine.isClosed())
            {
                call(MessageType.CLOSE, 0, 0);
            }
        }
        catch (final SessionException ex)
        {
            // Already expired or closing: the engine reclaims what the session held either way.
        }
        finally
        {
            closed = true;
        }
    }

    void open()
    {
        call(InternalOp.OPEN, 0, 0);
    }

    private void checkRange(final int from, final int count)
    {
        if (from < 0 || count < 0 || from + count > keys.size())
        {
            throw new IllegalArgumentException("keys [" + from + ", " + (from + count) + ") are outside the chain of " + keys.size() + " keys");
        }
    }

    private void call(final int requestOp, final int requestFrom, final int requestCount)
    {
        if (closed)
        {
            throw new IllegalStateException("session is closed");
        }
        if (busy)
        {
            throw new IllegalStateException("session already has a request in flight; use one session per thread");
        }
        switch (requestOp)
        {
            case MessageType.LOOKUP, MessageType.ACQUIRE, MessageType.RESERVE, MessageType.COMMIT, MessageType.PREFETCH, MessageType.BACKUP, MessageType.EVICT,
                 MessageType.LOOKUP_AND_LOCK, MessageType.COMMIT_AND_RELEASE ->
                checkRange(requestFrom, requestCount);
            case MessageType.RELEASE, MessageType.ABORT ->
            {
                if (requestFrom < 0 || requestCount < 0 || requestFrom + requestCount > keys.capacity())
                {
                    throw new IllegalArgumentException("keys [" + requestFrom + ", " + (requestFrom + requestCount) + ") are outside the session's " + keys.capacity() + " key slots");
                }
            }
            default ->
            {
            }
        }
        busy = true;
        try
        {
            waiter = Thread.currentThread();
            DONE.setRelease(this, 0);
            engineTakenNanos = 0;
            final long publishedNanos = System.nanoTime();
            if (!engine.publish(this, requestOp, requestFrom, requestCount))
            {
                throw new SessionException(ErrorCode.CLOSED, "engine is closed");
            }
            awaitDone();
            if (engineTakenNanos != 0)
            {
                legRequests++;
                legToEngineNanos += engineTakenNanos - publishedNanos;
                legInEngineNanos += engineAnsweredNanos - engineTakenNanos;
                legBackNanos += System.nanoTime() - engineAnsweredNanos;
            }
            final ErrorCode outcome = ErrorCode.of((int)DONE.getAcquire(this) == 1 ? requestStatus : ErrorCode.INTERNAL_ERROR.code());
            switch (outcome)
            {
                case OK ->
                {
                }
                case LEASE_EXPIRED -> throw new SessionException(outcome, "session " + id + " lease expired: its pins and reservations were reclaimed; open a new session");
                case CLOSED -> throw new SessionException(outcome, "engine is closing");
                case INVALID -> throw new SessionException(outcome, InternalOp.name(requestOp) + " of keys [" + requestFrom + ", " + (requestFrom + requestCount) + ") was rejected as invalid");
                default -> throw new SessionException(outcome, InternalOp.name(requestOp) + " failed inside the engine; see its log");
            }
        }
        finally
        {
            busy = false;
        }
    }

    private void awaitDone()
    {
        for (int i = 0; i < SPIN_TRIES; i++)
        {
            if ((int)DONE.getAcquire(this) != 0)
            {
                return;
            }
            Thread.onSpinWait();
        }
        // Then yield: when every core is busy (a client checksumming its pages, say), the engine thread
        // may be the one waiting for a core, and spinning here would keep it from the answer.
        for (int i = 0; i < YIELD_TRIES; i++)
        {
            if ((int)DONE.getAcquire(this) != 0)
            {
                return;
            }
            Thread.yield();
        }
        while ((int)DONE.getAcquire(this) == 0)
        {
            // Announce the park, then look again: paired with complete(), which publishes DONE and then
            // reads WAITING, both volatile, so one of the two sees the other and no wake-up is lost.
            WAITING.setVolatile(this, PARKED);
            if ((int)DONE.getVolatile(this) == 0)
            {
                LockSupport.parkNanos(this, PARK_NANOS);
            }
            if (!WAITING.compareAndSet(this, PARKED, RUNNING))
            {
                takeTheEnginesPermit();
            }
            if (engine.isHalted() && (int)DONE.getAcquire(this) == 0)
            {
                requestStatus = ErrorCode.CLOSED.code();
                DONE.setRelease(this, 1);
            }
        }
    }

    /**
     * The engine claimed this wake-up, so its unpark is made or about to be. A park that timed out
     * just before would return with that permit still set, and the caller's own next park would be
     * cut short; so wait for the unpark to be made and take its permit here: a permit already
     * consumed by the wake-up leaves a park of one nanosecond that returns at once.
     */
    private void takeTheEnginesPermit()
    {
        // The engine thread is between its claim and its unpark, a few instructions; but on a host with every core busy it
        // may be preempted there, and a spin would then hold the core it needs: spin briefly, then yield to it.
        for (int spins = 0; (int)WAITING.getVolatile(this) != WOKEN; spins++)
        {
            if (spins < PERMIT_SPINS)
            {
                Thread.onSpinWait();
            }
            else
            {
                Thread.yield();
            }
        }
        LockSupport.parkNanos(this, 1L);
        WAITING.setVolatile(this, RUNNING);
    }

    @Override
    public boolean wantsEngineTimes()
    {
        return true;
    }

    @Override
    public void engineTimes(final long takenNanos, final long answeredNanos)
    {
        engineAnsweredNanos = answeredNanos;
        engineTakenNanos = takenNanos == 0 ? 1 : takenNanos;
    }

    /**
     * A round trip's three legs, summed over round trips: from the client's publish to the engine thread taking the
     * request, from there to the engine's answer, and from the answer to the client's thread seeing it.
     *
     * @param roundTrips    round trips summed
     * @param toEngineNanos publish to take, summed
     * @param inEngineNanos take to answer, summed
     * @param backNanos     answer to the client running, summed
     */
    public record RoundTripLegs(long roundTrips, long toEngineNanos, long inEngineNanos, long backNanos)
    {
        /** No round trip yet. */
        public static final RoundTripLegs NONE = new RoundTripLegs(0, 0, 0, 0);

        /** @return these and {@code other} summed */
        public RoundTripLegs plus(final RoundTripLegs other)
        {
            return new RoundTripLegs(roundTrips + other.roundTrips, toEngineNanos + other.toEngineNanos, inEngineNanos + other.inEngineNanos,
                backNanos + other.backNanos);
        }

        /** @return the mean of the first leg, in microseconds */
        public double toEngineMicros()
        {
            return meanMicros(toEngineNanos);
        }

        /** @return the mean of the second leg, in microseconds */
        public double inEngineMicros()
        {
            return meanMicros(inEngineNanos);
        }

        /** @return the mean of the third leg, in microseconds */
        public double backMicros()
        {
            return meanMicros(backNanos);
        }

        private double meanMicros(final long sumNanos)
        {
            return roundTrips == 0 ? 0 : sumNanos / (double)roundTrips / 1e3;
        }
    }

    /**
     * Read on the session's own thread, between requests.
     *
     * @return this session's round trips so far, their legs summed
     */
    public RoundTripLegs roundTripLegs()
    {
        return new RoundTripLegs(legRequests, legToEngineNanos, legInEngineNanos, legBackNanos);
    }

    /** Called by the engine thread once results are written. */
    @Override
    public void complete(final ErrorCode outcome, final int count, final int pool2, final int pool3, final int fromPool, final int fromL3)
    {
        requestStatus = outcome.code();
        resultCount = count;
        l2Pages = pool2;
        l3Pages = pool3;
        acquiredFromPool = fromPool;
        acquiredFromL3 = fromL3;
        DONE.setVolatile(this, 1);
        // Unpark only a client that announced a park, and claim the wake-up first: an unpark of a thread
        // that is spinning, or already gone back to its caller after its park timed out, would leave a
        // permit that cuts the caller's next park short. A client that finds the wake-up claimed waits
        // for WOKEN and takes the permit (takeTheEnginesPermit).
        if (WAITING.compareAndSet(this, PARKED, WAKING))
        {
            final Thread thread = waiter;
            if (thread != null)
            {
                LockSupport.unpark(thread);
            }
            WAITING.setVolatile(this, WOKEN);
        }
    }
}
