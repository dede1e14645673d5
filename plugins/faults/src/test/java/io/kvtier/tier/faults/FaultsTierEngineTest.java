package io.kvtier.tier.faults;

import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.spi.PageKey;
import io.kvtier.spi.TierConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static io.kvtier.tier.faults.FaultsEngine.acquireChecked;
import static io.kvtier.tier.faults.FaultsEngine.awaitTrue;
import static io.kvtier.tier.faults.FaultsEngine.control;
import static io.kvtier.tier.faults.FaultsEngine.faults;
import static io.kvtier.tier.faults.FaultsEngine.inL3Only;
import static io.kvtier.tier.faults.FaultsEngine.key;
import static io.kvtier.tier.faults.FaultsEngine.keys;
import static io.kvtier.tier.faults.FaultsEngine.report;
import static io.kvtier.tier.faults.FaultsEngine.settings;
import static io.kvtier.tier.faults.FaultsEngine.start;
import static io.kvtier.tier.faults.FaultsEngine.tier;
import static io.kvtier.tier.faults.FaultsEngine.tierErrors;
import static io.kvtier.tier.faults.FaultsEngine.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Each fault kind injected into a real engine's L3 tier (the faults tier over posix): the engine turns
 * it into a miss, an error counted on the tier, or a timeout, and every page it serves is checked
 * against its key's bytes. Every fault is also found in the fault log, in the format kvtier chaos reads.
 */
class FaultsTierEngineTest
{
    private static final int N = 16;

    private static Set<PageKey> keysOf(final Session session, final int n)
    {
        final java.util.HashSet<PageKey> keys = new java.util.HashSet<>();
        for (int i = 0; i < n; i++)
        {
            keys.add(key(session, i));
        }
        return keys;
    }

    private static List<FaultsEngine.Fault> of(final Path dir, final String kind) throws Exception
    {
        return faults(dir).stream().filter(fault -> fault.kind().equals(kind)).toList();
    }

    private static Set<PageKey> faultKeys(final Path dir, final String kind) throws Exception
    {
        return of(dir, kind).stream().map(FaultsEngine.Fault::key).collect(Collectors.toSet());
    }

    @Test
    void shouldAnswerEioOnReadsAsMissesCountedOnTheTierAndServeThemOnceHealed(@TempDir final Path dir) throws Exception
    {
        try (Engine engine = start(settings(dir, "eio-read:1", 64));
             Session session = engine.openSession())
        {
            inL3Only(session, 1, N);
            assertThat(acquireChecked(session, N)).as("every read failed with EIO: misses").isZero();
            assertThat(tierErrors(engine)).as("the tier's errors").isGreaterThanOrEqualTo(N);
            assertThat(faultKeys(dir, "eio-read")).as("the fault log names every key read").isEqualTo(keysOf(session, N));
            assertThat(of(dir, "eio-read")).allSatisfy(fault -> assertThat(fault.op()).isEqualTo("read"));

            control(engine, dir, "all=0\n");
            awaitTrue(() -> acquireChecked(session, N) == N, "every page served from L3 once the tier is healed (its objects were never harmed)");
        }
    }

    @Test
    void shouldFailBackupsOnEioAndEnospcWritesCountedOnTheTier(@TempDir final Path dir) throws Exception
    {
        try (Engine engine = start(settings(dir, "eio-write:0.5, enospc-write:0.5", 64));
             Session session = engine.openSession())
        {
            keys(session, 2, N);
            assertThat(write(session, 0, N)).isEqualTo(N);
            session.flush();
            // A failed backup is tried again later, and fails again: each try is a fault of its own.
            assertThat(faults(dir)).as("a fault per try of each backup").hasSizeGreaterThanOrEqualTo(N)
                .extracting(FaultsEngine.Fault::key).containsAll(keysOf(session, N));
            assertThat(of(dir, "eio-write")).as("some EIO").isNotEmpty();
            assertThat(of(dir, "enospc-write")).as("some ENOSPC").isNotEmpty();
            assertThat(engine.snapshot().get(EngineCounter.BACKUPS_FAILED)).as("backups failed").isGreaterThanOrEqualTo(N);
            assertThat(tierErrors(engine)).as("the tier's errors").isGreaterThanOrEqualTo(N);
            assertThat(report(engine).counters().get("bytes_written")).as("nothing reached the tier").isZero();
            // The pool still serves the pages it holds: a failed backup costs nothing there.
            assertThat(acquireChecked(session, N)).isEqualTo(N);
        }
    }

    @Test
    void shouldServeSlowReadsWhole(@TempDir final Path dir) throws Exception
    {
        final Map<String, String> settings = settings(dir, "slow-read:1", 64);
        settings.put(tier("slow"), "20ms");
        try (Engine engine = start(settings);
             Session session = engine.openSession())
        {
            inL3Only(session, 3, N);
            assertThat(acquireChecked(session, N)).as("slow, not failed: every page served, every byte checked").isEqualTo(N);
            assertThat(faultKeys(dir, "slow-read")).isEqualTo(keysOf(session, N));
            assertThat(engine.snapshot().get(EngineCounter.L3_TIMEOUTS)).isZero();
        }
    }

    @Test
    void shouldTimeOutStalledReadsAsMissesAndTakeTheTierBackOnceItAnswered(@TempDir final Path dir) throws Exception
    {
        final Map<String, String> settings = settings(dir, "stall-read:1", 64);
        settings.put(EngineConfig.L3_IO_TIMEOUT, FaultsEngine.SHORT_IO_TIMEOUT);
        settings.put(tier("stall"), "1s");
        try (Engine engine = start(settings);
             Session session = engine.openSession())
        {
            inL3Only(session, 4, N);
            assertThat(acquireChecked(session, N)).as("the reads stall past l3.io-timeout: misses").isZero();
            assertThat(engine.snapshot().get(EngineCounter.L3_TIMEOUTS)).as("timed out").isGreaterThanOrEqualTo(1);
            assertThat(engine.snapshot().get(EngineCounter.L3_STUCK)).as("the tier was taken out of service").isGreaterThanOrEqualTo(1);
            assertThat(faultKeys(dir, "stall-read")).isEqualTo(keysOf(session, N));

            control(engine, dir, "all=0\n");
            awaitTrue(() -> report(engine).state().equals("in-service"), "the tier back in service once the stalled reads were answered");
            awaitTrue(() -> acquireChecked(session, N) == N, "every page served once healed");
        }
    }

    @Test
    void shouldTimeOutACallThatBlocksAndServeAgainWhenItIsReleased(@TempDir final Path dir) throws Exception
    {
        final Map<String, String> settings = settings(dir, "block-call:1", 64);
        settings.put(EngineConfig.L3_IO_TIMEOUT, FaultsEngine.SHORT_IO_TIMEOUT);
        java.nio.file.Files.writeString(FaultsEngine.control(dir), "all=0\n");
        try (Engine engine = start(settings);
             Session session = engine.openSession())
        {
            inL3Only(session, 5, N);
            control(engine, dir, "# block-call as configured\n");
            assertThat(acquireChecked(session, N)).as("the read call blocks: misses at l3.io-timeout").isZero();
            assertThat(report(engine).state()).as("a call that does not return takes the tier out of service").isEqualTo("stuck");
            assertThat(of(dir, "block-call")).as("the blocked call is logged, naming its first key").hasSize(1);

            control(engine, dir, "all=0\n");
            awaitTrue(() -> report(engine).state().equals("in-service"), "the tier back in service once the blocked call returned");
            awaitTrue(() -> acquireChecked(session, N) == N, "every page served once healed");
        }
    }

    @Test
    void shouldCloseAnEngineWhoseTierHasACallBlocked(@TempDir final Path dir) throws Exception
    {
        final Map<String, String> settings = settings(dir, "block-call:1", 64);
        settings.put(EngineConfig.L3_IO_TIMEOUT, FaultsEngine.SHORT_IO_TIMEOUT);
        final Engine engine = start(settings);
        try (Session session = engine.openSession())
        {
            keys(session, 6, 2);
            assertThat(write(session, 0, 2)).isEqualTo(2);
            awaitTrue(() -> faultsUnchecked(dir) > 0, "the backup's write call blocks");
        }
        final java.util.concurrent.CompletableFuture<Void> closed = java.util.concurrent.CompletableFuture.runAsync(engine::close);
        awaitTrue(closed::isDone, "Engine.close() returns, releasing the blocked call");
        assertThat(closed).isCompleted();
    }

    @Test
    void shouldNeverServeAShortReadAndCountItCorrupt(@TempDir final Path dir) throws Exception
    {
        final Map<String, String> settings = settings(dir, "short-read:1", 64);
        try (Engine engine = start(settings);
             Session session = engine.openSession())
        {
            inL3Only(session, 7, N);
            assertThat(acquireChecked(session, N)).as("every read is short of the trailer block: misses").isZero();
            assertThat(engine.snapshot().get(EngineCounter.L3_CORRUPT)).as("counted corrupt").isGreaterThanOrEqualTo(N);
            assertThat(tierErrors(engine)).as("the tier's errors").isGreaterThanOrEqualTo(N);
            assertThat(faultKeys(dir, "short-read")).isEqualTo(keysOf(session, N));
        }
    }

    @Test
    void shouldNeverServeATornWrite(@TempDir final Path dir) throws Exception
    {
        try (Engine engine = start(settings(dir, "torn-write:1", 64));
             Session session = engine.openSession())
        {
            keys(session, 8, N);
            assertThat(write(session, 0, N)).isEqualTo(N);
            session.flush();
            assertThat(faultKeys(dir, "torn-write")).as("every key destroyed is named").isEqualTo(keysOf(session, N));
            assertThat(engine.snapshot().get(EngineCounter.BACKUPS_FAILED)).as("a torn write is a failed backup").isGreaterThanOrEqualTo(N);
            assertThat(tierErrors(engine)).isGreaterThanOrEqualTo(N);
            awaitTrue(() -> report(engine).objects() == N, "the torn frames stored in the wrapped tier");
            // Every try of a backup tears (the rate is 1), so no later try can store a whole frame under these keys.
            assertThat(session.evict(0, N)).isEqualTo(N);

            try (Session other = engine.openSession())
            {
                keys(other, 8, N);
                other.lookup(0, N);
                assertThat(acquireChecked(other, N)).as("a torn object is never served").isZero();
            }
        }
    }

    @Test
    void shouldNeverServeAnObjectWithABitFlippedAtRest(@TempDir final Path dir) throws Exception
    {
        try (Engine engine = start(settings(dir, "bit-flip:1", 64));
             Session session = engine.openSession())
        {
            inL3Only(session, 9, N);
            assertThat(faultKeys(dir, "bit-flip")).isEqualTo(keysOf(session, N));
            // A flip in bytes no check covers (the trailer block's padding) leaves a page whole: served, and checked here.
            assertThat(acquireChecked(session, N)).as("the prefix of pages served, every one checked").isLessThan(N);
            final long corrupt = engine.snapshot().get(EngineCounter.L3_CORRUPT);
            assertThat(corrupt).as("counted corrupt").isPositive();
            assertThat(tierErrors(engine)).as("the tier's errors").isGreaterThanOrEqualTo(corrupt);
        }
    }

    @Test
    void shouldNeverServeAnObjectReplacedByAnotherKeysObject(@TempDir final Path dir) throws Exception
    {
        try (Engine engine = start(settings(dir, "replace:1", 64));
             Session session = engine.openSession())
        {
            keys(session, 10, 2);
            // The first write has no earlier key to replace; the second stores its frame under the first's key too.
            assertThat(write(session, 0, 1)).isEqualTo(1);
            assertThat(session.flush()).isZero();
            assertThat(write(session, 1, 1)).isEqualTo(1);
            assertThat(session.flush()).isZero();
            final PageKey first = key(session, 0);
            assertThat(faults(dir)).extracting(FaultsEngine.Fault::kind, FaultsEngine.Fault::key, FaultsEngine.Fault::op)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("replace", first, "write"));
            assertThat(session.evict(0, 2)).isEqualTo(2);

            assertThat(session.acquire(0, 2)).as("the second page is whole; the first, replaced, is a miss").isZero();
            session.release();
            assertThat(session.acquire(1, 1)).isEqualTo(1);
            assertThat(FaultsEngine.intact(session, 1)).isTrue();
            session.release();
            assertThat(engine.snapshot().get(EngineCounter.L3_CORRUPT)).as("the replaced object read as another key's").isGreaterThanOrEqualTo(1);
        }
    }

    @Test
    void shouldNeverServeBytesWrittenIntoAReadAfterItCompleted(@TempDir final Path dir) throws Exception
    {
        final Map<String, String> settings = settings(dir, "late-write:1", 64);
        settings.put(tier("trusted"), "false");
        try (Engine engine = start(settings);
             Session session = engine.openSession())
        {
            inL3Only(session, 11, N);
            assertThat(session.acquire(0, N)).isEqualTo(N);
            awaitTrue(() -> faultsUnchecked(dir) == N, "every read written into after it completed");
            for (int i = 0; i < N; i++)
            {
                assertThat(FaultsEngine.intact(session, i)).as("page %d, pinned, after the tier wrote into what it read it into", i).isTrue();
            }
            session.release();
            assertThat(engine.snapshot().get(EngineCounter.L3_STAGED_READS)).as("read into staging frames").isGreaterThanOrEqualTo(N);
            assertThat(faultKeys(dir, "late-write")).isEqualTo(keysOf(session, N));
        }
    }

    private static int faultsUnchecked(final Path dir)
    {
        try
        {
            return faults(dir).size();
        }
        catch (final Exception ex)
        {
            throw new AssertionError(ex);
        }
    }

    @Test
    void shouldRefuseLateWritesOnATierTheEngineTrusts(@TempDir final Path dir)
    {
        assertThatThrownBy(() -> start(settings(dir, "late-write:0.1", 64)).close())
            .isInstanceOf(TierConfigException.class)
            .hasMessageContaining("tier.f.faults")
            .hasMessageContaining("tier.f.trusted = false");
    }

    @Test
    void shouldLetLateWritesReachATrustedTierOnlyWhenToldItIsUnsafe(@TempDir final Path dir) throws Exception
    {
        final Map<String, String> settings = settings(dir, "late-write:0.1", 64);
        settings.put(tier("unsafe-late-write"), "true");
        try (Engine engine = start(settings))
        {
            assertThat(FaultsEngine.faultsTier(engine).rates().rate(FaultKind.LATE_WRITE)).isEqualTo(0.1);
        }
    }

    @Test
    void shouldKeepTheFaultLogAcrossARestartOnTheSameL3(@TempDir final Path dir) throws Exception
    {
        final List<PageKey> named = new ArrayList<>();
        for (int run = 0; run < 2; run++)
        {
            try (Engine engine = start(settings(dir, "eio-write:1", 64));
                 Session session = engine.openSession())
            {
                keys(session, 12 + run, 2);
                assertThat(write(session, 0, 2)).isEqualTo(2);
                session.flush();
                named.add(key(session, 0));
                named.add(key(session, 1));
            }
        }
        assertThat(faults(dir).stream().map(FaultsEngine.Fault::key).collect(Collectors.toSet())).as("appended, not truncated")
            .isEqualTo(Set.copyOf(named));
    }
}
