package io.kvtier.tier.posix;

import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierStatus;
import io.kvtier.tck.ContractTierContext;
import io.kvtier.tck.PageArena;
import io.kvtier.tck.RecordingTierBatch;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
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
 * A writer killed with {@code kill -9} in the middle of writing leaves, in either layout, only whole
 * objects of the latest rounds: with {@code files}, temp files and whole page files, never a torn object
 * under a page's name; with {@code slab}, frames whose header or payload a CRC32C gives away when torn
 * (with {@code slab-frames}, engine-shaped frames whose trailer block the slab keeps in the header),
 * and older frames of rewritten keys that the newer one outranks. A tier started afterwards on the same
 * directory reads every key as the last round the writer completed or the one it was in, whole: never
 * torn, never an older round (a stale frame), never missing (every round completed before the kill
 * reached the filesystem).
 */
class PosixTierKilledWriterTest
{
    @ParameterizedTest
    @ValueSource(strings = {"files", "slab", "slab-frames"})
    void shouldNeverReadATornOrStaleObjectAfterItsWriterWasKilledMidWrite(final String layout, @TempDir final Path dir) throws Exception
    {
        for (int attempt = 0; attempt < 3; attempt++)
        {
            final int completed = killWriterMidWrite(dir.resolve("run" + attempt), layout, attempt);
            readEveryKeyWhole(dir.resolve("run" + attempt), layout, completed);
        }
    }

    /** @return the last round the writer said it completed */
    private static int killWriterMidWrite(final Path dir, final String layout, final int attempt) throws Exception
    {
        final Path out = dir.resolveSibling(dir.getFileName() + ".out");
        final Process writer = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"), PosixWriterProbe.class.getName(), dir.toString(),
            layout)
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
        return (int)said.lines().filter(line -> line.startsWith("round ")).count() - 1;
    }

    private static void readEveryKeyWhole(final Path dir, final String layout, final int completed) throws Exception
    {
        final ContractTierContext context = new ContractTierContext("reader", PosixWriterProbe.OBJECT_SIZE);
        final PosixTier tier = (PosixTier)new PosixTierProvider(true).create(new TierConfig("reader",
            PosixWriterProbe.settings(dir.toString(), layout)), context);
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
            for (int i = 0; i < PosixWriterProbe.KEYS; i++)
            {
                // Round `completed` was acknowledged before the kill; the writer may have been writing the next one.
                assertThat(read.status(i)).as("key %d, written in every round up to %d", i, completed).isEqualTo(TierStatus.OK);
                assertThat(wholeRound(slices.get(i), i, completed, completed + 1, layout))
                    .as("key %d holds the whole bytes of round %d or %d (not torn, not an older round)", i, completed, completed + 1).isTrue();
            }
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

    private static boolean wholeRound(final MemorySegment slice, final int key, final int from, final int to, final String layout)
    {
        for (int round = from; round <= to; round++)
        {
            if (PosixWriterProbe.holds(slice, PosixWriterProbe.seed(key, round), layout))
            {
                return true;
            }
        }
        return false;
    }
}
