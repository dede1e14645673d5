package io.kvtier.engine.core;

import io.kvtier.engine.pool.PageFrames;
import io.kvtier.engine.pool.PagePool;
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
 */
final class TierIoBatch implements TierBatch
{
    static final int READ = 0;
    static final int WRITE = 1;
    static final int EXISTS = 2;
    static final int REMOVE = 3;
    static final int OPS = 4;

    private static final VarHandle STATUS = MethodHandles.arrayElementVarHandle(TierStatus[].class);
    private static final VarHandle REMAINING;

    static
    {
        try
        {
            REMAINING = MethodHandles.lookup().findVarHandle(TierIoBatch.class, "remaining", int.class);
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
    final long[] keyHigh;
    final long[] keyLow;
    final int[] page;
    final int[] session;
    final int[] keyIndex;
    final int[] opSeq;
    final TierStatus[] status;
    final PageFrames.FrameCheck[] check;
    int size;
    long submittedNanos;
    boolean timedOut;
    private volatile int remaining;

    TierIoBatch(final int tier, final int op, final int capacity, final PagePool pool, final Sink sink)
    {
        this.tier = tier;
        this.op = op;
        this.pool = pool;
        this.sink = sink;
        keyHigh = new long[capacity];
        keyLow = new long[capacity];
        page = new int[capacity];
        session = new int[capacity];
        keyIndex = new int[capacity];
        opSeq = new int[capacity];
        status = new TierStatus[capacity];
        check = new PageFrames.FrameCheck[capacity];
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
        }
        size = 0;
        timedOut = false;
    }

    int add(final long high, final long low, final int pageId, final int sessionId, final int index, final int seq)
    {
        final int i = size++;
        keyHigh[i] = high;
        keyLow[i] = low;
        page[i] = pageId;
        session[i] = sessionId;
        keyIndex[i] = index;
        opSeq[i] = seq;
        return i;
    }

    /** Arms the countdown; after this the tier may complete keys. */
    void arm(final long nowNanos)
    {
        submittedNanos = nowNanos;
        REMAINING.setVolatile(this, size);
    }

    @Override
    public int size()
    {
        return size;
    }

    @Override
    public long keyHigh(final int index)
    {
        checkIndex(index);
        return keyHigh[index];
    }

    @Override
    public long keyLow(final int index)
    {
        checkIndex(index);
        return keyLow[index];
    }

    @Override
    public MemorySegment segment(final int index)
    {
        checkIndex(index);
        return op == READ || op == WRITE ? pool.frames().frame(page[index]) : MemorySegment.NULL;
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
     * Completes every key the tier has not, after a plugin exception.
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
