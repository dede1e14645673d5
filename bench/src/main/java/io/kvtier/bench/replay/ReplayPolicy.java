package io.kvtier.bench.replay;

import io.kvtier.engine.eviction.EvictionPolicies;
import io.kvtier.engine.eviction.LruPolicy;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * An eviction policy to replay a trace under: one of the engine's own policies ({@link #engine}, {@link #lru()},
 * {@link #defaultPolicy()}), run through the same classes the engine runs, or an offline {@link #belady()} that
 * needs the whole trace first to know each block's next use. Instances are immutable and reusable.
 */
public abstract sealed class ReplayPolicy permits ReplayPolicy.Engine, ReplayPolicy.Belady
{
    private static final List<String> BELADY_NAMES = List.of("belady", "belady-bypass", "belady-block", "belady-block-bypass");
    private static final List<String> NAMES = concat(EvictionPolicies.names(), BELADY_NAMES);

    private ReplayPolicy()
    {
    }

    private static List<String> concat(final List<String> online, final List<String> offline)
    {
        final List<String> all = new ArrayList<>(online);
        all.addAll(offline);
        return List.copyOf(all);
    }

    /** @return least recently used eviction: the engine's {@link LruPolicy} on its {@code KeyTable} */
    public static ReplayPolicy lru()
    {
        return engine(LruPolicy.NAME);
    }

    /** @return the engine's default policy, {@link EvictionPolicies#DEFAULT} */
    public static ReplayPolicy defaultPolicy()
    {
        return engine(EvictionPolicies.DEFAULT);
    }

    /**
     * @param name one of {@link EvictionPolicies#names()}, case-insensitive
     * @return that engine policy, replayed on the engine's {@code KeyTable}
     * @throws IllegalArgumentException for any other name
     */
    public static ReplayPolicy engine(final String name)
    {
        if (!EvictionPolicies.isName(name))
        {
            throw new IllegalArgumentException("'" + name + "' is not an engine eviction policy; expected one of " + String.join(", ", EvictionPolicies.names()));
        }
        return new Engine(name.toLowerCase(Locale.ROOT));
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
        final String key = name == null ? "" : name.toLowerCase(Locale.ROOT);
        if (EvictionPolicies.isName(key))
        {
            return engine(key);
        }
        return switch (key)
        {
            case "belady" -> belady();
            case "belady-bypass" -> belady(NextUse.REQUEST, Admission.BYPASS);
            case "belady-block" -> belady(NextUse.BLOCK, Admission.ALWAYS);
            case "belady-block-bypass" -> belady(NextUse.BLOCK, Admission.BYPASS);
            default -> throw new IllegalArgumentException("--policy=" + name + " is not a replay policy; expected one of " + String.join(", ", NAMES));
        };
    }

    /** @return every name {@link #forName} accepts: the engine's policies, then the offline ones */
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

    /** One of the engine's online policies. */
    static final class Engine extends ReplayPolicy
    {
        private final String name;

        Engine(final String name)
        {
            this.name = name;
        }

        @Override
        public String name()
        {
            return name;
        }

        @Override
        NextUse nextUse()
        {
            return null;
        }

        @Override
        BlockCache newCache(final long capacityBlocks, final long residentBound)
        {
            return new PolicyCache(name, capacityBlocks, residentBound);
        }

        @Override
        public boolean equals(final Object other)
        {
            return other instanceof final Engine that && name.equals(that.name);
        }

        @Override
        public int hashCode()
        {
            return name.hashCode();
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
