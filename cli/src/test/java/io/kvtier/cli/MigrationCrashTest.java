package io.kvtier.cli;

import io.kvtier.client.ClientOptions;
import io.kvtier.client.KvtierClient;
import io.kvtier.client.Namespace;
import io.kvtier.client.PageKeyChain;
import io.kvtier.client.PinnedPages;
import io.kvtier.client.ReservedPages;
import io.kvtier.client.pool.CountersReader;
import io.kvtier.client.pool.MappedPool;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.status.EngineCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code kvtier serve} killed with SIGKILL at random points while a migration moves pages from a small
 * fast tier to a slow one, again and again: after every restart each page ever written is read back from
 * whichever tier holds it, and none may be missing (lost) or differ by a byte (torn).
 */
class MigrationCrashTest
{
    private static final Namespace NAMESPACE = new Namespace("crash-test", "page4", 0, "");
    private static final int PAGE_SIZE = 16 * 1024;
    private static final int PAGES_PER_ROUND = 48;
    private static final int ROUNDS = 5;

    private static PageKeyChain chain(final int round)
    {
        final int tokens = 4 * PAGES_PER_ROUND;
        final int[] ids = IntStream.range(0, tokens).map(t -> round * 1_000_003 + t).toArray();
        return new PageKeyChain(PAGES_PER_ROUND).compute(NAMESPACE, ids, tokens, 4, false);
    }

    private static byte expected(final int round, final int page, final int offset)
    {
        long x = round * 0x9E3779B97F4A7C15L + page * 31L + offset * 0xBF58476D1CE4E5B9L;
        x ^= x >>> 31;
        return (byte)x;
    }

    /** A serve process on the test's config, its output in a file. */
    private record Serve(Process process, Path pool, Path out)
    {
        static Serve start(final Path dir, final int run) throws Exception
        {
            final Path pool = Path.of("/dev/shm/kvtier-crash-test-" + ProcessHandle.current().pid() + "-" + run);
            final Path config = dir.resolve("kvtier-" + run + ".conf");
            Files.write(config, List.of("pool.path = " + pool, "pool.size = 4MiB", "pool.page-size = " + PAGE_SIZE,
                "tier.fast.type = posix", "tier.fast.dir = " + dir.resolve("fast"), "tier.fast.capacity = " + (400L * 20 * 1024),
                "tier.fast.fanout-levels = 1", "tier.fast.layout = files",
                "tier.slow.type = posix", "tier.slow.dir = " + dir.resolve("slow"), "tier.slow.fanout-levels = 1", "tier.slow.layout = files",
                "l3.tiers = fast, slow",
                "migration.fast.target = slow", "migration.fast.trigger = 0.05", "migration.fast.min-age = 0s",
                "migration.fast.rate = 1MiB", "migration.fast.concurrency = 4", "migration.fast.batch = 8"));
            final Path out = dir.resolve("serve-" + run + ".txt");
            final Process process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"), Main.class.getName(), "serve",
                "--config", config.toString()).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!Files.readString(out).contains("kvtier serving"))
            {
                assertThat(process.isAlive()).as("serve is running; output so far: %s", Files.readString(out)).isTrue();
                assertThat(System.nanoTime()).as("serve announced itself in time").isLessThan(deadline);
                Thread.sleep(20);
            }
            return new Serve(process, pool, out);
        }

        Path socket()
        {
            return Path.of(pool + ".sock");
        }

        long counter(final EngineCounter counter) throws IOException
        {
            try (MappedPool mapped = MappedPool.attach(pool))
            {
                return new CountersReader(mapped.counters()).valueOpaque(counter.id());
            }
        }

        void kill() throws InterruptedException
        {
            process.destroyForcibly(); // SIGKILL: no shutdown hook, no close, whatever was in flight stays as it was
            process.waitFor(30, TimeUnit.SECONDS);
        }
    }

    private static long files(final Path dir) throws IOException
    {
        try (Stream<Path> files = Files.walk(dir))
        {
            return files.filter(p -> p.toString().endsWith(".kvp")).count();
        }
    }

    @Test
    void shouldLoseAndTearNoPageWhenKilledAtRandomPointsDuringMigrations(@TempDir final Path dir) throws Exception
    {
        final SplittableRandom random = new SplittableRandom(Long.getLong("kvtier.crash-seed", System.nanoTime()));
        final List<Serve> started = new ArrayList<>();
        long lost = 0;
        long torn = 0;
        long killsDuringMigration = 0;
        try
        {
            Serve serve = Serve.start(dir, 0);
            started.add(serve);
            for (int round = 0; round < ROUNDS; round++)
            {
                try (KvtierClient client = KvtierClient.connect(serve.socket(), ClientOptions.of(PAGES_PER_ROUND, NAMESPACE)))
                {
                    final PageKeyChain keys = chain(round);
                    try (ReservedPages pages = client.reserve(keys))
                    {
                        final int[] lengths = new int[PAGES_PER_ROUND];
                        for (int i = 0; i < PAGES_PER_ROUND; i++)
                        {
                            final MemorySegment page = pages.page(i);
                            for (int b = 0; b < PAGE_SIZE; b++)
                            {
                                page.set(ValueLayout.JAVA_BYTE, b, expected(round, i, b));
                            }
                            lengths[i] = PAGE_SIZE;
                        }
                        assertThat(pages.commit(lengths)).isEqualTo(PAGES_PER_ROUND);
                    }
                    client.flush();
                }
                // Kill while the migration runs: once it has moved a page, after a random delay within its run.
                final long before = serve.counter(EngineCounter.PAGES_MIGRATED);
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (serve.counter(EngineCounter.PAGES_MIGRATED) == before && System.nanoTime() < deadline)
                {
                    Thread.sleep(5);
                }
                Thread.sleep(random.nextInt(400));
                if (serve.counter(EngineCounter.MIGRATIONS_RUNNING) > 0)
                {
                    killsDuringMigration++;
                }
                serve.kill();
                serve = Serve.start(dir, round + 1);
                started.add(serve);
                try (KvtierClient client = KvtierClient.connect(serve.socket(), ClientOptions.of(PAGES_PER_ROUND, NAMESPACE)))
                {
                    for (int r = 0; r <= round; r++)
                    {
                        try (PinnedPages pages = client.acquire(chain(r)))
                        {
                            for (int i = 0; i < PAGES_PER_ROUND; i++)
                            {
                                if (pages.status(i) == PageEntryStatus.MISS || i >= pages.size())
                                {
                                    lost++;
                                    continue;
                                }
                                final MemorySegment page = pages.page(i);
                                boolean exact = pages.payloadLength(i) == PAGE_SIZE;
                                for (int b = 0; exact && b < PAGE_SIZE; b++)
                                {
                                    exact = page.get(ValueLayout.JAVA_BYTE, b) == expected(r, i, b);
                                }
                                if (!exact)
                                {
                                    torn++;
                                }
                            }
                        }
                    }
                }
            }
            serve.kill();
        }
        finally
        {
            for (final Serve serve : started)
            {
                serve.process().destroyForcibly();
                serve.process().waitFor(30, TimeUnit.SECONDS);
                Files.deleteIfExists(serve.pool());
                Files.deleteIfExists(serve.socket());
                Files.deleteIfExists(Path.of(serve.pool() + ".ipc"));
            }
        }
        System.out.printf("migration crash test: %d rounds, %d kills while a migration ran, %d pages in slow, %d in fast; lost %d, torn %d%n",
            ROUNDS, killsDuringMigration, files(dir.resolve("slow")), files(dir.resolve("fast")), lost, torn);
        assertThat(killsDuringMigration).as("kills that landed while a migration ran").isPositive();
        assertThat(files(dir.resolve("slow"))).as("pages the migrations moved").isPositive();
        assertThat(lost).as("pages lost").isZero();
        assertThat(torn).as("pages torn").isZero();
    }
}
