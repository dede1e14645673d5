package io.kvtier.bench.chaos;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the fault tiers' logs (one JSON object a line, {@code {"t_ms":..,"kind":..,"key":..,"op":..}}):
 * counts each kind, and collects the keys of objects the injector destroyed (bit flips, replacements, torn
 * writes, and short reads, after which the engine removes the object it could not verify), which the campaign
 * does not count as lost by the engine. The keys are the tier's object names (docs/keys.md's L3 names).
 */
final class FaultLogs
{
    /** The fault tier's kinds, in the order its interface names them. */
    static final String[] KINDS = {"eio-read", "eio-write", "enospc-write", "slow-read", "stall-read", "block-call", "short-read",
        "torn-write", "bit-flip", "replace", "late-write"};

    private static final Pattern KIND = Pattern.compile("\"kind\"\\s*:\\s*\"([a-z-]+)\"");
    private static final Pattern KEY = Pattern.compile("\"key\"\\s*:\\s*\"([0-9a-fA-F]{32})\"");

    /** Static methods only. */
    private FaultLogs()
    {
    }

    /**
     * @param log       a fault log (absent: nothing injected)
     * @param counts    counts per kind, added to
     * @param destroyed keys (32 hex digits, lower case) of objects destroyed at rest, added to
     * @throws IOException if the log cannot be read
     */
    static void read(final Path log, final Map<String, Long> counts, final Set<String> destroyed) throws IOException
    {
        if (!Files.exists(log))
        {
            return;
        }
        for (final String line : Files.readAllLines(log))
        {
            final Matcher kind = KIND.matcher(line);
            if (!kind.find())
            {
                continue;
            }
            counts.merge(kind.group(1), 1L, Long::sum);
            final Matcher key = KEY.matcher(line);
            if (key.find() && Set.of("bit-flip", "replace", "torn-write", "short-read").contains(kind.group(1)))
            {
                destroyed.add(key.group(1).toLowerCase());
            }
        }
    }

    /** @return a map with every tier kind at 0 */
    static Map<String, Long> zeros()
    {
        final Map<String, Long> counts = new TreeMap<>();
        for (final String kind : KINDS)
        {
            counts.put(kind, 0L);
        }
        return counts;
    }
}
