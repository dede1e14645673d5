package io.kvtier.tier.posix;

import io.kvtier.spi.PageKey;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.StorageTierProvider;
import io.kvtier.spi.TierConfig;
import io.kvtier.tck.ContractTierContext;
import io.kvtier.tck.PageArena;
import io.kvtier.tck.PageBytes;
import io.kvtier.tck.RecordingTierBatch;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;

/**
 * What {@link PosixTierTest} and {@link PosixTierSlabTest} set up alike: tiers opened on a directory
 * with settings given in pairs, page arenas, random keys, and batches run to completion. It closes the
 * tiers and arenas it made, so each test class only says which settings its tiers start from.
 */
final class PosixTierFixture implements AutoCloseable
{
    /** How long a batch may take before a test fails naming it. */
    static final Duration DEADLINE = Duration.ofSeconds(30);

    private final String name;
    private final List<StorageTier> tiers = new ArrayList<>();
    private final List<PageArena> arenas = new ArrayList<>();
    private final SplittableRandom random = new SplittableRandom();

    /**
     * @param name the name every tier is opened under
     */
    PosixTierFixture(final String name)
    {
        this.name = name;
    }

    /**
     * Opens a tier, closed with the fixture unless {@link #close(PosixTier)} closes it first.
     *
     * @param provider the provider that makes it
     * @param context  its context (object size, transfer memory)
     * @param dir      its directory
     * @param defaults the test class's settings, in pairs, before {@code settings}
     * @param settings the test's own settings, in pairs, over {@code defaults}
     * @return the tier
     */
    PosixTier open(final StorageTierProvider provider, final ContractTierContext context, final Path dir, final List<String> defaults,
                   final String... settings)
    {
        final Map<String, String> config = new HashMap<>();
        config.put("dir", dir.toString());
        putPairs(config, defaults.toArray(new String[0]));
        putPairs(config, settings);
        final PosixTier tier = (PosixTier)provider.create(new TierConfig(name, config), context);
        tiers.add(tier);
        return tier;
    }

    private static void putPairs(final Map<String, String> config, final String[] pairs)
    {
        if (pairs.length % 2 != 0)
        {
            throw new IllegalArgumentException("settings come in key, value pairs; got " + pairs.length + " strings");
        }
        for (int i = 0; i < pairs.length; i += 2)
        {
            config.put(pairs[i], pairs[i + 1]);
        }
    }

    /** Deletes a directory and everything under it: for directories a test makes outside its {@code @TempDir}. */
    static void deleteTree(final Path root) throws IOException
    {
        try (Stream<Path> files = Files.walk(root))
        {
            for (final Path file : files.sorted(Comparator.reverseOrder()).toList())
            {
                Files.deleteIfExists(file);
            }
        }
    }

    /** Closes a tier before the fixture does (a restart). */
    void close(final PosixTier tier)
    {
        tier.close();
        tiers.remove(tier);
    }

    /** @return an arena of {@code slices} slices of {@code sliceSize} bytes, closed with the fixture */
    PageArena arena(final int slices, final long sliceSize)
    {
        final PageArena arena = new PageArena(PageArena.bytesFor(slices, sliceSize));
        arenas.add(arena);
        return arena;
    }

    /** @return {@code count} new random keys */
    List<PageKey> keys(final int count)
    {
        final List<PageKey> keys = new ArrayList<>();
        for (int i = 0; i < count; i++)
        {
            keys.add(new PageKey(random.nextLong(), random.nextLong()));
        }
        return keys;
    }

    /** Writes each key's bytes ({@link PageBytes#fill} of {@code seed + i}) and waits for the batch. */
    static RecordingTierBatch write(final StorageTier tier, final List<PageKey> keys, final long seed, final PageArena arena, final long size)
    {
        final List<MemorySegment> sources = arena.slices(keys.size(), size);
        for (int i = 0; i < keys.size(); i++)
        {
            PageBytes.fill(sources.get(i), seed + i);
        }
        final RecordingTierBatch batch = new RecordingTierBatch("write", keys, sources);
        tier.write(batch);
        return batch.awaitCompletion(DEADLINE);
    }

    /** Reads the keys into new slices of the arena and waits for the batch. */
    static RecordingTierBatch read(final StorageTier tier, final List<PageKey> keys, final PageArena arena, final long size)
    {
        final RecordingTierBatch batch = new RecordingTierBatch("read", keys, arena.slices(keys.size(), size));
        tier.read(batch);
        return batch.awaitCompletion(DEADLINE);
    }

    /** Probes the keys and waits for the batch. */
    static RecordingTierBatch exists(final StorageTier tier, final List<PageKey> keys)
    {
        final RecordingTierBatch batch = RecordingTierBatch.ofKeys("exists", keys);
        tier.exists(batch);
        return batch.awaitCompletion(DEADLINE);
    }

    /** Removes the keys and waits for the batch. */
    static RecordingTierBatch remove(final StorageTier tier, final List<PageKey> keys)
    {
        final RecordingTierBatch batch = RecordingTierBatch.ofKeys("remove", keys);
        tier.remove(batch);
        return batch.awaitCompletion(DEADLINE);
    }

    /** Closes every tier still open, then the arenas their pages lived in. */
    @Override
    public void close()
    {
        tiers.forEach(StorageTier::close);
        tiers.clear();
        arenas.forEach(PageArena::close);
        arenas.clear();
    }
}
