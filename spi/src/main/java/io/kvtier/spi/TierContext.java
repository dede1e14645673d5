package io.kvtier.spi;

import java.lang.foreign.MemorySegment;
import java.util.Optional;

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

    /**
     * The SPI version of the engine running the tier, so a plugin built for an older minor version can
     * tell whether a newer engine offers more. The engine has already checked that it runs the version
     * of {@link StorageTierProvider#spiVersion()}.
     *
     * @return the engine's SPI version
     */
    default SpiVersion spiVersion()
    {
        // The default body is the engine's: the SPI classes come from the engine's class loader.
        return SpiVersion.current();
    }

    /**
     * The memory every {@link TierBatch#segment} slice handed to this tier lies inside (the engine's
     * page frames), for a tier whose I/O layer registers memory once to move bytes without copies:
     * io_uring fixed buffers, Mooncake's {@code register_buffer}, 3FS's {@code hf3fs_iovwrap}. A tier
     * may register it at start, and then unregisters it in {@link StorageTier#close()}, before the
     * engine unmaps it; it must still accept a slice outside it (treat it as unregistered memory, for
     * example by registering that for the duration of a batch), since a context may offer none.
     *
     * @return the region, 4 KiB aligned, living as long as the tier; empty when the engine offers none
     */
    // Experimental because only the POSIX tier's io_uring path uses it so far: Mooncake and 3FS may
    // need the region split per NUMA node or handed over as several ranges.
    @Experimental(eta = "2027-06-30")
    default Optional<MemorySegment> transferMemory()
    {
        return Optional.empty();
    }

    /** @return a logger named after the tier */
    default System.Logger logger()
    {
        return System.getLogger("io.kvtier.tier." + tierName());
    }
}
