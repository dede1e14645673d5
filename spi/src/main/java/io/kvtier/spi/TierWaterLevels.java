package io.kvtier.spi;

/**
 * The fill levels at which a tier that evicts by itself ({@link TierCapability#SELF_EVICTING}) starts
 * evicting and stops, as fractions of its capacity. The engine reads them to decide where backups and
 * migrations may go: a tier at its high level is full for them, and a migration out of a tier must start
 * below its high level.
 *
 * @param high the fill above which the tier evicts, in (0, 1]
 * @param low  the fill it evicts down to, in [0, high)
 */
public record TierWaterLevels(double high, double low)
{
    /**
     * @throws IllegalArgumentException when the levels are out of range or out of order
     */
    public TierWaterLevels
    {
        if (!(high > 0 && high <= 1) || !(low >= 0 && low < high))
        {
            throw new IllegalArgumentException("water levels need 0 <= low < high <= 1, got high " + high + " and low " + low);
        }
    }
}
