package io.kvtier.tier.support;

import io.kvtier.spi.StorageTier;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierContext;

/**
 * A tier provider that can run its slab layout over a transport another tier supplies: the POSIX tier's, for the 3FS
 * tier, which finds it by type through the SPI and so does not link against it.
 */
public interface SlabTierProvider
{
    /**
     * @param config     the slab's settings, in the providing tier's keys ({@code layout = slab} among them)
     * @param context    the engine's side
     * @param transports each I/O thread's transport
     * @return the running tier
     */
    StorageTier createSlab(TierConfig config, TierContext context, SlabTransport.Factory transports);
}
