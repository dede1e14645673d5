package io.kvtier.tier.mooncake;

import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierStatus;
import io.kvtier.tier.mooncake.bindings.store_c_h;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Removals and the key stripes that keep them from this node's reads: a forced removal holds the write
 * side of its key's stripe, a get the read side of its keys' stripes ({@value #STRIPES} read-write
 * locks by key hash). A removal a lease refuses is retried off the workers, by a thread of its own,
 * until {@code lease-wait} has passed, and then forced; {@link #forcePending} forces those still
 * waiting when the tier closes: they were promised, not dropped.
 */
final class MooncakeRemovals
{
    static final int STRIPES = 64;

    /** A removal a lease refused, retried until its deadline and then forced. */
    record LeasedRemoval(TierBatch batch, int index, long keyHigh, long keyLow, byte[] key, long deadlineNanos, long backoffNanos)
    {
    }

    private final MooncakeParts parts;
    private final String name;
    private final MemorySegment handle;
    private final System.Logger logger;
    private final MooncakeTier.Stats stats;
    private final ScheduledExecutorService leaseRetries;
    private final List<LeasedRemoval> pendingRemovals = new ArrayList<>();
    private final ReentrantReadWriteLock[] stripes = new ReentrantReadWriteLock[STRIPES];

    /**
     * @param parts what the tier's threads share
     */
    MooncakeRemovals(final MooncakeParts parts)
    {
        this.parts = parts;
        this.name = parts.name();
        this.handle = parts.handle();
        this.logger = parts.logger();
        this.stats = parts.stats();
        for (int i = 0; i < STRIPES; i++)
        {
            stripes[i] = new ReentrantReadWriteLock();
        }
        leaseRetries = new ScheduledThreadPoolExecutor(1, runnable -> Thread.ofPlatform().daemon()
            .name("kvtier-mooncake-" + name + "-lease").unstarted(runnable));
    }

    /** Stops the retry thread and forces every removal still waiting out a lease, completing each. */
    void forcePending()
    {
        leaseRetries.shutdownNow();
        try
        {
            leaseRetries.awaitTermination(10, TimeUnit.SECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        final List<LeasedRemoval> pending;
        synchronized (pendingRemovals)
        {
            pending = new ArrayList<>(pendingRemovals);
            pendingRemovals.clear();
        }
        try (Arena scratch = Arena.ofConfined())
        {
            for (final LeasedRemoval removal : pending)
            {
                final MemorySegment key = scratch.allocate(removal.key().length + 1L);
                MemorySegment.copy(removal.key(), 0, key, ValueLayout.JAVA_BYTE, 0, removal.key().length);
                removal.batch().complete(removal.index(), removalStatus(forceRemove(key, removal.keyHigh(), removal.keyLow()), true));
            }
        }
    }

    /**
     * @param rc     what the store's remove returned
     * @param forced whether it was forced past a lease
     * @return the status the removal completes with, counted
     */
    TierStatus removalStatus(final int rc, final boolean forced)
    {
        if (rc == 0)
        {
            if (forced)
            {
                stats.forcedRemovals.incrementAndGet();
            }
            parts.decrementObjects();
            return TierStatus.OK;
        }
        if (MooncakeErrors.isMiss(rc))
        {
            return TierStatus.NOT_FOUND;
        }
        logger.log(System.Logger.Level.WARNING, "tier {0}: remove failed with {1}", name, MooncakeErrors.name(rc));
        return MooncakeErrors.failure(rc);
    }

    /** Retries a removal a lease refused, from the lease thread; forces it at its deadline. */
    private void retryLeasedRemoval(final LeasedRemoval removal)
    {
        synchronized (pendingRemovals)
        {
            if (!pendingRemovals.remove(removal))
            {
                return; // close took it
            }
        }
        try (Arena scratch = Arena.ofConfined())
        {
            final MemorySegment key = scratch.allocate(removal.key().length + 1L);
            MemorySegment.copy(removal.key(), 0, key, ValueLayout.JAVA_BYTE, 0, removal.key().length);
            final boolean force = System.nanoTime() - removal.deadlineNanos() >= 0;
            final int rc = force ? forceRemove(key, removal.keyHigh(), removal.keyLow()) : store_c_h.mooncake_store_remove(handle, key, 0);
            if (rc == MooncakeErrors.OBJECT_HAS_LEASE && !force)
            {
                stats.leaseRefusals.incrementAndGet();
                scheduleLeasedRemoval(new LeasedRemoval(removal.batch(), removal.index(), removal.keyHigh(), removal.keyLow(), removal.key(), removal.deadlineNanos(),
                    Math.min(removal.backoffNanos() * 2, TimeUnit.SECONDS.toNanos(1))));
                return;
            }
            removal.batch().complete(removal.index(), removalStatus(rc, force));
        }
        catch (final RuntimeException ex)
        {
            logger.log(System.Logger.Level.ERROR, "tier " + name + ": retrying a removal failed", ex);
            removal.batch().complete(removal.index(), TierStatus.IO_ERROR);
        }
    }

    void scheduleLeasedRemoval(final LeasedRemoval removal)
    {
        synchronized (pendingRemovals)
        {
            pendingRemovals.add(removal);
        }
        final long delay = Math.max(0, Math.min(removal.backoffNanos(), removal.deadlineNanos() - System.nanoTime()));
        try
        {
            leaseRetries.schedule(() -> retryLeasedRemoval(removal), delay, TimeUnit.NANOSECONDS);
        }
        catch (final java.util.concurrent.RejectedExecutionException ex)
        {
            // Closing: close() forces whatever is still pending.
        }
    }


    /** @return the bit of the key's stripe, for masks of the stripes a chunk locks */
    static long stripeBit(final long keyHigh, final long keyLow)
    {
        final long mixed = (keyHigh ^ Long.rotateLeft(keyLow, 29)) * 0x9E3779B97F4A7C15L;
        return 1L << (mixed >>> 58);
    }

    /** Locks in ascending stripe order, the only order anyone takes several in, so no two chunks deadlock. */
    void lockStripes(final long mask, final boolean exclusive)
    {
        for (long m = mask; m != 0; m &= m - 1)
        {
            final ReentrantReadWriteLock lock = stripes[Long.numberOfTrailingZeros(m)];
            if (exclusive)
            {
                lock.writeLock().lock();
            }
            else
            {
                lock.readLock().lock();
            }
        }
    }

    void unlockStripes(final long mask, final boolean exclusive)
    {
        for (long m = mask; m != 0; m &= m - 1)
        {
            final ReentrantReadWriteLock lock = stripes[Long.numberOfTrailingZeros(m)];
            if (exclusive)
            {
                lock.writeLock().unlock();
            }
            else
            {
                lock.readLock().unlock();
            }
        }
    }

    /** A forced removal, under its stripe's write lock so no get of this tier is copying the object. */
    int forceRemove(final MemorySegment key, final long keyHigh, final long keyLow)
    {
        final long bit = stripeBit(keyHigh, keyLow);
        lockStripes(bit, true);
        try
        {
            return store_c_h.mooncake_store_remove(handle, key, 1);
        }
        finally
        {
            unlockStripes(bit, true);
        }
    }
}
