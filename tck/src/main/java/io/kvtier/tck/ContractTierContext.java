package io.kvtier.tck;

import io.kvtier.spi.PageKey;
import io.kvtier.spi.TierContext;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The kit's side of a tier: a fixed object size and a record of every
 * {@link TierContext#objectRemoved} callback, which may arrive from any thread.
 */
public final class ContractTierContext implements TierContext
{
    private final String tierName;
    private final long objectSize;
    private final ConcurrentLinkedQueue<PageKey> removed = new ConcurrentLinkedQueue<>();
    private final MemorySegment transferMemory;

    /**
     * @param tierName   the tier's configured name
     * @param objectSize the size of every object, a positive multiple of 4096
     */
    public ContractTierContext(final String tierName, final long objectSize)
    {
        this(tierName, objectSize, null);
    }

    /**
     * @param tierName       the tier's configured name
     * @param objectSize     the size of every object, a positive multiple of 4096
     * @param transferMemory what {@link #transferMemory()} offers, or null for none
     */
    public ContractTierContext(final String tierName, final long objectSize, final MemorySegment transferMemory)
    {
        if (objectSize <= 0 || objectSize % 4096 != 0)
        {
            throw new IllegalArgumentException("objectSize=" + objectSize + " must be a positive multiple of 4096");
        }
        this.tierName = tierName;
        this.objectSize = objectSize;
        this.transferMemory = transferMemory;
    }

    @Override
    public Optional<MemorySegment> transferMemory()
    {
        return Optional.ofNullable(transferMemory);
    }

    @Override
    public String tierName()
    {
        return tierName;
    }

    @Override
    public long objectSize()
    {
        return objectSize;
    }

    @Override
    public void objectRemoved(final long keyHigh, final long keyLow)
    {
        removed.add(new PageKey(keyHigh, keyLow));
    }

    /** @return every key the tier reported as dropped on its own, in the order the reports arrived */
    public List<PageKey> removedKeys()
    {
        return List.copyOf(removed);
    }
}
