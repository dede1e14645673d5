package io.kvtier.engine.core;

import io.kvtier.client.L3ObjectName;

import io.kvtier.engine.pool.PageFrames;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.nativeaccess.libc.PageCopy;
import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierStatus;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The engine's reusable {@link TierBatch}: keys and page ids in parallel arrays, one status per key
 * set once by compare-and-set, and a countdown whose last decrement hands the batch back to the
 * engine. A frame read successfully is verified right here, on the tier's completing thread, so
 * checksum work spreads over the I/O threads instead of the pipeline thread.
 *
 * <p>The countdown holds one more than the keys: the call that hands the batch to the tier
 * ({@link #callReturned()}), so the batch comes back, to be reused, only once every key is complete
 * <em>and</em> the tier's call has returned; a call thread never touches a batch the engine may
 * already have handed to the tier again. Whether the call is still to be made is a word of its own
 * ({@link #CALL_QUEUED}, ...), which the call thread and the engine each take by compare-and-set: a
 * batch queued behind a stuck call is either called or refused, never both.
 *
 * <p>A read of a tier the engine does not trust lands in a staging frame ({@link StagingFrames})
 * rather than the pool: {@link #segment} hands the tier the staging frame, and {@link #complete}
 * copies it into the pool frame and verifies the pool frame, so bytes the tier writes after completing
 * a key reach only staging, never a page a client is served.
 */
final class TierIoBatch implements TierBatch
{
    static final int READ = 0;
    static final int WRITE = 1;
    static final int EXISTS = 2;
    static final int REMOVE = 3;
    static final int OPS = 4;

    /** Not handed to the tier's call thread (free, being filled, or done). */
    static final int CALL_IDLE = 0;
    /** Waiting in the tier's call queue. */
    static final int CALL_QUEUED = 1;
    /** Taken by the call thread: the tier's call is made, or was. */
    static final int CALL_CALLING = 2;
    /** Taken back by the engine before any call: its tier is out of service. */
    static final int CALL_REFUSED = 3;

    /** {@link #staging} of a key whose read lands in the pool frame itself. */
    static final int NO_STAGING = -1;

    private static final VarHandle STATUS = MethodHandles.arrayElementVarHandle(TierStatus[].class);
    private static final VarHandle REMAINING;
    private static final VarHandle CALL_STATE;

    static
    {
        try
        {
            final MethodHandles.Lookup lookup = MethodHandles.lookup();
            REMAINING = lookup.findVarHandle(TierIoBatch.class, "remaining", int.class);
            CALL_STATE = lookup.findVarHandle(TierIoBatch.class, "callState", int.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    interface Sink
    {
        void batchDone(TierIoBatch batch);
    }

    final int tier;
    final int op;
    final PagePool pool;
    private final Sink sink;
    /** The keys, as the engine knows them (index, pool pages, frames' trailers). */
    final long[] keyHigh;
    final long[] keyLow;
    /** The namespace tag of each key's object, and the object's name in the tier: what the tier sees. */
    final long[] tag;
    final long[] nameHigh;
    final long[] nameLow;
    final int[] page;
    final int[] session;
    final int[] keyIndex;
    final int[] opSeq;
    final TierStatus[] status;
    final PageFrames.FrameCheck[] check;
    /** For a read of an untrusted tier, each key's staging frame; otherwise {@link #NO_STAGING}. */
    final int[] staging;
    /** Where {@link #staging} frames live; null for a tier whose reads land in the pool. */
    final StagingFrames stagingFrames;
    int size;
    long submittedNanos;
    boolean timedOut;
    /** Engine thread: the batch was never handed to its tier, which was out of service; every key completed REJECTED. */
    boolean refused;
    /**
     * What the plugin threw from the call, set by the call thread before the batch can come back;
     * the engine reads it once the batch is done (the countdown's last decrement orders the two).
     */
    Throwable pluginFailure;
    private volatile int remaining;
    private volatile int callState;

    TierIoBatch(final int tier, final int op, final int capacity, final PagePool pool, final Sink sink)
    {
        this(tier, op, capacity, pool, null, sink);
    }

    /**
     * @param stagingFrames where reads of this batch land before they are copied into the pool, for a
     *                      read batch of a tier the engine does not trust; null otherwise
     */
    TierIoBatch(final int tier, final int op, final int capacity, final PagePool pool, final StagingFrames stagingFrames, final Sink sink)
    {
        this.tier = tier;
        this.op = op;
        this.pool = pool;
        this.sink = sink;
        this.stagingFrames = op == READ ? stagingFrames : null;
        keyHigh = new long[capacity];
        keyLow = new long[capacity];
        tag = new long[capacity];
        nameHigh = new long[capacity];
        nameLow = new long[capacity];
        page = new int[capacity];
        session = new int[capacity];
        keyIndex = new int[capacity];
        opSeq = new int[capacity];
        status = new TierStatus[capacity];
        check = new PageFrames.FrameCheck[capacity];
        staging = new int[capacity];
        java.util.Arrays.fill(staging, NO_STAGING);
    }

    /** @return whether this batch's reads land in staging frames (its tier is not trusted) */
    boolean isStaged()
    {
        return stagingFrames != null;
    }

    int capacity()
    {
        return keyHigh.length;
    }

    boolean isFull()
    {
        return size == keyHigh.length;
    }

    void reset()
    {
        for (int i = 0; i < size; i++)
        {
            status[i] = null;
            check[i] = null;
            staging[i] = NO_STAGING;
        }
        size = 0;
        timedOut = false;
        refused = false;
        pluginFailure = null;
        CALL_STATE.setRelease(this, CALL_IDLE);
    }

    int add(final long high, final long low, final long namespaceTag, final L3ObjectName name, final int pageId, final int sessionId,
            final int index, final int seq)
    {
        final int i = size++;
        keyHigh[i] = high;
        keyLow[i] = low;
        tag[i] = namespaceTag;
        name.name(namespaceTag, high, low);
        nameHigh[i] = name.high();
        nameLow[i] = name.low();
        page[i] = pageId;
        session[i] = sessionId;
        keyIndex[i] = index;
        opSeq[i] = seq;
        return i;
    }

    /** Arms the countdown (every key, and the call); after this the tier may complete keys. */
    void arm(final long nowNanos)
    {
        submittedNanos = nowNanos;
        REMAINING.setVolatile(this, size + 1);
    }

    /** Engine thread: the batch goes into its tier's call queue. */
    void callQueuedRelease()
    {
        CALL_STATE.setRelease(this, CALL_QUEUED);
    }

    /**
     * Takes a queued batch, for the call thread (to call the tier) or the engine (to refuse it).
     *
     * @param to {@link #CALL_CALLING} or {@link #CALL_REFUSED}
     * @return whether it was still queued, and now is the caller's
     */
    boolean compareAndSetCallState(final int to)
    {
        return CALL_STATE.compareAndSet(this, CALL_QUEUED, to);
    }

    /** @return where the batch stands with its tier's call thread */
    int callStateAcquire()
    {
        return (int)CALL_STATE.getAcquire(this);
    }

    /**
     * The call that handed the batch to the tier returned (or was never made: refused). The batch may
     * come back now, if every key is complete: after this the caller must not touch it.
     */
    void callReturned()
    {
        if ((int)REMAINING.getAndAdd(this, -1) == 1)
        {
            sink.batchDone(this);
        }
    }

    @Override
    public int size()
    {
        return size;
    }

    /** The tier sees each object's name in L3, never the key: docs/keys.md, "The name of a page in L3". */
    @Override
    public long keyHigh(final int index)
    {
        checkIndex(index);
        return nameHigh[index];
    }

    @Override
    public long keyLow(final int index)
    {
        checkIndex(index);
        return nameLow[index];
    }

    @Override
    public MemorySegment segment(final int index)
    {
        checkIndex(index);
        if (op == READ)
        {
            return staging[index] != NO_STAGING ? stagingFrames.frame(staging[index]) : pool.frames().frame(page[index]);
        }
        // A write hands the tier the pool frame itself, staged or not: its source stays pinned until the
        // key completes (and, should its batch time out, until the timeout), and a tier that reads it
        // late can only store wrong bytes, which the next load's verification refuses. Nothing a tier
        // does with a write's segment can change what a client is served.
        return op == WRITE ? pool.frames().frame(page[index]) : MemorySegment.NULL;
    }

    /**
     * A write's frame is the pool page as committed: the CRC32C recorded at commit covers its payload
     * (the first payload-length bytes), so the tier need not read those again for a checksum of its own.
     */
    @Override
    public long knownCrc32cBytes(final int index)
    {
        checkIndex(index);
        return op == WRITE ? pool.metadata().payloadLengthPlain(page[index]) : 0;
    }

    @Override
    public int knownCrc32c(final int index)
    {
        checkIndex(index);
        return op == WRITE ? pool.metadata().payloadCrcPlain(page[index]) : 0;
    }

    /**
     * A write's segment is a pool frame, whose trailer block the engine sealed and past the trailer never reads
     * (the frame layout's zero padding; a client that scribbles there changes nothing a load checks or serves).
     */
    @Override
    public boolean trailerBlockIsPadding(final int index)
    {
        checkIndex(index);
        return op == WRITE;
    }

    @Override
    public void complete(final int index, final TierStatus outcome)
    {
        checkIndex(index);
        if (outcome == null)
        {
            throw new IllegalArgumentException("status of key " + index + " must not be null");
        }
        if (op == READ && outcome == TierStatus.OK)
        {
            if (staging[index] != NO_STAGING)
            {
                // Copy first, verify the copy: whatever the tier writes into staging from now on, late
                // or not, never reaches the pool frame, and the pool frame is what was verified.
                PageCopy.copy(stagingFrames.frame(staging[index]), 0, pool.frames().frame(page[index]), 0, pool.frameLength());
            }
            // Verify before the status is visible: once it is set the engine may act on it.
            check[index] = pool.frames().verify(page[index], keyHigh[index], keyLow[index]);
        }
        if (!STATUS.compareAndSet(status, index, (TierStatus)null, outcome))
        {
            throw new IllegalStateException("key " + index + " of this batch was already completed with " + status[index]);
        }
        if ((int)REMAINING.getAndAdd(this, -1) == 1)
        {
            sink.batchDone(this);
        }
    }

    /**
     * Completes every key the tier has not: after a plugin exception, or for a batch refused before
     * any call. The batch still waits for {@link #callReturned()}.
     *
     * @param outcome the status to give them
     */
    void completeRemaining(final TierStatus outcome)
    {
        for (int i = 0; i < size; i++)
        {
            if (STATUS.compareAndSet(status, i, (TierStatus)null, outcome) && (int)REMAINING.getAndAdd(this, -1) == 1)
            {
                sink.batchDone(this);
            }
        }
    }

    boolean isDone()
    {
        return remaining == 0;
    }

    private void checkIndex(final int index)
    {
        if (index < 0 || index >= size)
        {
            throw new IndexOutOfBoundsException("key " + index + " of a batch of " + size);
        }
    }

    static String opName(final int op)
    {
        return switch (op)
        {
            case READ -> "read";
            case WRITE -> "write";
            case EXISTS -> "exists";
            case REMOVE -> "remove";
            default -> "op" + op;
        };
    }
}
