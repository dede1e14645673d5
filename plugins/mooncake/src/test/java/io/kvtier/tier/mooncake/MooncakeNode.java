package io.kvtier.tier.mooncake;

import io.kvtier.spi.PageKey;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierStatus;
import io.kvtier.tck.ContractTierContext;
import io.kvtier.tck.PageArena;
import io.kvtier.tck.PageBytes;
import io.kvtier.tck.RecordingTierBatch;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The "other node" of {@link MooncakeTwoNodeTest}, run in a JVM of its own: a tier contributing a
 * 64 MiB segment backs up a chain of pages, says {@code READY <segment>} on stdout, and keeps its
 * segment (and so the pages) alive until stdin closes.
 *
 * <p>Arguments: master address, library path, chain length, chain seed, object size.
 */
final class MooncakeNode
{
    private MooncakeNode()
    {
    }

    /**
     * @param seed   the chain's seed
     * @param length pages in the chain
     * @return the chain's keys, in order (each page's key stands for the prefix up to it)
     */
    static List<PageKey> chain(final long seed, final int length)
    {
        final SplittableRandom random = new SplittableRandom(seed);
        final List<PageKey> keys = new ArrayList<>();
        for (int i = 0; i < length; i++)
        {
            keys.add(new PageKey(random.nextLong(), random.nextLong()));
        }
        return keys;
    }

    /**
     * @param seed  the chain's seed
     * @param index a page of the chain
     * @return the content seed of that page
     */
    static long contentSeed(final long seed, final int index)
    {
        return seed * 31 + index;
    }

    public static void main(final String[] args) throws Exception
    {
        final String master = args[0];
        final String lib = args[1];
        final int length = Integer.parseInt(args[2]);
        final long seed = Long.parseLong(args[3]);
        final long objectSize = Long.parseLong(args[4]);
        final StorageTier tier = new MooncakeTierProvider(Map.of()).create(new TierConfig("node-a", Map.of(
            "lib", lib,
            "master", master,
            "global-segment-size", "64MiB",
            "local-buffer-size", "4MiB")), new ContractTierContext("node-a", objectSize));
        try (PageArena arena = new PageArena(PageArena.bytesFor(length, objectSize)))
        {
            final List<PageKey> keys = chain(seed, length);
            final List<MemorySegment> sources = arena.slices(length, objectSize);
            for (int i = 0; i < length; i++)
            {
                PageBytes.fill(sources.get(i), contentSeed(seed, i));
            }
            final RecordingTierBatch backup = new RecordingTierBatch("backup", keys, sources);
            tier.write(backup);
            backup.awaitCompletion(Duration.ofSeconds(30));
            for (int i = 0; i < length; i++)
            {
                if (backup.status(i) != TierStatus.OK)
                {
                    System.out.println("FAILED key " + i + " " + backup.status(i));
                    System.exit(2);
                }
            }
            System.out.println("READY " + ((MooncakeTier)tier).segmentName());
            System.out.flush();
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)))
            {
                while (in.readLine() != null)
                {
                    // Hold the segment until the test closes stdin.
                }
            }
        }
        finally
        {
            tier.close();
        }
    }
}
