package io.kvtier.tier.posix;

import io.kvtier.spi.PageKey;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierStatus;
import io.kvtier.tck.ContractTierContext;
import io.kvtier.tck.PageArena;
import io.kvtier.tck.PageBytes;
import io.kvtier.tck.RecordingTierBatch;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Run in a second JVM by {@link PosixTierKilledWriterTest}: writes batches of large objects into a
 * directory without end, rewriting the same keys with new contents, until the test kills it with
 * {@code kill -9}. Each object's bytes follow from its key and round, so a reader can tell an intact
 * object of any round from a torn one.
 */
public final class PosixWriterProbe
{
    static final long OBJECT_SIZE = 1L << 20;
    static final int KEYS = 16;

    private PosixWriterProbe()
    {
    }

    static PageKey key(final int i)
    {
        return new PageKey(0xC0FFEEL, i);
    }

    static long seed(final int key, final int round)
    {
        return key * 1_000_003L + round;
    }

    public static void main(final String[] args)
    {
        final ContractTierContext context = new ContractTierContext("killed", OBJECT_SIZE);
        final PosixTier tier = (PosixTier)new PosixTierProvider(true).create(new TierConfig("killed", Map.of("dir", args[0], "io-threads", "2")), context);
        final PageArena arena = new PageArena(PageArena.bytesFor(KEYS, OBJECT_SIZE));
        final List<MemorySegment> slices = arena.slices(KEYS, OBJECT_SIZE);
        final List<PageKey> keys = new ArrayList<>();
        for (int i = 0; i < KEYS; i++)
        {
            keys.add(key(i));
        }
        for (int round = 0; ; round++)
        {
            for (int i = 0; i < KEYS; i++)
            {
                PageBytes.fill(slices.get(i), seed(i, round));
            }
            final RecordingTierBatch batch = new RecordingTierBatch("round " + round, keys, slices);
            tier.write(batch);
            batch.awaitCompletion(Duration.ofMinutes(1));
            if (batch.statuses().stream().anyMatch(status -> status != TierStatus.OK))
            {
                System.out.println("failed " + batch.statuses());
            }
            System.out.println("round " + round);
            System.out.flush();
        }
    }
}
