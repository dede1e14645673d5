package io.kvtier.spi;

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
