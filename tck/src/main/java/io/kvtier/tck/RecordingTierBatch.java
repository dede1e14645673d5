package io.kvtier.tck;

import io.kvtier.spi.PageKey;
import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierStatus;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A well-behaved {@link TierBatch} for tests: it records each key's status and catches the ways a
 * tier can break the batch contract, so a test can fail on them even when the tier swallows the
 * exception it got.
 *
 * <p>Recorded violations: a key completed twice, an index out of range, a {@code null} status, the
 * tier asking for a key or segment after completing that key (ownership goes back key by key, see
 * {@link TierBatch}), the tier calling any method of the batch, {@link #size()} and
 * {@link #complete} included, after its last key was completed (the whole batch is the engine's then,
 * which reuses it for another batch: a loop whose condition reads {@code size()} again after the last
 * completion reads the size of someone else's batch), and the tier changing a key's segment after
 * completing it: the batch hashes each segment as the key completes and checks the hash again in
 * {@link #assertNoViolations()}, so a write through a reference the tier kept is caught too.
 * {@link #awaitCompletion(Duration)} waits with a deadline so a tier that never completes a key fails
 * the test with the missing indexes instead of hanging the build.
 *
 * <p>The tier-facing methods ({@link #size()}, {@link #keyHigh}, {@link #keyLow}, {@link #segment},
 * {@link #complete}) are watched; tests read the same data back through {@link #keyCount()},
 * {@link #pageKey(int)} and {@link #slice(int)}, which are not.
 */
public final class RecordingTierBatch implements TierBatch
{
    private static final int MAX_LISTED = 16;
    private static final int MAX_RECORDED = 256;

    private final String label;
    private final long[] keyHigh;
    private final long[] keyLow;
    private final MemorySegment[] segments;
    private final AtomicReferenceArray<TierStatus> statuses;
    private final long[] completedHash;
    private final CountDownLatch pending;
    private final ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
    private final AtomicInteger recorded = new AtomicInteger();
    private volatile boolean trailerBlockPadding;

    /**
     * @param label    names the batch in failure messages
     * @param keys     the keys, in batch order
     * @param segments one segment per key: the destination of a read, the source of a write
     */
    public RecordingTierBatch(final String label, final List<PageKey> keys, final List<MemorySegment> segments)
    {
        if (keys.size() != segments.size())
        {
            throw new IllegalArgumentException(keys.size() + " keys but " + segments.size() + " segments");
        }
        this.label = label;
        final int size = keys.size();
        keyHigh = new long[size];
        keyLow = new long[size];
        this.segments = segments.toArray(new MemorySegment[0]);
        for (int i = 0; i < size; i++)
        {
            keyHigh[i] = keys.get(i).high();
            keyLow[i] = keys.get(i).low();
        }
        statuses = new AtomicReferenceArray<>(size);
        completedHash = new long[size];
        pending = new CountDownLatch(size);
    }

    /**
     * @param label names the batch in failure messages
     * @param keys  the keys, for {@code exists} or {@code remove}
     * @return a batch whose segments are all {@link MemorySegment#NULL}
     */
    public static RecordingTierBatch ofKeys(final String label, final List<PageKey> keys)
    {
        return new RecordingTierBatch(label, keys, Collections.nCopies(keys.size(), MemorySegment.NULL));
    }

    @Override
    public int size()
    {
        if (keyHigh.length > 0 && pending.getCount() == 0)
        {
            record(afterLastCompletion("size()") + "; read size() once, before completing any key");
        }
        return keyHigh.length;
    }

    /** @return the number of keys, read without counting as a tier access */
    public int keyCount()
    {
        return keyHigh.length;
    }

    @Override
    public long keyHigh(final int index)
    {
        checkOwnedByTier("keyHigh", index);
        return keyHigh[index];
    }

    @Override
    public long keyLow(final int index)
    {
        checkOwnedByTier("keyLow", index);
        return keyLow[index];
    }

    @Override
    public MemorySegment segment(final int index)
    {
        checkOwnedByTier("segment", index);
        return segments[index];
    }

    /**
     * Makes the batch say, as the engine's writes do since SPI 1.3, that each segment's trailer block past its
     * trailer is padding ({@link TierBatch#trailerBlockIsPadding}).
     *
     * @return this batch
     */
    public RecordingTierBatch withTrailerBlockPadding()
    {
        trailerBlockPadding = true;
        return this;
    }

    @Override
    public boolean trailerBlockIsPadding(final int index)
    {
        checkOwnedByTier("trailerBlockIsPadding", index);
        return trailerBlockPadding;
    }

    @Override
    public void complete(final int index, final TierStatus status)
    {
        if (keyHigh.length > 0 && pending.getCount() == 0)
        {
            // Recorded on its own as well: the engine may already have handed this batch object to another batch.
            record(afterLastCompletion("complete(" + index + ", " + status + ")"));
        }
        if (index < 0 || index >= keyCount())
        {
            final String violation = "complete(" + index + ", " + status + ") is out of range for a batch of " + keyCount();
            record(violation);
            throw new IndexOutOfBoundsException(violation);
        }
        if (status == null)
        {
            final String violation = "key " + index + " completed with a null status";
            record(violation);
            throw new NullPointerException(violation);
        }
        // Hashed before the status is set: from that moment the segment is the engine's.
        final long hash = hash(segments[index]);
        if (statuses.get(index) == null)
        {
            completedHash[index] = hash;
        }
        if (!statuses.compareAndSet(index, null, status))
        {
            final String violation = "key " + index + " completed twice: first " + statuses.get(index) + ", then " + status
                + " (on thread " + Thread.currentThread().getName() + ")";
            record(violation);
            throw new IllegalStateException(violation);
        }
        pending.countDown();
    }

    private void checkOwnedByTier(final String method, final int index)
    {
        if (index < 0 || index >= keyCount())
        {
            record(method + "(" + index + ") is out of range for a batch of " + keyCount() + " (on thread " + Thread.currentThread().getName() + ")");
        }
        else if (pending.getCount() == 0)
        {
            record(afterLastCompletion(method + "(" + index + ")"));
        }
        else if (statuses.get(index) != null)
        {
            record("the tier called " + method + "(" + index + ") after completing key " + index + ", whose segment"
                + " already belonged to the engine again (on thread " + Thread.currentThread().getName() + ")");
        }
    }

    private static String afterLastCompletion(final String call)
    {
        return "the tier called " + call + " after the batch's last key was completed, when the whole batch already"
            + " belonged to the engine again, which may have reused it for another batch (on thread "
            + Thread.currentThread().getName() + ")";
    }

    /** Records a violation; past {@value #MAX_RECORDED} of them only counts, so a tier polling a batch in a loop cannot fill the heap. */
    private void record(final String violation)
    {
        if (recorded.getAndIncrement() < MAX_RECORDED)
        {
            violations.add(violation);
        }
    }

    /** A 64-bit FNV-1a over a segment's 8-byte words and tail bytes; 0-length segments hash alike. */
    private static long hash(final MemorySegment segment)
    {
        long h = 0xCBF29CE484222325L;
        final long size = segment.byteSize();
        long i = 0;
        for (; i + Long.BYTES <= size; i += Long.BYTES)
        {
            h = (h ^ segment.get(ValueLayout.JAVA_LONG_UNALIGNED, i)) * 0x100000001B3L;
        }
        for (; i < size; i++)
        {
            h = (h ^ segment.get(ValueLayout.JAVA_BYTE, i)) * 0x100000001B3L;
        }
        return h;
    }

    /** Records every completed key whose segment changed since it was completed. */
    private void checkSegmentsUntouched()
    {
        for (int i = 0; i < keyCount(); i++)
        {
            if (statuses.get(i) != null && segments[i].byteSize() > 0 && hash(segments[i]) != completedHash[i])
            {
                final String violation = "key " + i + "'s segment changed after the tier completed the key with " + statuses.get(i)
                    + ": the tier wrote into memory that already belonged to the engine again";
                if (!violations.contains(violation))
                {
                    violations.add(violation);
                }
            }
        }
    }

    /** @return the name given at construction */
    public String label()
    {
        return label;
    }

    /**
     * @param index a key's position
     * @return the key, read without counting as a tier access
     */
    public PageKey pageKey(final int index)
    {
        return new PageKey(keyHigh[index], keyLow[index]);
    }

    /**
     * @param index a key's position
     * @return the key's segment, read without counting as a tier access
     */
    public MemorySegment slice(final int index)
    {
        return segments[index];
    }

    /**
     * @param index a key's position
     * @return the key's status, or {@code null} while it is pending
     */
    public TierStatus status(final int index)
    {
        return statuses.get(index);
    }

    /** @return every key's status in batch order, {@code null} for pending keys */
    public List<TierStatus> statuses()
    {
        final List<TierStatus> all = new ArrayList<>(keyCount());
        for (int i = 0; i < keyCount(); i++)
        {
            all.add(statuses.get(i));
        }
        return all;
    }

    /** @return whether every key has been completed */
    public boolean isComplete()
    {
        return pending.getCount() == 0;
    }

    /** @return every contract violation seen so far */
    public List<String> violations()
    {
        return List.copyOf(violations);
    }

    /**
     * @throws AssertionError listing the violations, if there are any
     */
    public void assertNoViolations()
    {
        checkSegmentsUntouched();
        final List<String> seen = violations();
        if (!seen.isEmpty())
        {
            final String listed = seen.size() <= MAX_LISTED
                ? seen.toString()
                : seen.subList(0, MAX_LISTED) + " and " + (Math.max(seen.size(), recorded.get()) - MAX_LISTED) + " more";
            throw new AssertionError("batch '" + label + "' broke the TierBatch contract: " + listed);
        }
    }

    /**
     * Waits until every key is completed, then checks for violations.
     *
     * @param deadline how long to wait before calling it a hang
     * @return this batch
     * @throws AssertionError naming the keys still pending when the deadline passes, or listing violations
     */
    public RecordingTierBatch awaitCompletion(final Duration deadline)
    {
        try
        {
            if (!pending.await(deadline.toNanos(), TimeUnit.NANOSECONDS))
            {
                throw new AssertionError("batch '" + label + "': " + pending.getCount() + " of " + keyCount()
                    + " keys were not completed within " + deadline + " (the tier hangs or lost them); pending indexes "
                    + pendingIndexes());
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for batch '" + label + "'", ex);
        }
        assertNoViolations();
        return this;
    }

    private List<Integer> pendingIndexes()
    {
        final List<Integer> pendingIndexes = new ArrayList<>();
        for (int i = 0; i < keyCount() && pendingIndexes.size() < MAX_LISTED; i++)
        {
            if (statuses.get(i) == null)
            {
                pendingIndexes.add(i);
            }
        }
        return pendingIndexes;
    }

    @Override
    public String toString()
    {
        return "RecordingTierBatch[" + label + ", " + statuses() + "]";
    }
}
