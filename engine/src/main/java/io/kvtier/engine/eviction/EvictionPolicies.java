package io.kvtier.engine.eviction;

import java.util.List;
import java.util.Locale;

/**
 * The eviction policies by name, for the engine's configuration and for {@code kvtier bench replay}, which both
 * build them here so that a replay runs exactly the classes the engine runs.
 *
 * <table>
 *   <caption>Policies</caption>
 *   <tr><th>name</th><th>what it evicts first</th></tr>
 *   <tr><td>{@code lru}</td><td>the least recently touched page ({@link LruPolicy})</td></tr>
 *   <tr><td>{@code chain}</td><td>the same, but a chain's tail before its head ({@link SegmentedPolicy#CHAIN})</td></tr>
 *   <tr><td>{@code probation}</td><td>pages seen for the first time, once they hold half the pool
 *       ({@link SegmentedPolicy#PROBATION})</td></tr>
 *   <tr><td>{@code admission}</td><td>pages seen for the first time ({@link SegmentedPolicy#ADMISSION})</td></tr>
 *   <tr><td>{@code frequency}</td><td>pages seen for the first time, then pages of the least often seen chains
 *       ({@link SegmentedPolicy#FREQUENCY})</td></tr>
 *   <tr><td>{@code adaptive}</td><td>whichever of the four above miniature simulations of the pool find best
 *       lately ({@link AdaptivePolicy}); the {@link #DEFAULT}</td></tr>
 * </table>
 */
public final class EvictionPolicies
{
    /** The policy the engine and the replay use unless told otherwise. */
    public static final String DEFAULT = AdaptivePolicy.NAME;

    private static final List<String> NAMES = List.of(
        LruPolicy.NAME,
        SegmentedPolicy.CHAIN.name(),
        SegmentedPolicy.PROBATION.name(),
        SegmentedPolicy.ADMISSION.name(),
        SegmentedPolicy.FREQUENCY.name(),
        AdaptivePolicy.NAME);

    private EvictionPolicies()
    {
    }

    /** @return every name {@link #forName} accepts, in the order of the table above */
    public static List<String> names()
    {
        return NAMES;
    }

    /**
     * @param name a policy name, case-insensitive
     * @return whether {@link #forName} accepts it
     */
    public static boolean isName(final String name)
    {
        return name != null && NAMES.contains(name.toLowerCase(Locale.ROOT));
    }

    /**
     * Builds a policy for a pool.
     *
     * @param name     one of {@link #names()}, case-insensitive
     * @param capacity the pool's pages: page ids range over {@code [0, capacity)}
     * @return a new policy with every array sized for the capacity
     * @throws IllegalArgumentException naming the allowed values for any other name, or for a negative capacity
     */
    public static EvictionPolicy forName(final String name, final int capacity)
    {
        if (capacity < 0)
        {
            throw new IllegalArgumentException("capacity=" + capacity + " must be at least 0");
        }
        final String key = name == null ? "" : name.toLowerCase(Locale.ROOT);
        if (key.equals(LruPolicy.NAME))
        {
            return new LruPolicy(capacity);
        }
        if (key.equals(AdaptivePolicy.NAME))
        {
            return new AdaptivePolicy(capacity);
        }
        for (final SegmentedPolicy.Setting setting : AdaptivePolicy.CANDIDATES)
        {
            if (key.equals(setting.name()))
            {
                return new SegmentedPolicy(capacity, setting);
            }
        }
        throw new IllegalArgumentException("eviction policy '" + name + "' is not one of " + String.join(", ", NAMES));
    }
}
