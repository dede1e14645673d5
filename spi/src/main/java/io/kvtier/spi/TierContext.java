package io.kvtier.spi;

import java.lang.foreign.MemorySegment;

/**
 * What the engine tells a tier when creating it, and how the tier talks back.
 */
public interface TierContext
{
    /** @return the tier's configured name */
    String tierName();

    /**
     * @return the size in bytes of every object the engine will read or write: one page frame. A
     *         multiple of 4096.
     */
    long objectSize();

    /**
     * The memory every {@code read} and {@code write} segment of this tier's batches is a slice of: the
     * engine's page frames, mapped for the engine's lifetime. A backend that must register memory
     * before it moves bytes from or into it (RDMA, Mooncake's transfer engine) registers this once at
     * start instead of each batch's slices, and unregisters it in {@link StorageTier#close()}, before
     * the engine unmaps it. A tier must still accept segments outside it (tests, tools), for example
     * by registering those for the duration of a batch.
     *
     * @return the region, or {@link MemorySegment#NULL} when the caller cannot name one (the default)
     */
    default MemorySegment hostMemory()
    {
        return MemorySegment.NULL;
    }

    /**
     * Tells the engine that the tier dropped an object on its own (capacity eviction, expiry), so
     * the engine stops counting on it. May be called from any thread; must not block.
     *
     * @param keyHigh the object's key, high half
     * @param keyLow  the object's key, low half
     */
    default void objectRemoved(final long keyHigh, final long keyLow)
    {
    }

    /** @return a logger named after the tier */
    default System.Logger logger()
    {
        return System.getLogger("io.kvtier.tier." + tierName());
    }
}
