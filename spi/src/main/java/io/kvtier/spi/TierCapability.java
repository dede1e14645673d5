package io.kvtier.spi;

import java.util.EnumSet;
import java.util.Set;

/**
 * What a tier promises beyond the base contract. The engine reads these to choose policies; the
 * conformance kit reads them to choose which contract tests apply.
 */
public enum TierCapability
{
    /** Objects survive a restart of the engine and of the tier's own process. */
    PERSISTENT,
    /** Other engines, on this node or others, see what this tier stores (a shared filesystem, 3FS, Mooncake). */
    SHARED,
    /** The tier enforces its own capacity and evicts objects by itself; it reports them through {@link TierContext#objectRemoved}. */
    SELF_EVICTING(PERSISTENT),
    /** Reads and writes move bytes between the segment and the device with no intermediate copy. */
    ZERO_COPY,
    /** The tier can use O_DIRECT or an equivalent, so segments must stay aligned to 4 KiB. */
    DIRECT_IO(ZERO_COPY);

    private final TierCapability[] implied;

    TierCapability(final TierCapability... implied)
    {
        this.implied = implied;
    }

    /**
     * @param declared what a tier declares
     * @return the declared capabilities plus everything they imply
     */
    public static Set<TierCapability> closure(final Set<TierCapability> declared)
    {
        final EnumSet<TierCapability> all = declared.isEmpty() ? EnumSet.noneOf(TierCapability.class) : EnumSet.copyOf(declared);
        boolean grew = true;
        while (grew)
        {
            grew = false;
            for (final TierCapability capability : EnumSet.copyOf(all))
            {
                for (final TierCapability implication : capability.implied)
                {
                    grew |= all.add(implication);
                }
            }
        }
        return all;
    }
}
