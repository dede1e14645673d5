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
 * object of any round from a torn one, and from one of an older round. Arguments: the directory, then
 * optionally the layout ({@code files} by default, {@code slab}, or {@code slab-frames}: the slab written engine-shaped frames).
 */
public final class PosixWriterProbe
{
    static final long OBJECT_SIZE = 1L << 20;
    static final int KEYS = 16;

    private PosixWriterProbe()
    {
    }

    /**
     * @param dir    the directory
     * @param layout {@code files} or {@code slab}
     * @return the settings of the writer's tier, and of the tier that reads after it
     */
    static Map<String, String> settings(final String dir, final String layout)
    {
        return Map.of("dir", dir, "io-threads", "2", "layout", layout.equals("slab-frames") ? "slab" : layout, "extent-size", "64MiB");
    }

    /**
     * Fills a key's object for a round: noise throughout, or with {@code slab-frames} an engine-shaped frame, whose
     * last block is a trailer's 72 bytes of noise and zeros, so that the slab keeps it in the frame's header.
     */
    static void fill(final MemorySegment object, final long seed, final String layout)
    {
        if (!layout.equals("slab-frames"))
        {
            PageBytes.fill(object, seed);
            return;
        }
        final long last = object.byteSize() - 4096;
        PageBytes.fill(object.asSlice(0, last), seed);
        PageBytes.fill(object.asSlice(last, 72), ~seed);
        object.asSlice(last + 72).fill((byte)0);
    }

    /** @return whether {@code object} holds exactly what {@link #fill} puts there for the seed */
    static boolean holds(final MemorySegment object, final long seed, final String layout)
    {
        if (!layout.equals("slab-frames"))
        {
            return PageBytes.mismatch(object, seed) < 0;
        }
        final long last = object.byteSize() - 4096;
        return PageBytes.mismatch(object.asSlice(0, last), seed) < 0 && PageBytes.mismatch(object.asSlice(last, 72), ~seed) < 0
            && object.asSlice(last + 72).mismatch(MemorySegment.ofArray(new byte[4096 - 72])) < 0;
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
        final String layout = args.length > 1 ? args[1] : "files";
        final PosixTier tier = (PosixTier)new PosixTierProvider(true).create(new TierConfig("killed", settings(args[0], layout)), context);
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
                fill(slices.get(i), seed(i, round), layout);
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
