package io.kvtier.tier.mooncake;

import io.kvtier.spi.PageKey;
import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierStatus;
import io.kvtier.spi.TrailerBlock;
import io.kvtier.tier.mooncake.bindings.store_c_h;
import io.kvtier.tier.support.TierWorkers;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * One I/O thread and its native scratch: the arrays one batched C call takes, for up to
 * {@code batch-keys} keys.
 */
final class MooncakeWorker implements TierWorkers.Handler
{
    private final String name;
    private final MooncakeSettings settings;
    private final MooncakeStore store;
    private final MemorySegment handle;
    private final long objectSize;
    private final System.Logger logger;
    private final MemorySegment replicateConfig;
    private final byte[] prefix;
    private final int keyStride;
    private final MemorySegment hostMemory;
    private final boolean hostRegistered;
    private final AtomicLong objects;
    private final MooncakeTier.Stats stats;
    private final AtomicBoolean registrationWarned;
    private final MooncakeRemovals removals;
    private final int capacity;
    /** One slot past the batch arrays, for single-key calls made while the arrays are being filled. */
    private final int scratch;
    private final MemorySegment keyText;
    private final MemorySegment keyPointers;
    private final MemorySegment bufferPointers;
    private final MemorySegment sizes;
    private final MemorySegment results;
    /** Which batch index sits at each position of the arrays. */
    private final int[] slots;
    private final boolean[] existed;
    private final int[] attempts;
    private final byte[] hex = new byte[PageKey.HEX_LENGTH];
    private final List<MemorySegment> registeredSlices = new ArrayList<>();
    /** Which keys of the current chunk the worker completed or handed on, so a failure completes only the rest. */
    private final boolean[] handled;
    private final TierStatus[] deferred;
    private TierWorkers.Claim claim;
    private int chunkFrom;

    /**
     * @param parts    what the tier's threads share
     * @param removals the removals and key stripes
     * @param arena    where the worker's native arrays come from; closed by the tier once every worker stopped
     */
    MooncakeWorker(final MooncakeParts parts, final MooncakeRemovals removals, final Arena arena)
    {
        this.name = parts.name();
        this.settings = parts.settings();
        this.store = parts.store();
        this.handle = parts.handle();
        this.objectSize = parts.objectSize();
        this.logger = parts.logger();
        this.replicateConfig = parts.replicateConfig();
        this.prefix = parts.prefix();
        this.keyStride = parts.keyStride();
        this.hostMemory = parts.hostMemory();
        this.hostRegistered = parts.hostRegistered();
        this.objects = parts.objects();
        this.stats = parts.stats();
        this.registrationWarned = parts.registrationWarned();
        this.removals = removals;
        capacity = settings.batchKeys;
        scratch = capacity;
        keyText = arena.allocate((long)keyStride * (capacity + 1), 8);
        keyPointers = arena.allocate(ValueLayout.ADDRESS, capacity + 1L);
        bufferPointers = arena.allocate(ValueLayout.ADDRESS, capacity);
        sizes = arena.allocate(ValueLayout.JAVA_LONG, capacity);
        results = arena.allocate(ValueLayout.JAVA_LONG, capacity);
        slots = new int[capacity];
        existed = new boolean[capacity];
        attempts = new int[capacity];
        handled = new boolean[capacity];
        deferred = new TierStatus[capacity];
        for (int i = 0; i <= capacity; i++)
        {
            final MemorySegment text = keyText.asSlice((long)i * keyStride, keyStride);
            MemorySegment.copy(prefix, 0, text, ValueLayout.JAVA_BYTE, 0, prefix.length);
            text.set(ValueLayout.JAVA_BYTE, prefix.length + PageKey.HEX_LENGTH, (byte)0);
            // The pointers never change: each points at its slot's text, rewritten per key.
            keyPointers.setAtIndex(ValueLayout.ADDRESS, i, text);
        }
    }

    /** Keys go in chunks of {@code batch-keys}: one batched C call each. */
    @Override
    public int claimSize(final int operation)
    {
        return capacity;
    }

    @Override
    public void serve(final TierWorkers.Claim claim)
    {
        this.claim = claim;
        final Chunk chunk = new Chunk(claim.operation(), claim.batch(), claim.from(), claim.to());
        java.util.Arrays.fill(handled, false);
        chunkFrom = chunk.from();
        try
        {
            switch (chunk.op())
            {
                case TierWorkers.EXISTS -> exists(chunk);
                case TierWorkers.READ -> read(chunk);
                case TierWorkers.WRITE -> write(chunk);
                default -> remove(chunk);
            }
        }
        catch (final RuntimeException | Error ex)
        {
            logger.log(System.Logger.Level.ERROR, "tier " + name + ": a " + opName(chunk.op()) + " chunk failed", ex);
            // Keys the chunk completed (or handed to the lease thread) are not the worker's any more.
            for (int i = chunk.from(); i < chunk.to(); i++)
            {
                if (!handled[i - chunk.from()])
                {
                    finish(chunk.batch(), i, TierStatus.IO_ERROR);
                }
            }
        }
        finally
        {
            try
            {
                unregisterSlices();
            }
            finally
            {
                completeDeferred(chunk);
            }
        }
    }

    /**
     * Records a read's or write's outcome; {@link #completeDeferred} hands it to the engine once the
     * chunk is done with the key's memory, slices registered for it unregistered included: a key's
     * segment belongs to the engine again the moment the key completes.
     */
    private void finish(final TierBatch batch, final int index, final TierStatus status)
    {
        handled[index - chunkFrom] = true;
        deferred[index - chunkFrom] = status;
    }

    private void completeDeferred(final Chunk chunk)
    {
        for (int i = chunk.from(); i < chunk.to(); i++)
        {
            final TierStatus status = deferred[i - chunk.from()];
            if (status != null)
            {
                deferred[i - chunk.from()] = null;
                claim.complete(i, status);
            }
        }
    }

    /** Writes key {@code index} of the batch into array slot {@code slot}. */
    private void setKey(final int slot, final TierBatch batch, final int index)
    {
        PageKey.writeHex(batch.keyHigh(index), batch.keyLow(index), hex, 0);
        MemorySegment.copy(hex, 0, keyText, ValueLayout.JAVA_BYTE, (long)slot * keyStride + prefix.length, PageKey.HEX_LENGTH);
    }

    private MemorySegment key(final int slot)
    {
        return keyPointers.getAtIndex(ValueLayout.ADDRESS, slot);
    }

    private byte[] keyBytes(final int slot)
    {
        final byte[] bytes = new byte[prefix.length + PageKey.HEX_LENGTH];
        MemorySegment.copy(keyText, ValueLayout.JAVA_BYTE, (long)slot * keyStride, bytes, 0, bytes.length);
        return bytes;
    }

    private void exists(final Chunk chunk)
    {
        final TierBatch batch = chunk.batch();
        final int count = chunk.to() - chunk.from();
        for (int slot = 0; slot < count; slot++)
        {
            setKey(slot, batch, chunk.from() + slot);
        }
        final int rc = store_c_h.mooncake_store_batch_is_exist(handle, keyPointers, count, results);
        for (int slot = 0; slot < count; slot++)
        {
            final int index = chunk.from() + slot;
            if (rc != 0)
            {
                finish(batch, index, MooncakeErrors.failure(rc));
                continue;
            }
            final int answer = results.getAtIndex(ValueLayout.JAVA_INT, slot);
            finish(batch, index, answer == 1 ? TierStatus.OK : answer == 0 ? TierStatus.NOT_FOUND : MooncakeErrors.failure(answer));
        }
        if (rc != 0)
        {
            logger.log(System.Logger.Level.WARNING, "tier {0}: batch_is_exist failed with {1}", name, MooncakeErrors.name(rc));
        }
    }

    private void read(final Chunk chunk)
    {
        final TierBatch batch = chunk.batch();
        int count = 0;
        for (int index = chunk.from(); index < chunk.to(); index++)
        {
            final MemorySegment segment = batch.segment(index);
            if (segment.byteSize() != objectSize && !readsWhole(batch, index, segment))
            {
                continue; // completed: missing, or an object of another size
            }
            setKey(count, batch, index);
            bufferPointers.setAtIndex(ValueLayout.ADDRESS, count, segment);
            sizes.setAtIndex(ValueLayout.JAVA_LONG, count, segment.byteSize());
            ensureRegistered(segment);
            slots[count++] = index;
        }
        if (count == 0)
        {
            return;
        }
        long mask = 0;
        for (int slot = 0; slot < count; slot++)
        {
            mask |= MooncakeRemovals.stripeBit(batch.keyHigh(slots[slot]), batch.keyLow(slots[slot]));
        }
        final int rc;
        final boolean outlivedLease;
        removals.lockStripes(mask, false);
        try
        {
            final long start = System.nanoTime();
            rc = store_c_h.mooncake_store_batch_get_into(handle, keyPointers, bufferPointers, sizes, count, results);
            outlivedLease = System.nanoTime() - start >= settings.leaseTtl.toNanos();
        }
        finally
        {
            removals.unlockStripes(mask, false);
        }
        for (int slot = 0; slot < count; slot++)
        {
            final int index = slots[slot];
            if (rc != 0)
            {
                finish(batch, index, MooncakeErrors.failure(rc));
                continue;
            }
            final long got = results.getAtIndex(ValueLayout.JAVA_LONG, slot);
            final long expected = sizes.getAtIndex(ValueLayout.JAVA_LONG, slot);
            if (got != expected && TrailerBlock.isCompact(got, expected))
            {
                TrailerBlock.restore(batch.segment(index), got); // the trailer block's zeros, which the put left out
            }
            if (got == expected || TrailerBlock.isCompact(got, expected))
            {
                if (outlivedLease)
                {
                    stats.leaseExpiredReads.incrementAndGet();
                    finish(batch, index, TierStatus.NOT_FOUND);
                }
                else
                {
                    finish(batch, index, TierStatus.OK);
                }
            }
            else if (got >= 0)
            {
                finish(batch, index, TierStatus.CORRUPT); // a smaller object: not a whole page
            }
            else if (MooncakeErrors.isMiss(got))
            {
                finish(batch, index, TierStatus.NOT_FOUND);
            }
            else if (got == MooncakeErrors.INVALID_PARAMS)
            {
                // Also what a buffer too small for the object gets: ask the object's size to tell.
                finish(batch, index, sizeStatus(store_c_h.mooncake_store_get_size(handle, key(slot)), expected, TierStatus.IO_ERROR));
            }
            else
            {
                finish(batch, index, MooncakeErrors.failure(got));
            }
        }
        if (rc != 0)
        {
            logger.log(System.Logger.Level.WARNING, "tier {0}: batch_get_into failed with {1}", name, MooncakeErrors.name(rc));
        }
    }

    /**
     * A segment of a size other than the tier's object size: the object is read only if it has
     * exactly that size, so a mismatch is CORRUPT and never a partial read.
     *
     * @return whether the key should be read; when false it is completed
     */
    private boolean readsWhole(final TierBatch batch, final int index, final MemorySegment segment)
    {
        setKey(scratch, batch, index);
        final long size = store_c_h.mooncake_store_get_size(handle, key(scratch));
        final TierStatus status = sizeStatus(size, segment.byteSize(), null);
        if (status == null)
        {
            return true;
        }
        finish(batch, index, status);
        return false;
    }

    /** @return the status a key of that stored size gets for a segment of {@code expected} bytes, or {@code same} when it fits it whole or compact */
    private TierStatus sizeStatus(final long size, final long expected, final TierStatus same)
    {
        if (size == expected || TrailerBlock.isCompact(size, expected))
        {
            return same;
        }
        if (size >= 0)
        {
            return TierStatus.CORRUPT;
        }
        return MooncakeErrors.isMiss(size) ? TierStatus.NOT_FOUND : MooncakeErrors.failure(size);
    }

    private void write(final Chunk chunk)
    {
        final TierBatch batch = chunk.batch();
        final int count = chunk.to() - chunk.from();
        for (int slot = 0; slot < count; slot++)
        {
            final int index = chunk.from() + slot;
            setKey(slot, batch, index);
            slots[slot] = index;
            attempts[slot] = 0;
        }
        // Mooncake keeps a key's first value: find the keys that are there so they can be removed first.
        final int probe = store_c_h.mooncake_store_batch_is_exist(handle, keyPointers, count, results);
        long mask = 0;
        for (int slot = 0; slot < count && settings.replaceExisting; slot++)
        {
            if (probe != 0 || results.getAtIndex(ValueLayout.JAVA_INT, slot) != 0)
            {
                mask |= MooncakeRemovals.stripeBit(batch.keyHigh(slots[slot]), batch.keyLow(slots[slot]));
            }
        }
        // Held from the removal to the put, so this tier's gets never copy a key while it is replaced.
        removals.lockStripes(mask, true);
        try
        {
            writeLocked(batch, count, probe);
        }
        finally
        {
            removals.unlockStripes(mask, true);
        }
    }

    private void writeLocked(final TierBatch batch, final int count, final int probe)
    {
        int pending = 0;
        for (int slot = 0; slot < count; slot++)
        {
            final int index = slots[slot];
            final int answer = probe == 0 ? results.getAtIndex(ValueLayout.JAVA_INT, slot) : probe;
            existed[slot] = answer == 1;
            if (answer < 0)
            {
                logger.log(System.Logger.Level.WARNING, "tier {0}: probing a key before its write failed with {1}", name,
                    MooncakeErrors.name(answer));
                finish(batch, index, MooncakeErrors.failure(answer));
                continue;
            }
            if (existed[slot] && !settings.replaceExisting)
            {
                // Equal keys are equal bytes (docs/keys.md): the stored copy serves as well as ours would.
                stats.keptExisting.incrementAndGet();
                finish(batch, index, TierStatus.OK);
                continue;
            }
            if (existed[slot])
            {
                final TierStatus removed = removeForReplace(slot);
                if (removed != null)
                {
                    finish(batch, index, removed);
                    continue;
                }
            }
            compact(slot, pending++, batch, index, true);
        }
        putWithRetries(batch, pending);
    }

    /** Moves the key in {@code slot} to {@code to} (to <= slot), with its buffer, registered unless it already is. */
    private void compact(final int slot, final int to, final TierBatch batch, final int index, final boolean register)
    {
        final MemorySegment segment = batch.segment(index);
        if (slot != to)
        {
            MemorySegment.copy(keyText, (long)slot * keyStride, keyText, (long)to * keyStride, keyStride);
            slots[to] = slots[slot];
            existed[to] = existed[slot];
            attempts[to] = attempts[slot];
        }
        bufferPointers.setAtIndex(ValueLayout.ADDRESS, to, segment);
        // An engine frame is stored without the zeros of its trailer block (TrailerBlock): a prefix of the
        // frame, so the put stays zero-copy, and a 16 KiB page takes 0.4% more than its payload, not 25%. The
        // engine says its frames' blocks are padding past the trailer (SPI 1.3), which then goes unread.
        sizes.setAtIndex(ValueLayout.JAVA_LONG, to, TrailerBlock.storedLength(segment, batch.trailerBlockIsPadding(index)));
        if (register)
        {
            ensureRegistered(segment);
        }
    }

    /**
     * Removes a present key before its write: without force first, forced if a lease holds it
     * (a writer must not wait out a remote reader's lease).
     *
     * @return null when it is gone, else the failure the write completes with
     */
    private TierStatus removeForReplace(final int slot)
    {
        int rc = store_c_h.mooncake_store_remove(handle, key(slot), 0);
        boolean forced = false;
        if (rc == MooncakeErrors.OBJECT_HAS_LEASE)
        {
            stats.leaseRefusals.incrementAndGet();
            rc = store_c_h.mooncake_store_remove(handle, key(slot), 1); // the caller holds the stripe
            forced = true;
        }
        if (rc == 0 || MooncakeErrors.isMiss(rc))
        {
            if (rc == 0)
            {
                stats.replacedBeforeWrite.incrementAndGet();
                if (forced)
                {
                    stats.forcedRemovals.incrementAndGet();
                }
            }
            else
            {
                existed[slot] = false; // removed by someone else meanwhile: the put adds an object
            }
            return null;
        }
        logger.log(System.Logger.Level.WARNING, "tier {0}: removing a key to replace it failed with {1}; the write fails",
            name, MooncakeErrors.name(rc));
        return MooncakeErrors.failure(rc);
    }

    /** Puts the first {@code count} slots, retrying the refused ones with doubling backoff. */
    private void putWithRetries(final TierBatch batch, final int initialCount)
    {
        int count = initialCount;
        long backoff = settings.writeBackoff.toNanos();
        while (count > 0)
        {
            final int rc = store_c_h.mooncake_store_batch_put_from(handle, keyPointers, bufferPointers, sizes, count, replicateConfig, results);
            int retry = 0;
            for (int slot = 0; slot < count; slot++)
            {
                final int index = slots[slot];
                final int result = rc == 0 ? results.getAtIndex(ValueLayout.JAVA_INT, slot) : rc;
                if (result == 0)
                {
                    if (!existed[slot])
                    {
                        objects.incrementAndGet();
                    }
                    finish(batch, index, TierStatus.OK);
                    continue;
                }
                final boolean full = MooncakeErrors.isFull(result);
                final boolean raced = result == MooncakeErrors.OBJECT_ALREADY_EXISTS;
                if (full)
                {
                    stats.fullRefusals.incrementAndGet();
                }
                if ((full || raced) && attempts[slot] < settings.writeRetries && !claim.closing())
                {
                    if (raced)
                    {
                        final TierStatus removed = removeForReplace(slot);
                        if (removed != null)
                        {
                            finish(batch, index, removed);
                            continue;
                        }
                    }
                    attempts[slot]++;
                    compact(slot, retry++, batch, index, false);
                    continue;
                }
                if (full)
                {
                    stats.noSpace.incrementAndGet();
                    logger.log(System.Logger.Level.WARNING, "tier {0}: the store is full ({1}) after {2} attempt(s); the write is NO_SPACE",
                        name, MooncakeErrors.name(result), attempts[slot] + 1);
                    finish(batch, index, TierStatus.NO_SPACE);
                }
                else
                {
                    logger.log(System.Logger.Level.WARNING, "tier {0}: put failed with {1}", name, MooncakeErrors.name(result));
                    finish(batch, index, claim.closing() && raced ? TierStatus.CLOSED : MooncakeErrors.failure(result));
                }
            }
            count = retry;
            if (count > 0)
            {
                // The master evicts at its high watermark: give it time to make room.
                LockSupportSleep.sleepNanos(backoff);
                backoff = Math.min(backoff * 2, TimeUnit.SECONDS.toNanos(2));
            }
        }
    }

    private void remove(final Chunk chunk)
    {
        final TierBatch batch = chunk.batch();
        for (int index = chunk.from(); index < chunk.to(); index++)
        {
            setKey(scratch, batch, index);
            final boolean force = settings.leaseWait.isZero();
            final int rc = store_c_h.mooncake_store_remove(handle, key(scratch), 0);
            if (rc == MooncakeErrors.OBJECT_HAS_LEASE)
            {
                stats.leaseRefusals.incrementAndGet();
                if (force)
                {
                    handled[index - chunkFrom] = true;
                    claim.complete(index, removals.removalStatus(removals.forceRemove(key(scratch), batch.keyHigh(index), batch.keyLow(index)), true));
                }
                else
                {
                    final long backoff = Math.max(settings.writeBackoff.toNanos(), TimeUnit.MILLISECONDS.toNanos(50));
                    handled[index - chunkFrom] = true;
                    claim.handOff(index);
                    removals.scheduleLeasedRemoval(new MooncakeRemovals.LeasedRemoval(batch, index, batch.keyHigh(index), batch.keyLow(index), keyBytes(scratch), System.nanoTime() + settings.leaseWait.toNanos(), backoff));
                }
                continue;
            }
            handled[index - chunkFrom] = true;
            claim.complete(index, removals.removalStatus(rc, false));
        }
    }

    /** Registers a slice outside the pool for this chunk, so RDMA transports can move it. */
    private void ensureRegistered(final MemorySegment segment)
    {
        if (hostRegistered && isInside(hostMemory, segment))
        {
            return;
        }
        final int rc = store.register(segment);
        if (rc == 0)
        {
            registeredSlices.add(segment);
        }
        else if (registrationWarned.compareAndSet(false, true))
        {
            // Over TCP Mooncake copies from and into unregistered memory too; an RDMA transport would fail the transfer.
            logger.log(System.Logger.Level.INFO, "tier {0}: registering a {1}-byte slice failed with {2}; using it unregistered", name,
                segment.byteSize(), MooncakeErrors.name(rc));
        }
    }

    private void unregisterSlices()
    {
        for (final MemorySegment slice : registeredSlices)
        {
            store.unregister(slice);
        }
        registeredSlices.clear();
    }

    /** The keys a worker took: a claim as the chunk code reads it. */
    private record Chunk(int op, TierBatch batch, int from, int to)
    {
    }

    private static boolean isInside(final MemorySegment region, final MemorySegment slice)
    {
        final long start = region.address();
        return slice.address() >= start && slice.address() + slice.byteSize() <= start + region.byteSize();
    }

    private static String opName(final int op)
    {
        return switch (op)
        {
            case TierWorkers.EXISTS -> "exists";
            case TierWorkers.READ -> "read";
            case TierWorkers.WRITE -> "write";
            default -> "remove";
        };
    }

    /** Sleeps without throwing: backoff between put attempts, cut short by nothing but time. */
    private static final class LockSupportSleep
    {
        static void sleepNanos(final long nanos)
        {
            final long deadline = System.nanoTime() + nanos;
            long left = nanos;
            while (left > 0)
            {
                LockSupport.parkNanos(left);
                left = deadline - System.nanoTime();
            }
        }
    }
}
