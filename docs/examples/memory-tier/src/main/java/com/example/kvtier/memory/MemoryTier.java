package com.example.kvtier.memory;

import io.kvtier.spi.PageKey;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierStatus;
import io.kvtier.spi.TierUsage;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Objects in heap arrays, one per key. Every operation completes its keys in the calling thread
 * before it returns, which the SPI allows; a tier with real I/O would hand them to its own threads.
 */
final class MemoryTier implements StorageTier
{
    private final String name;
    private final long capacity;
    private final Map<PageKey, byte[]> objects = new ConcurrentHashMap<>();
    private final Object accounting = new Object();
    private long usedBytes;
    // Batches hold the read side while they run; close() takes the write side, so it returns only
    // after every batch handed over before it has completed.
    private final ReadWriteLock gate = new ReentrantReadWriteLock();
    private boolean closed;

    MemoryTier(final String name, final long capacity)
    {
        this.name = name;
        this.capacity = capacity;
    }

    @Override
    public String name()
    {
        return name;
    }

    @Override
    public String describe()
    {
        return "objects on the Java heap";
    }

    @Override
    public void exists(final TierBatch batch)
    {
        if (enter(batch))
        {
            try
            {
                final int size = batch.size();
                for (int i = 0; i < size; i++)
                {
                    batch.complete(i, objects.containsKey(batch.key(i)) ? TierStatus.OK : TierStatus.NOT_FOUND);
                }
            }
            finally
            {
                gate.readLock().unlock();
            }
        }
    }

    @Override
    public void read(final TierBatch batch)
    {
        if (enter(batch))
        {
            try
            {
                final int size = batch.size();
                for (int i = 0; i < size; i++)
                {
                    batch.complete(i, readOne(batch.key(i), batch.segment(i)));
                }
            }
            finally
            {
                gate.readLock().unlock();
            }
        }
    }

    private TierStatus readOne(final PageKey key, final MemorySegment destination)
    {
        // A stored array is never changed, only replaced, so a reader sees a whole old or a whole new object.
        final byte[] object = objects.get(key);
        if (object == null)
        {
            return TierStatus.NOT_FOUND;
        }
        if (object.length != destination.byteSize())
        {
            return TierStatus.CORRUPT;
        }
        MemorySegment.copy(object, 0, destination, ValueLayout.JAVA_BYTE, 0, object.length);
        return TierStatus.OK;
    }

    @Override
    public void write(final TierBatch batch)
    {
        if (enter(batch))
        {
            try
            {
                // Read once, before the loop: after the last completion the batch is the engine's again,
                // size() included, and the engine may already be reusing it for another batch.
                final int size = batch.size();
                for (int i = 0; i < size; i++)
                {
                    batch.complete(i, writeOne(batch.key(i), batch.segment(i).toArray(ValueLayout.JAVA_BYTE)));
                }
            }
            finally
            {
                gate.readLock().unlock();
            }
        }
    }

    private TierStatus writeOne(final PageKey key, final byte[] object)
    {
        synchronized (accounting)
        {
            final byte[] previous = objects.get(key);
            final long after = usedBytes - (previous == null ? 0 : previous.length) + object.length;
            if (after > capacity)
            {
                return TierStatus.NO_SPACE;
            }
            objects.put(key, object);
            usedBytes = after;
            return TierStatus.OK;
        }
    }

    @Override
    public void remove(final TierBatch batch)
    {
        if (enter(batch))
        {
            try
            {
                final int size = batch.size();
                for (int i = 0; i < size; i++)
                {
                    batch.complete(i, removeOne(batch.key(i)));
                }
            }
            finally
            {
                gate.readLock().unlock();
            }
        }
    }

    private TierStatus removeOne(final PageKey key)
    {
        synchronized (accounting)
        {
            final byte[] removed = objects.remove(key);
            if (removed == null)
            {
                return TierStatus.NOT_FOUND;
            }
            usedBytes -= removed.length;
            return TierStatus.OK;
        }
    }

    @Override
    public TierUsage usage()
    {
        synchronized (accounting)
        {
            return new TierUsage(usedBytes, capacity, objects.size());
        }
    }

    @Override
    public void close()
    {
        gate.writeLock().lock();
        try
        {
            closed = true;
            synchronized (accounting)
            {
                objects.clear();
                usedBytes = 0;
            }
        }
        finally
        {
            gate.writeLock().unlock();
        }
    }

    /**
     * @return true, holding the read side of the gate, when the batch may run; false, with every key
     *         completed CLOSED, after close()
     */
    private boolean enter(final TierBatch batch)
    {
        gate.readLock().lock();
        if (!closed)
        {
            return true;
        }
        gate.readLock().unlock();
        final int size = batch.size();
        for (int i = 0; i < size; i++)
        {
            batch.complete(i, TierStatus.CLOSED);
        }
        return false;
    }
}
