package io.kvtier.engine;

import io.kvtier.client.pool.CountersDescriptor;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.config.ConfigException;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.operations.EngineOperations;
import io.kvtier.engine.operations.EvictRequest;
import io.kvtier.engine.operations.MarkReport;
import io.kvtier.engine.operations.MarkRequest;
import io.kvtier.engine.operations.MigrateRequest;
import io.kvtier.engine.operations.MigrationMethod;
import io.kvtier.engine.operations.MigrationReport;
import io.kvtier.engine.operations.OperationException;
import io.kvtier.engine.operations.Retention;
import io.kvtier.engine.operations.TierReport;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.spi.PageKey;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import static io.kvtier.engine.EngineFixture.awaitTrue;
import static io.kvtier.engine.EngineFixture.intact;
import static io.kvtier.engine.EngineFixture.keys;
import static io.kvtier.engine.EngineFixture.pageKey;
import static io.kvtier.engine.EngineFixture.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Several L3 tiers in order, with migrations between them (copy, mark, both), marks, admission and its
 * reasons, and write budgets, over two real POSIX tiers on disk.
 */
class EngineMigrationTest
{
    /** Bytes of one page's file in a POSIX tier: the 4 KiB payload and the 4 KiB frame trailer block. */
    private static final long OBJECT = 8192;

    private static Map<String, String> twoTiers(final Path fast, final Path slow, final int fastObjects)
    {
        final Map<String, String> settings = EngineFixture.settings(null, 64);
        settings.put("tier.fast.type", "posix");
        settings.put("tier.fast.dir", fast.toString());
        // The tests count and find page files in each tier's directory: the files layout's.
        settings.put("tier.fast.layout", "files");
        settings.put("tier.fast.capacity", String.valueOf(fastObjects * OBJECT));
        settings.put("tier.fast.evict-high", "0.95");
        settings.put("tier.fast.evict-low", "0.9");
        settings.put("tier.slow.type", "posix");
        settings.put("tier.slow.dir", slow.toString());
        settings.put("tier.slow.layout", "files");
        settings.put("l3.tiers", "fast, slow");
        settings.put(EngineConfig.POLICY_PREFETCH, "off");
        return settings;
    }

    private static long files(final Path dir) throws IOException
    {
        try (Stream<Path> files = Files.walk(dir))
        {
            return files.filter(p -> p.toString().endsWith(".kvp")).count();
        }
    }

    private static boolean holds(final Path dir, final PageKey key) throws IOException
    {
        try (Stream<Path> files = Files.walk(dir))
        {
            return files.anyMatch(p -> p.getFileName().toString().startsWith(key.toHex()));
        }
    }

    private static TierReport tier(final EngineOperations operations, final String name)
    {
        return operations.tiers().stream().filter(t -> t.name().equals(name)).findFirst().orElseThrow();
    }

    private static List<PageKey> pageKeys(final Session session, final int from, final int count)
    {
        final List<PageKey> keys = new ArrayList<>();
        for (int i = from; i < from + count; i++)
        {
            keys.add(pageKey(session, i));
        }
        return keys;
    }

    private static MigrateRequest move(final List<PageKey> keys, final String source, final String target, final MigrationMethod method)
    {
        return new MigrateRequest(source, target, keys, 0, Duration.ZERO, 1.0, 1, method, Retention.MOVE, false);
    }

    private static MigrationReport awaitEnd(final EngineOperations operations, final long id)
    {
        final AtomicReference<MigrationReport> last = new AtomicReference<>();
        awaitTrue(() ->
        {
            last.set(operations.migration(id).orElseThrow());
            return last.get().ended() != null;
        }, "migration " + id + " to end");
        return last.get();
    }

    /** Reads every page back, from L3 (the pool copies are evicted first), and counts those missing and those not byte-exact. */
    private static long[] readBack(final Session session, final int count)
    {
        session.evict(0, count);
        session.acquire(0, count);
        long missing = 0;
        long torn = 0;
        for (int i = 0; i < count; i++)
        {
            if (session.status(i) == PageEntryStatus.MISS)
            {
                missing++;
            }
            else if (!intact(session, i))
            {
                torn++;
            }
        }
        session.release();
        return new long[] {missing, torn};
    }

    @Test
    void shouldMoveColdPagesToTheNextTierWhileReadersFindEveryPageByteExact(@TempDir final Path fast, @TempDir final Path slow) throws Exception
    {
        final Map<String, String> settings = twoTiers(fast, slow, 24);
        settings.put("migration.fast.target", "slow");
        settings.put("migration.fast.trigger", "0.25");
        settings.put("migration.fast.min-age", "0s");
        settings.put("migration.fast.concurrency", "2");
        settings.put("migration.fast.batch", "4");
        try (Engine engine = EngineFixture.start(settings);
             Session writer = engine.openSession())
        {
            final int pages = 16;
            keys(writer, 180, pages);
            assertThat(write(writer, 0, pages)).isEqualTo(pages);
            assertThat(writer.flush()).isZero();
            final AtomicBoolean stop = new AtomicBoolean();
            final AtomicLong rounds = new AtomicLong();
            final AtomicLong missing = new AtomicLong();
            final AtomicLong torn = new AtomicLong();
            final Thread reader = Thread.ofPlatform().start(() ->
            {
                try (Session session = engine.openSession())
                {
                    keys(session, 180, pages);
                    while (!stop.get())
                    {
                        final long[] result = readBack(session, pages);
                        missing.addAndGet(result[0]);
                        torn.addAndGet(result[1]);
                        rounds.incrementAndGet();
                    }
                }
            });
            final EngineOperations operations = engine.operations();
            awaitTrue(() -> engine.snapshot().get(EngineCounter.PAGES_MIGRATED) >= 10 && tier(operations, "fast").fill() <= 0.25,
                "the migration to bring tier fast below its trigger");
            final long roundsDuring = rounds.get();
            awaitTrue(() -> rounds.get() > roundsDuring + 2, "the reader to read every page a few more times");
            stop.set(true);
            reader.join();
            assertThat(missing.get()).as("pages a reader missed during the migration, in %d rounds", rounds.get()).isZero();
            assertThat(torn.get()).as("pages a reader found not byte-exact").isZero();
            final long[] after = readBack(writer, pages);
            assertThat(after).containsExactly(0, 0);
            assertThat(files(slow)).isGreaterThanOrEqualTo(10);
            assertThat(files(fast) + files(slow)).isEqualTo(pages);
            final Map<EngineCounter, Long> counters = engine.snapshot();
            assertThat(counters.get(EngineCounter.L3_CORRUPT)).isZero();
            assertThat(counters.get(EngineCounter.MIGRATION_FAILURES)).isZero();
            final TierReport slowTier = tier(operations, "slow");
            assertThat(slowTier.counters().get("bytes_written")).isEqualTo(counters.get(EngineCounter.PAGES_MIGRATED) * OBJECT);
            assertThat(tier(operations, "fast").counters().get("evictions")).isEqualTo(counters.get(EngineCounter.PAGES_MIGRATED));
            assertThat(operations.migrations()).anySatisfy(m ->
            {
                assertThat(m.origin()).isEqualTo("strategy");
                assertThat(m.copied()).isPositive();
            });
        }
    }

    @Test
    void shouldMoveNamedPagesOnAnOperatorsRequestAndReadThemBackFromTheTarget(@TempDir final Path fast, @TempDir final Path slow)
        throws Exception
    {
        try (Engine engine = EngineFixture.start(twoTiers(fast, slow, 64));
             Session session = engine.openSession())
        {
            keys(session, 181, 8);
            write(session, 0, 8);
            session.flush();
            assertThat(files(fast)).isEqualTo(8);
            final EngineOperations operations = engine.operations();
            final MigrationReport started = operations.migrate(move(pageKeys(session, 0, 5), "fast", "slow", MigrationMethod.COPY));
            final MigrationReport done = awaitEnd(operations, started.id());
            assertThat(done.state()).isEqualTo("done");
            assertThat(done.copied()).isEqualTo(5);
            assertThat(done.refusals()).isEmpty();
            awaitTrue(() -> countFiles(fast) == 3, "the source's copies to be removed");
            for (int i = 0; i < 5; i++)
            {
                assertThat(holds(slow, pageKey(session, i))).as("page %d in the target", i).isTrue();
                assertThat(holds(fast, pageKey(session, i))).as("page %d still in the source", i).isFalse();
            }
            assertThat(readBack(session, 8)).containsExactly(0, 0);
            assertThat(tier(operations, "slow").counters().get("hits")).isEqualTo(5);
        }
    }

    private static long countFiles(final Path dir)
    {
        try
        {
            return files(dir);
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    @Test
    void shouldNameEachReasonItRefusesAPageForAndCountIt(@TempDir final Path fast, @TempDir final Path slow) throws Exception
    {
        final Map<String, String> settings = twoTiers(fast, slow, 64);
        settings.put("tier.slow.capacity", String.valueOf(4 * OBJECT));
        settings.put("tier.slow.evict-high", "0.5");
        settings.put("tier.slow.evict-low", "0.25");
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            keys(session, 182, 8);
            write(session, 0, 8);
            session.flush();
            final EngineOperations operations = engine.operations();
            // source_missing: a key nobody wrote; too_young: a minimum age of an hour.
            final PageKey unknown = new PageKey(1, 2);
            MigrationReport report = operations.migrate(new MigrateRequest("fast", "slow", List.of(unknown), 0, Duration.ZERO, 1, 1,
                MigrationMethod.COPY, Retention.MOVE, true));
            assertThat(report.refusals()).containsEntry("source_missing", 1L);
            report = operations.migrate(new MigrateRequest("fast", "slow", pageKeys(session, 0, 2), 0, Duration.ofHours(1), 1, 1,
                MigrationMethod.COPY, Retention.MOVE, true));
            assertThat(report.refusals()).containsEntry("too_young", 2L);
            assertThat(report.state()).isEqualTo("dry-run");
            // pool_busy: a page pinned in the pool is in use, and hot.
            session.acquire(0, 1);
            report = operations.migrate(move(pageKeys(session, 0, 1), "fast", "slow", MigrationMethod.COPY));
            assertThat(awaitEnd(operations, report.id()).refusals()).containsEntry("pool_busy", 1L);
            session.release();
            // Two pages fill slow to its high water level (0.5 of 4 objects): the third is refused as target_full.
            report = awaitEnd(operations, operations.migrate(move(pageKeys(session, 1, 2), "fast", "slow", MigrationMethod.COPY)).id());
            assertThat(report.copied()).isEqualTo(2);
            awaitTrue(() -> tier(operations, "slow").fill() >= 0.5, "slow's usage gauge to show its two pages");
            report = awaitEnd(operations, operations.migrate(move(pageKeys(session, 3, 1), "fast", "slow", MigrationMethod.COPY)).id());
            assertThat(report.refusals()).containsEntry("target_full", 1L);
            // target_holds: a page the target already has (page 1, moved above), asked back the other way round is source_missing,
            // and asked again from fast to slow is source_missing too; keep-source leaves both, then target_holds.
            report = awaitEnd(operations, operations.migrate(new MigrateRequest("slow", "fast", pageKeys(session, 1, 1), 0, Duration.ZERO, 1, 1,
                MigrationMethod.COPY, Retention.KEEP_SOURCE, false)).id());
            assertThat(report.copied()).isEqualTo(1);
            report = operations.migrate(new MigrateRequest("slow", "fast", pageKeys(session, 1, 1), 0, Duration.ZERO, 1, 1,
                MigrationMethod.COPY, Retention.MOVE, true));
            assertThat(report.refusals()).containsEntry("target_holds", 1L);
            final Map<EngineCounter, Long> counters = engine.snapshot();
            assertThat(counters.get(EngineCounter.ADMISSION_POOL_BUSY)).isEqualTo(1);
            assertThat(counters.get(EngineCounter.ADMISSION_TARGET_FULL)).isGreaterThanOrEqualTo(1);
            // A dry run counts nothing in the engine's counters.
            assertThat(counters.get(EngineCounter.ADMISSION_SOURCE_MISSING)).isZero();
            assertThat(counters.get(EngineCounter.ADMISSION_TOO_YOUNG)).isZero();
            assertThat(readBack(session, 8)).containsExactly(0, 0);
        }
    }

    @Test
    void shouldCountButLetThroughInShadowMode(@TempDir final Path fast, @TempDir final Path slow) throws Exception
    {
        final Map<String, String> settings = twoTiers(fast, slow, 64);
        settings.put("admission.mode", "shadow");
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            keys(session, 183, 4);
            write(session, 0, 4);
            session.flush();
            final EngineOperations operations = engine.operations();
            final MigrationReport report = awaitEnd(operations, operations.migrate(new MigrateRequest("fast", "slow", pageKeys(session, 0, 4), 0,
                Duration.ofHours(1), 1, 1, MigrationMethod.COPY, Retention.MOVE, false)).id());
            assertThat(report.copied()).as("shadow mode refuses nothing").isEqualTo(4);
            assertThat(report.refusals()).isEmpty();
            final Map<EngineCounter, Long> counters = engine.snapshot();
            assertThat(counters.get(EngineCounter.ADMISSION_TOO_YOUNG)).isEqualTo(4);
            assertThat(counters.get(EngineCounter.ADMISSION_SHADOW_PASSED)).isEqualTo(4);
            assertThat(readBack(session, 4)).containsExactly(0, 0);
        }
    }

    @Test
    void shouldMarkWhatBothCouldNotCopyBecauseAdmissionRefusedIt(@TempDir final Path fast, @TempDir final Path slow) throws Exception
    {
        try (Engine engine = EngineFixture.start(twoTiers(fast, slow, 64));
             Session session = engine.openSession())
        {
            keys(session, 184, 4);
            write(session, 0, 4);
            session.flush();
            final EngineOperations operations = engine.operations();
            session.acquire(0, 2); // pinned: refused as pool_busy, so marked instead
            final MigrationReport report = awaitEnd(operations, operations.migrate(move(pageKeys(session, 0, 4), "fast", "slow",
                MigrationMethod.BOTH)).id());
            session.release();
            assertThat(report.copied()).isEqualTo(2);
            assertThat(report.refusals()).containsEntry("pool_busy", 2L);
            assertThat(report.marked()).isEqualTo(2);
            final List<MarkReport> marks = operations.marks();
            assertThat(marks).singleElement().satisfies(mark ->
            {
                assertThat(mark.tier()).isEqualTo("slow");
                assertThat(mark.pages()).isEqualTo(2);
                assertThat(mark.origin()).isEqualTo("migration " + report.id());
            });
        }
    }

    @Test
    void shouldSendMarkedBackupsStraightToTheMarkedTierEvenWhenTheFirstIsFullUntilTheMarkExpires(@TempDir final Path fast,
                                                                                                  @TempDir final Path slow) throws Exception
    {
        final Map<String, String> settings = twoTiers(fast, slow, 64);
        settings.put("tier.fast.write-budget", "1MiB");
        settings.put("tier.fast.write-burst", String.valueOf(2 * OBJECT));
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            keys(session, 185, 8);
            final EngineOperations operations = engine.operations();
            final MarkReport mark = operations.mark(new MarkRequest("slow", pageKeys(session, 0, 4), 0, Duration.ofMinutes(5)));
            assertThat(mark.pages()).isEqualTo(4);
            write(session, 0, 4);
            session.flush();
            for (int i = 0; i < 4; i++)
            {
                assertThat(holds(slow, pageKey(session, i))).as("marked page %d in slow", i).isTrue();
            }
            assertThat(files(fast)).isZero();
            assertThat(engine.snapshot().get(EngineCounter.MARKED_BACKUPS)).isEqualTo(4);
            // The write budget of fast lets two pages through at once; the rest go on to slow, each refused with its reason.
            write(session, 4, 4);
            session.flush();
            assertThat(files(fast)).isEqualTo(2);
            assertThat(files(slow)).isEqualTo(6);
            assertThat(engine.snapshot().get(EngineCounter.ADMISSION_WRITE_BUDGET_SPENT)).isEqualTo(2);
            assertThat(engine.snapshot().get(EngineCounter.BACKUPS_FAILED)).isZero();
            assertThat(operations.unmark(mark.id())).isTrue();
            assertThat(operations.marks()).isEmpty();
            assertThat(readBack(session, 8)).containsExactly(0, 0);
        }
    }

    @Test
    void shouldDropAMarkWhenItExpires(@TempDir final Path fast, @TempDir final Path slow) throws Exception
    {
        try (Engine engine = EngineFixture.start(twoTiers(fast, slow, 64));
             Session session = engine.openSession())
        {
            keys(session, 186, 2);
            final EngineOperations operations = engine.operations();
            operations.mark(new MarkRequest("slow", pageKeys(session, 0, 2), 0, Duration.ofMillis(50)));
            awaitTrue(() -> operations.marks().isEmpty(), "the mark to expire");
            assertThat(engine.snapshot().get(EngineCounter.MARKS_EXPIRED)).isEqualTo(1);
            write(session, 0, 2);
            session.flush();
            assertThat(files(fast)).as("an expired mark sends nothing anywhere").isEqualTo(2);
            assertThat(files(slow)).isZero();
        }
    }

    @Test
    void shouldEvictNamedPagesFromATierAndRefuseWhatItDoesNotHold(@TempDir final Path fast, @TempDir final Path slow) throws Exception
    {
        try (Engine engine = EngineFixture.start(twoTiers(fast, slow, 64));
             Session session = engine.openSession())
        {
            keys(session, 187, 3);
            write(session, 0, 3);
            session.flush();
            final EngineOperations operations = engine.operations();
            final List<PageKey> keys = new ArrayList<>(pageKeys(session, 0, 2));
            keys.add(new PageKey(7, 7));
            assertThat(operations.evict(new EvictRequest("fast", keys, 0, 1, true)).removed()).isEqualTo(2);
            assertThat(files(fast)).as("a dry run changes nothing").isEqualTo(3);
            final var report = operations.evict(new EvictRequest("fast", keys, 0, 1, false));
            assertThat(report.removed()).isEqualTo(2);
            assertThat(report.refusals()).containsEntry("not_held", 1L);
            awaitTrue(() -> countFiles(fast) == 1, "the removals to reach the tier");
        }
    }

    @Test
    void shouldRefuseCallsThatNameUnknownTiersOrBreakRulesAndChangeNothing(@TempDir final Path fast, @TempDir final Path slow) throws Exception
    {
        try (Engine engine = EngineFixture.start(twoTiers(fast, slow, 64)))
        {
            final EngineOperations operations = engine.operations();
            assertThatThrownBy(() -> operations.migrate(move(List.of(), "nvme", "slow", MigrationMethod.COPY)))
                .isInstanceOfSatisfying(OperationException.class, ex ->
                {
                    assertThat(ex.kind()).isEqualTo(OperationException.Kind.NOT_FOUND);
                    assertThat(ex.field()).isEqualTo("source");
                    assertThat(ex.getMessage()).contains("nvme").contains("fast").contains("slow");
                });
            assertThatThrownBy(() -> operations.migrate(move(List.of(), "fast", "fast", MigrationMethod.COPY)))
                .isInstanceOfSatisfying(OperationException.class, ex -> assertThat(ex.field()).isEqualTo("target"));
            assertThatThrownBy(() -> operations.migrate(new MigrateRequest("fast", "slow", List.of(), 0, Duration.ZERO, 1, 0,
                MigrationMethod.COPY, Retention.MOVE, false))).isInstanceOfSatisfying(OperationException.class, ex -> assertThat(ex.field()).isEqualTo("limit"));
            assertThatThrownBy(() -> operations.migrate(new MigrateRequest("slow", "fast", List.of(), 0, Duration.ZERO, 1, 1,
                MigrationMethod.COPY, Retention.KEEP_SOURCE, false))).isInstanceOfSatisfying(OperationException.class, ex ->
                {
                    assertThat(ex.field()).isEqualTo("retention");
                    assertThat(ex.getMessage()).contains("never be reclaimed");
                });
            assertThatThrownBy(() -> operations.mark(new MarkRequest("slow", List.of(new PageKey(1, 1)), 0, Duration.ZERO)))
                .isInstanceOfSatisfying(OperationException.class, ex -> assertThat(ex.field()).isEqualTo("ttl"));
            assertThat(operations.migrations()).isEmpty();
            assertThat(operations.marks()).isEmpty();
            assertThat(engine.snapshot().get(EngineCounter.ADMIN_CALLS)).isZero();
        }
    }

    @Test
    void shouldRefuseAtStartAStrategyThatCouldNeverRun(@TempDir final Path fast, @TempDir final Path slow)
    {
        final Map<String, String> settings = twoTiers(fast, slow, 64);
        settings.put("migration.fast.target", "slow");
        settings.put("migration.fast.mark-ttl", "0s");
        assertThatThrownBy(() -> EngineConfig.from(settings)).isInstanceOf(ConfigException.class)
            .hasMessageContaining("migration.fast.mark-ttl").hasMessageContaining("more than zero");
        settings.remove("migration.fast.mark-ttl");
        settings.put("migration.fast.trigger", "0.95");
        assertThatThrownBy(() -> EngineFixture.start(settings)).isInstanceOf(ConfigException.class)
            .hasMessageContaining("migration.fast.trigger").hasMessageContaining("eviction level");
        settings.remove("migration.fast.trigger");
        settings.remove("migration.fast.target");
        settings.put("migration.slow.target", "fast");
        assertThatThrownBy(() -> EngineFixture.start(settings)).isInstanceOf(ConfigException.class)
            .hasMessageContaining("migration.slow.trigger").hasMessageContaining("no capacity");
        settings.put("tier.slow.capacity", "1MiB");
        settings.put("migration.slow.retention", "keep-source");
        settings.put("tier.fast.capacity", "unbounded");
        settings.remove("tier.fast.evict-high");
        settings.remove("tier.fast.evict-low");
        settings.put("migration.slow.target", "nvme");
        assertThatThrownBy(() -> EngineConfig.from(settings)).isInstanceOf(ConfigException.class)
            .hasMessageContaining("migration.slow.target").hasMessageContaining("nvme");
        settings.put("migration.slow.target", "fast");
        settings.put("migration.slow.speed", "1");
        assertThatThrownBy(() -> EngineConfig.from(settings)).isInstanceOf(ConfigException.class)
            .hasMessageContaining("migration.slow.speed");
        settings.remove("migration.slow.speed");
        settings.put("l3.tiers", "slow");
        assertThatThrownBy(() -> EngineConfig.from(settings)).isInstanceOf(ConfigException.class)
            .hasMessageContaining("l3.tiers").hasMessageContaining("fast");
    }

    @Test
    void shouldRefuseKeepSourceOnATierThatNeverEvictsAndAllowItOnOneThatDoes(@TempDir final Path fast, @TempDir final Path slow)
        throws IOException
    {
        final Map<String, String> settings = twoTiers(fast, slow, 64);
        settings.put("tier.slow.capacity", "1MiB");
        settings.put("migration.slow.target", "fast");
        settings.put("migration.slow.retention", "keep-source");
        // slow has a capacity, so it evicts by itself: keep-source is allowed there and the engine starts.
        try (Engine engine = EngineFixture.start(settings))
        {
            assertThat(tier(engine.operations(), "slow").migration()).contains("keep-source");
        }
        final Map<String, String> scripted = EngineFixture.settings("keeper", 64);
        scripted.put("tier.keeper.capacity", "1MiB");
        scripted.put("tier.slow.type", "posix");
        scripted.put("tier.slow.dir", slow.toString());
        scripted.put("tier.slow.layout", "files");
        scripted.put("migration.keeper.target", "slow");
        scripted.put("migration.keeper.retention", "keep-source");
        assertThatThrownBy(() -> EngineFixture.start(scripted)).isInstanceOf(ConfigException.class)
            .hasMessageContaining("migration.keeper.retention").hasMessageContaining("never be reclaimed");
    }

    private static Map<String, String> scriptedTiers()
    {
        final Map<String, String> settings = EngineFixture.settings(null, 64);
        final String prefix = "s" + System.nanoTime();
        settings.put("tier." + prefix + "-a.type", "scripted");
        settings.put("tier." + prefix + "-b.type", "scripted");
        settings.put(EngineConfig.POLICY_PREFETCH, "off");
        return settings;
    }

    private static String tierName(final Map<String, String> settings, final int which)
    {
        return settings.keySet().stream().filter(k -> k.startsWith("tier.")).map(k -> k.substring(5, k.length() - ".type".length())).toList()
            .get(which);
    }

    @Test
    void shouldNameAPageAlreadyMigratingAndATargetOutOfService() throws Exception
    {
        final Map<String, String> settings = scriptedTiers();
        settings.put(EngineConfig.L3_IO_TIMEOUT, "2s");
        final String a = tierName(settings, 0);
        final String b = tierName(settings, 1);
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            keys(session, 188, 3);
            write(session, 0, 2);
            session.flush();
            final EngineOperations operations = engine.operations();
            // A copy whose read the source holds: the same page asked again is already migrating.
            final java.util.concurrent.CountDownLatch reads = ScriptedTier.get(a).holdReads();
            final MigrationReport first = operations.migrate(move(pageKeys(session, 0, 1), a, b, MigrationMethod.COPY));
            assertThat(operations.migrate(new MigrateRequest(a, b, pageKeys(session, 0, 1), 0, Duration.ZERO, 1, 1, MigrationMethod.COPY,
                Retention.MOVE, true)).refusals()).containsEntry("already_migrating", 1L);
            reads.countDown();
            assertThat(awaitEnd(operations, first.id()).copied()).isEqualTo(1);
            // A target whose write outlives l3.io-timeout is stuck, out of service: a migration to it is refused as such.
            final java.util.concurrent.CountDownLatch writes = ScriptedTier.get(b).holdWrites();
            operations.mark(new MarkRequest(b, pageKeys(session, 2, 1), 0, Duration.ofMinutes(1)));
            write(session, 2, 1);
            session.backup(2, 1);
            awaitTrue(() -> tier(operations, b).state().equals("stuck"), "tier " + b + " to be taken out of service as stuck");
            final MigrationReport refused = awaitEnd(operations, operations.migrate(move(pageKeys(session, 1, 1), a, b, MigrationMethod.COPY)).id());
            assertThat(refused.refusals()).containsEntry("target_out_of_service", 1L);
            assertThat(engine.snapshot().get(EngineCounter.ADMISSION_TARGET_OUT_OF_SERVICE)).isEqualTo(1);
            assertThat(operations.health().ready()).isFalse();
            assertThat(operations.health().reason()).contains(b).contains("stuck");
            writes.countDown();
        }
    }

    @Test
    void shouldHoldAMigrationToItsRateAndCountWhatWaits(@TempDir final Path fast, @TempDir final Path slow) throws Exception
    {
        final Map<String, String> settings = twoTiers(fast, slow, 64);
        settings.put("migration.fast.target", "slow");
        settings.put("migration.fast.trigger", "0.9");
        settings.put("migration.fast.rate", String.valueOf(OBJECT)); // one page a second, a burst of one page
        final ManualClock clock = new ManualClock();
        try (Engine engine = EngineFixture.start(settings, clock);
             Session session = engine.openSession())
        {
            keys(session, 189, 3);
            write(session, 0, 3);
            session.flush();
            final EngineOperations operations = engine.operations();
            final long id = operations.migrate(move(pageKeys(session, 0, 3), "fast", "slow", MigrationMethod.COPY)).id();
            awaitTrue(() -> operations.migration(id).orElseThrow().copied() == 1, "the first page, within the burst, to be copied");
            for (int second = 1; second <= 2; second++)
            {
                final MigrationReport report = operations.migration(id).orElseThrow();
                assertThat(report.copied()).as("pages copied after %d s of engine time", second - 1).isEqualTo(second);
                assertThat(report.refusals().get("rate_limited")).isPositive();
                clock.advance(Duration.ofSeconds(1));
                final int expected = second + 1;
                awaitTrue(() -> operations.migration(id).orElseThrow().copied() == expected, "one more page after a second of engine time");
            }
            assertThat(awaitEnd(operations, id).copied()).isEqualTo(3);
            assertThat(engine.snapshot().get(EngineCounter.ADMISSION_RATE_LIMITED)).isPositive();
            assertThat(readBack(session, 3)).containsExactly(0, 0);
        }
    }

    @Test
    void shouldServeReadersWhileAnOperatorMovesPagesUpToAnEarlierTier(@TempDir final Path fast, @TempDir final Path slow) throws Exception
    {
        try (Engine engine = EngineFixture.start(twoTiers(fast, slow, 64));
             Session writer = engine.openSession())
        {
            final int pages = 24;
            keys(writer, 190, pages);
            final EngineOperations operations = engine.operations();
            operations.mark(new MarkRequest("slow", pageKeys(writer, 0, pages), 0, Duration.ofMinutes(5)));
            write(writer, 0, pages);
            writer.flush();
            assertThat(files(slow)).isEqualTo(pages);
            final AtomicBoolean stop = new AtomicBoolean();
            final AtomicLong missing = new AtomicLong();
            final AtomicLong torn = new AtomicLong();
            final AtomicLong rounds = new AtomicLong();
            final Thread reader = Thread.ofPlatform().start(() ->
            {
                try (Session session = engine.openSession())
                {
                    keys(session, 190, pages);
                    while (!stop.get())
                    {
                        final long[] result = readBack(session, pages);
                        missing.addAndGet(result[0]);
                        torn.addAndGet(result[1]);
                        rounds.incrementAndGet();
                    }
                }
            });
            // Moved up, one page at a time, while the reader reads them all from whichever tier the index names.
            long copied = 0;
            for (int i = 0; i < pages; i++)
            {
                final long id = operations.migrate(move(pageKeys(writer, i, 1), "slow", "fast", MigrationMethod.COPY)).id();
                copied += awaitEnd(operations, id).copied();
            }
            final long roundsAfter = rounds.get();
            awaitTrue(() -> rounds.get() > roundsAfter + 2, "the reader to read every page a few more times");
            stop.set(true);
            reader.join();
            assertThat(missing.get()).as("pages a reader missed while they moved up, in %d rounds", rounds.get()).isZero();
            assertThat(torn.get()).isZero();
            assertThat(copied).as("pages moved (a page the reader held pinned was refused as pool_busy)").isPositive();
            assertThat(files(fast) + files(slow)).isEqualTo(pages);
        }
    }
}
