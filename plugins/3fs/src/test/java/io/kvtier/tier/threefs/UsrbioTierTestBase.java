package io.kvtier.tier.threefs;

import io.kvtier.spi.PageKey;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierConfig;
import io.kvtier.tck.ContractTierContext;
import io.kvtier.tck.PageArena;
import io.kvtier.tck.PageBytes;
import io.kvtier.tck.RecordingTierBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;

/**
 * What the tests of the 3FS tier on the fake USRBIO library set up alike: a fake mount with a page directory on it, a
 * context of 64 KiB objects, an arena of pages, tiers opened and closed with the test, random keys and batches run to
 * completion. Each test class says which settings its tiers start from.
 */
abstract class UsrbioTierTestBase
{
    static final long SIZE = 64 * 1024;
    static final Duration DEADLINE = Duration.ofSeconds(30);

    @TempDir
    Path root;
    /** The page directory, on the fake mount {@code root/mnt}. */
    Path dir;
    /** The context tiers are opened with; a test may offer transfer memory by replacing it before it opens one. */
    ContractTierContext context;
    PageArena arena;
    final List<StorageTier> opened = new ArrayList<>();

    @BeforeEach
    void setUpFakeMount()
    {
        FakeUsrbio.assumeBuilt();
        FakeUsrbio.reset();
        dir = FakeUsrbio.mount(root);
        context = new ContractTierContext("t", SIZE);
        arena = new PageArena(PageArena.bytesFor(64, SIZE));
    }

    @AfterEach
    void closeTiers()
    {
        FakeUsrbio.reset();
        opened.forEach(StorageTier::close);
        if (arena != null)
        {
            arena.close();
        }
    }

    /**
     * @param base  a test class's settings
     * @param extra the test's own, in key, value pairs, over {@code base}
     * @return both
     */
    static Map<String, String> settings(final Map<String, String> base, final String... extra)
    {
        final Map<String, String> config = new java.util.HashMap<>(base);
        for (int i = 0; i < extra.length; i += 2)
        {
            config.put(extra[i], extra[i + 1]);
        }
        return config;
    }

    /** @return a tier of the 3FS provider, closed with the test */
    StorageTier open(final Map<String, String> config)
    {
        return open(config, Map.of());
    }

    /** @return a tier of the 3FS provider seeing {@code environment}, closed with the test */
    StorageTier open(final Map<String, String> config, final Map<String, String> environment)
    {
        final StorageTier tier = new ThreeFsTierProvider(environment).create(new TierConfig("t", config), context);
        opened.add(tier);
        return tier;
    }

    static RecordingTierBatch run(final Consumer<TierBatch> operation, final String label, final List<PageKey> keys,
                                  final List<MemorySegment> segments)
    {
        final RecordingTierBatch batch = new RecordingTierBatch(label, keys, segments);
        operation.accept(batch);
        return batch.awaitCompletion(DEADLINE);
    }

    static List<PageKey> keys(final int count)
    {
        final List<PageKey> keys = new ArrayList<>();
        for (int i = 0; i < count; i++)
        {
            keys.add(new PageKey(ThreadLocalRandom.current().nextLong(), ThreadLocalRandom.current().nextLong()));
        }
        return keys;
    }

    /** @return a page of the arena for each seed, filled with {@link PageBytes#fill} of it */
    List<MemorySegment> filled(final long... seeds)
    {
        final List<MemorySegment> segments = new ArrayList<>();
        for (final long seed : seeds)
        {
            final MemorySegment segment = arena.slice(SIZE);
            PageBytes.fill(segment, seed);
            segments.add(segment);
        }
        return segments;
    }

    /** What a test does with a pool mapped as the engine maps its own. */
    interface PoolUse
    {
        /**
         * @param file the pool's file in {@code /dev/shm}
         * @param pool its mapping
         * @throws IOException as the test's file operations throw
         */
        void accept(Path file, MemorySegment pool) throws IOException;
    }

    /**
     * Maps a file of {@code pages} pages in {@code /dev/shm} from offset 0, as the engine's pool is, offers it as the transfer
     * memory of the tiers opened next ({@link #context}), runs {@code use}, and deletes the file. Skips without /dev/shm.
     */
    void withShmPool(final int pages, final PoolUse use) throws IOException
    {
        final Path shm = Path.of("/dev/shm");
        org.junit.jupiter.api.Assumptions.assumeTrue(java.nio.file.Files.isDirectory(shm), "skipped: no /dev/shm here");
        final Path file = shm.resolve("kvtier-3fs-test-" + Long.toHexString(ThreadLocalRandom.current().nextLong()));
        try (java.lang.foreign.Arena mapping = java.lang.foreign.Arena.ofShared();
             java.nio.channels.FileChannel channel = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.CREATE_NEW,
                 java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE))
        {
            final MemorySegment pool = channel.map(java.nio.channels.FileChannel.MapMode.READ_WRITE, 0, pages * SIZE, mapping);
            context = new ContractTierContext("t", SIZE, pool);
            use.accept(file, pool);
        }
        finally
        {
            java.nio.file.Files.deleteIfExists(file);
        }
    }

    /** @return pages {@code first} to {@code first + count - 1} of {@code pool} */
    static List<MemorySegment> poolPages(final MemorySegment pool, final int first, final int count)
    {
        final List<MemorySegment> pages = new ArrayList<>();
        for (int i = first; i < first + count; i++)
        {
            pages.add(pool.asSlice(i * SIZE, SIZE));
        }
        return pages;
    }

    /** @return {@code count} pages of the arena filled with seeds {@code firstSeed}, {@code firstSeed + 1}, ... */
    List<MemorySegment> filledFrom(final int count, final long firstSeed)
    {
        final long[] seeds = new long[count];
        for (int i = 0; i < count; i++)
        {
            seeds[i] = firstSeed + i;
        }
        return filled(seeds);
    }
}
