package io.kvtier.tier.faults;

import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierConfigException;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The settings of a {@code faults} tier, validated: each error names {@code tier.<name>.<key>}, the
 * value and what is allowed. Every {@code wrap.KEY} goes to the wrapped tier as {@code KEY}.
 */
final class FaultSettings
{
    static final String WRAP = "wrap";
    static final String WRAP_PREFIX = "wrap.";
    static final String SEED = "seed";
    static final String FAULTS = "faults";
    static final String SLOW = "slow";
    static final String STALL = "stall";
    static final String FAULT_LOG = "fault-log";
    static final String FAULT_CONTROL = "fault-control";
    static final String UNSAFE_LATE_WRITE = "unsafe-late-write";

    static final Duration SLOW_DEFAULT = Duration.ofMillis(50);
    /** Past the engine's default l3.io-timeout (30 s); set it past the l3.io-timeout in force. */
    static final Duration STALL_DEFAULT = Duration.ofSeconds(31);

    /** Every key but the wrapped tier's own. */
    static final Set<String> KNOWN = Set.of(WRAP, SEED, FAULTS, SLOW, STALL, FAULT_LOG, FAULT_CONTROL, UNSAFE_LATE_WRITE);

    final String tierName;
    final String wrap;
    final Map<String, String> wrapped;
    final long seed;
    final boolean seedGiven;
    final FaultRates rates;
    final Duration slow;
    final Duration stall;
    final Path faultLog;
    final Path faultControl;
    final boolean unsafeLateWrite;

    private FaultSettings(final TierConfig config)
    {
        tierName = config.tierName();
        final Map<String, String> inner = new LinkedHashMap<>();
        for (final Map.Entry<String, String> entry : config.values().entrySet())
        {
            final String key = entry.getKey();
            if (key.startsWith(WRAP_PREFIX) && key.length() > WRAP_PREFIX.length())
            {
                inner.put(key.substring(WRAP_PREFIX.length()), entry.getValue());
            }
            else if (!KNOWN.contains(key))
            {
                throw new TierConfigException(config.qualified(key), "unknown setting " + config.qualified(key) + ": this tier accepts "
                    + new TreeSet<>(KNOWN) + " and wrap.<key> for each setting of the wrapped tier");
            }
        }
        wrapped = Map.copyOf(inner);
        wrap = config.string(WRAP);
        seedGiven = config.has(SEED);
        seed = seedGiven ? parseSeed(config) : ThreadLocalRandom.current().nextLong();
        final String faults = config.string(FAULTS, "");
        try
        {
            rates = FaultRates.parse(faults);
        }
        catch (final IllegalArgumentException ex)
        {
            throw config.invalid(FAULTS, faults, "kind:rate items separated by commas (" + ex.getMessage() + "); the kinds are "
                + FaultKind.names(), ex);
        }
        slow = config.duration(SLOW, SLOW_DEFAULT);
        stall = config.duration(STALL, STALL_DEFAULT);
        if (stall.isZero() || stall.isNegative())
        {
            throw config.invalid(STALL, config.string(STALL), "a duration above zero, past the engine's l3.io-timeout", null);
        }
        faultLog = config.has(FAULT_LOG) ? config.path(FAULT_LOG) : null;
        faultControl = config.has(FAULT_CONTROL) ? config.path(FAULT_CONTROL) : null;
        unsafeLateWrite = config.bool(UNSAFE_LATE_WRITE, false);
    }

    /**
     * @param config the tier's settings
     * @return them, validated
     * @throws TierConfigException naming the key at fault
     */
    static FaultSettings parse(final TierConfig config)
    {
        return new FaultSettings(config);
    }

    private static long parseSeed(final TierConfig config)
    {
        final String text = config.string(SEED);
        try
        {
            return Long.parseLong(text);
        }
        catch (final NumberFormatException ex)
        {
            throw config.invalid(SEED, text, "a whole number (a Java long)", ex);
        }
    }

    /**
     * @param key a setting
     * @return it as the operator wrote it
     */
    String qualified(final String key)
    {
        return "tier." + tierName + "." + key;
    }
}
