package io.kvtier.bench.replay;

import java.util.List;
import java.util.Locale;

/**
 * An eviction policy to replay a trace under: {@link #lru()}, or an offline {@link #belady()} that needs
 * the whole trace first to know each block's next use. Instances are immutable and reusable.
 */
public abstract sealed class ReplayPolicy permits ReplayPolicy.Lru, ReplayPolicy.Belady
{
    private static final List<String> NAMES = List.of("lru", "belady", "belady-bypass", "belady-block", "belady-block-bypass");

    private ReplayPolicy()
    {
    }

    /** @return least recently used eviction, on the engine's {@code KeyTable} and {@code IntLruList} */
    public static ReplayPolicy lru()
    {
        return Lru.INSTANCE;
    }

    /**
     * @return Belady's offline eviction as the trace README computes it: next use per {@link NextUse#REQUEST},
     *         {@link Admission#ALWAYS}
     */
    public static ReplayPolicy belady()
    {
        return belady(NextUse.REQUEST, Admission.ALWAYS);
    }

    /**
     * @param nextUse   how next use is measured
     * @param admission whether a block may bypass a full cache
     * @return Belady's offline eviction with those semantics
     */
    public static ReplayPolicy belady(final NextUse nextUse, final Admission admission)
    {
        return new Belady(nextUse, admission);
    }

    /**
     * Looks a policy up by the name {@link #name()} gives, as a command line would.
     *
     * @param name one of {@link #names()}, case-insensitive
     * @return the policy
     * @throws IllegalArgumentException naming the allowed values for any other name
     */
    public static ReplayPolicy forName(final String name)
    {
        return switch (name == null ? "" : name.toLowerCase(Locale.ROOT))
        {
            case "lru" -> lru();
            case "belady" -> belady();
            case "belady-bypass" -> belady(NextUse.REQUEST, Admission.BYPASS);
            case "belady-block" -> belady(NextUse.BLOCK, Admission.ALWAYS);
            case "belady-block-bypass" -> belady(NextUse.BLOCK, Admission.BYPASS);
            default -> throw new IllegalArgumentException("--policy=" + name + " is not a replay policy; expected one of " + String.join(", ", NAMES));
        };
    }

    /** @return every name {@link #forName} accepts */
    public static List<String> names()
    {
        return NAMES;
    }

    /** @return the policy's name, as {@link #forName} accepts it */
    public abstract String name();

    /** @return how the policy needs next use measured, or {@code null} for an online policy */
    abstract NextUse nextUse();

    /**
     * @param capacityBlocks the most resident blocks, at least 1
     * @param residentBound  the most distinct blocks the replay can bring (its total blocks when the trace
     *                       is in memory), or {@link TraceReplay#UNBOUNDED} when streaming
     * @return an empty cache under this policy
     */
    abstract BlockCache newCache(long capacityBlocks, long residentBound);

    @Override
    public String toString()
    {
        return name();
    }

    /** Least recently used. */
    static final class Lru extends ReplayPolicy
    {
        private static final Lru INSTANCE = new Lru();

        @Override
        public String name()
        {
            return "lru";
        }

        @Override
        NextUse nextUse()
        {
            return null;
        }

        @Override
        BlockCache newCache(final long capacityBlocks, final long residentBound)
        {
            return new LruCache(capacityBlocks, residentBound);
        }
    }

    /** Furthest next use. */
    static final class Belady extends ReplayPolicy
    {
        private final NextUse nextUse;
        private final Admission admission;

        Belady(final NextUse nextUse, final Admission admission)
        {
            if (nextUse == null || admission == null)
            {
                throw new NullPointerException("nextUse=" + nextUse + ", admission=" + admission);
            }
            this.nextUse = nextUse;
            this.admission = admission;
        }

        @Override
        public String name()
        {
            return "belady" + (nextUse == NextUse.BLOCK ? "-block" : "") + (admission == Admission.BYPASS ? "-bypass" : "");
        }

        @Override
        NextUse nextUse()
        {
            return nextUse;
        }

        @Override
        BlockCache newCache(final long capacityBlocks, final long residentBound)
        {
            return new BeladyCache(capacityBlocks, admission, residentBound);
        }

        @Override
        public boolean equals(final Object other)
        {
            return other instanceof final Belady that && nextUse == that.nextUse && admission == that.admission;
        }

        @Override
        public int hashCode()
        {
            return 31 * nextUse.hashCode() + admission.hashCode();
        }
    }
}
