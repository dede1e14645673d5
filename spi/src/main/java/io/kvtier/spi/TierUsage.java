package io.kvtier.spi;

/**
 * A snapshot of how full a tier is.
 *
 * @param usedBytes     bytes held by stored objects
 * @param capacityBytes the most the tier will hold, or {@link #UNBOUNDED}
 * @param objects       number of stored objects, or -1 when the tier cannot tell cheaply
 */
public record TierUsage(long usedBytes, long capacityBytes, long objects)
{
    /** Takes a tier's usage as three numbers, so that a tier can report it without allocating ({@link StorageTier#reportUsage}). */
    @FunctionalInterface
    public interface Consumer
    {
        /**
         * @param usedBytes     bytes in use
         * @param capacityBytes the capacity, {@link #UNBOUNDED} when the tier sets none
         * @param objects       objects held
         */
        void accept(long usedBytes, long capacityBytes, long objects);
    }

    /** Capacity of a tier that sets no limit of its own. */
    public static final long UNBOUNDED = Long.MAX_VALUE;

    /** @return used bytes over capacity, 0 for an unbounded tier */
    public double fill()
    {
        return capacityBytes == UNBOUNDED || capacityBytes <= 0 ? 0.0 : (double)usedBytes / capacityBytes;
    }
}
