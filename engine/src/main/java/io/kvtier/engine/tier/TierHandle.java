package io.kvtier.engine.tier;

import io.kvtier.spi.StorageTier;
import io.kvtier.spi.TierCapability;

import java.util.Set;

/**
 * A started tier and what the engine needs to know about it.
 *
 * @param index        the tier's position in configuration order, also its bit in index entries
 * @param name         its configured name
 * @param type         its provider's type
 * @param tier         the tier
 * @param capabilities what it declared, with implications added
 * @param description  its type and, when it gives one, its {@code describe()} line as of its start
 *                     ({@code posix: io=libc, ...}): what the pool records and the commands print
 * @param trusted      whether its reads may land straight in pool pages ({@code tier.<name>.trusted}; by
 *                     default, whether its plugin is on the engine's class path rather than in plugins.dir)
 */
public record TierHandle(int index, String name, String type, StorageTier tier, Set<TierCapability> capabilities, String description,
                         boolean trusted)
{
    /**
     * A trusted tier, described by its type alone.
     *
     * @param index        its position in configuration order
     * @param name         its configured name
     * @param type         its provider's type
     * @param tier         the tier
     * @param capabilities what it declared, with implications added
     */
    public TierHandle(final int index, final String name, final String type, final StorageTier tier, final Set<TierCapability> capabilities)
    {
        this(index, name, type, tier, capabilities, type, true);
    }
}
