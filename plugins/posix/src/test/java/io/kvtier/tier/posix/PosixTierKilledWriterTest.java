package io.kvtier.tier.posix;

import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierStatus;
import io.kvtier.tck.ContractTierContext;
import io.kvtier.tck.PageArena;
import io.kvtier.tck.PageBytes;
import io.kvtier.tck.RecordingTierBatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A writer killed with {@code kill -9} in the middle of writing leaves temp files and whole objects,
 * never a torn object under a page's name: a tier started afterwards on the same directory reads every
 * key either as one whole round's bytes or as missing.
 */
class PosixTierKilledWriterTest
{
    @Test
    void shouldNeverReadATornObjectAfterItsWriterWasKilledMidWrite(@TempDir final Path dir) throws Exception
    {
        for (int attempt = 0; attempt < 3; attempt++)
        {
            final int rounds = killWriterMidWrite(dir.resolve("run" + attempt), attempt);
            readEveryKeyWhole(dir.resolve("run" + attempt), rounds);
        }
    }

    /** @return how many rounds the writer may have started, the one it was killed in included */
    private static int killWriterMidWrite(final Path dir, final int attempt) throws Exception
    {
        final Path out = dir.resolveSibling(dir.getFileName() + ".out");
        final Process writer = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"), PosixWriterProbe.class.getName(), dir.toString())
            .redirectErrorStream(true).redirectOutput(out.toFile()).start();
        try
        {
            // Let it complete a few rounds, then kill it at a point that varies from attempt to attempt.
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!Files.readString(out).contains("round " + (2 + attempt)))
            {
                assertThat(writer.isAlive()).as("the writer runs; it said: %s", Files.readString(out)).isTrue();
                assertThat(System.nanoTime()).as("the writer completes rounds").isLessThan(deadline);
                Thread.sleep(5);
            }
            Thread.sleep(3L * attempt);
        }
        finally
        {
            writer.destroyForcibly();
            assertThat(writer.waitFor(60, TimeUnit.SECONDS)).isTrue();
        }
        final String said = Files.readString(out);
        assertThat(said).doesNotContain("failed");
        return (int)said.lines().filter(line -> line.startsWith("round ")).count() + 1;
    }

    private static void readEveryKeyWhole(final Path dir, final int rounds) throws Exception
    {
        final ContractTierContext context = new ContractTierContext("reader", PosixWriterProbe.OBJECT_SIZE);
        final PosixTier tier = (PosixTier)new PosixTierProvider(true).create(new TierConfig("reader", Map.of("dir", dir.toString())), context);
        try (PageArena arena = new PageArena(PageArena.bytesFor(PosixWriterProbe.KEYS, PosixWriterProbe.OBJECT_SIZE)))
        {
            final List<MemorySegment> slices = arena.slices(PosixWriterProbe.KEYS, PosixWriterProbe.OBJECT_SIZE);
            final List<io.kvtier.spi.PageKey> keys = new ArrayList<>();
            for (int i = 0; i < PosixWriterProbe.KEYS; i++)
            {
                keys.add(PosixWriterProbe.key(i));
            }
            final RecordingTierBatch read = new RecordingTierBatch("read after the kill", keys, slices);
            tier.read(read);
            read.awaitCompletion(Duration.ofMinutes(1));
            int whole = 0;
            for (int i = 0; i < PosixWriterProbe.KEYS; i++)
            {
                final TierStatus status = read.status(i);
                assertThat(status).as("key %d", i).isIn(TierStatus.OK, TierStatus.NOT_FOUND);
                if (status == TierStatus.OK)
                {
                    assertThat(wholeRound(slices.get(i), i, rounds)).as("key %d holds one whole round's bytes", i).isTrue();
                    whole++;
                }
            }
            assertThat(whole).as("objects written in the completed rounds").isPositive();
        }
        finally
        {
            tier.close();
        }
        try (Stream<Path> files = Files.walk(dir))
        {
            assertThat(files.filter(f -> f.getFileName().toString().endsWith(".kvp")).count()).isLessThanOrEqualTo(PosixWriterProbe.KEYS);
        }
    }

    private static boolean wholeRound(final MemorySegment slice, final int key, final int rounds)
    {
        for (int round = 0; round < rounds; round++)
        {
            if (PageBytes.mismatch(slice, PosixWriterProbe.seed(key, round)) < 0)
            {
                return true;
            }
        }
        return false;
    }
}
