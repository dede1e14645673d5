package io.kvtier.engine;

import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.status.EngineCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static io.kvtier.engine.EngineFixture.intact;
import static io.kvtier.engine.EngineFixture.keys;
import static io.kvtier.engine.EngineFixture.write;
import static org.assertj.core.api.Assertions.assertThat;

/** The engine over the real POSIX tier, files on disk and all. */
class EnginePosixIntegrationTest
{
    private static Map<String, String> settings(final Path l3)
    {
        final Map<String, String> settings = EngineFixture.settings(null, 32);
        settings.put("tier.disk.type", "posix");
        settings.put("tier.disk.dir", l3.toString());
        // These tests corrupt and truncate page files on disk: the files layout's (the slab has its own torn-frame tests).
        settings.put("tier.disk.layout", "files");
        settings.put(EngineConfig.POLICY_PREFETCH, "off");
        return settings;
    }

    private static List<Path> pageFiles(final Path l3) throws IOException
    {
        try (Stream<Path> files = Files.walk(l3))
        {
            return files.filter(p -> p.toString().endsWith(".kvp")).sorted().toList();
        }
    }

    private static Path fileOf(final Path l3, final Session session, final int key) throws IOException
    {
        final String hex = EngineFixture.pageKey(session, key).toHex();
        return pageFiles(l3).stream().filter(p -> p.getFileName().toString().startsWith(hex)).findFirst().orElseThrow();
    }

    @Test
    void shouldCountACorruptFileOnDiskAsAMissAndNeverServeIt(@TempDir final Path l3) throws Exception
    {
        try (Engine engine = EngineFixture.start(settings(l3));
             Session session = engine.openSession())
        {
            keys(session, 60, 4);
            write(session, 0, 4);
            session.flush();
            assertThat(pageFiles(l3)).hasSize(4);
            session.evict(0, 4);
            try (RandomAccessFile file = new RandomAccessFile(fileOf(l3, session, 2).toFile(), "rw"))
            {
                file.seek(100);
                final int b = file.read();
                file.seek(100);
                file.write(b ^ 0xFF);
            }
            assertThat(session.acquire(0, 4)).isEqualTo(2);
            assertThat(session.status(2)).isEqualTo(PageEntryStatus.MISS);
            assertThat(intact(session, 0)).isTrue();
            assertThat(intact(session, 1)).isTrue();
            session.release();
            assertThat(engine.snapshot().get(EngineCounter.L3_CORRUPT)).isEqualTo(1);
        }
    }

    @Test
    void shouldCountATruncatedFileAsAMiss(@TempDir final Path l3) throws Exception
    {
        try (Engine engine = EngineFixture.start(settings(l3));
             Session session = engine.openSession())
        {
            keys(session, 61, 2);
            write(session, 0, 2);
            session.flush();
            session.evict(0, 2);
            try (RandomAccessFile file = new RandomAccessFile(fileOf(l3, session, 0).toFile(), "rw"))
            {
                file.setLength(file.length() / 2);
            }
            assertThat(session.acquire(0, 2)).isZero();
            assertThat(engine.snapshot().get(EngineCounter.L3_CORRUPT)).isEqualTo(1);
        }
    }

    @Test
    void shouldFindPagesWrittenBeforeARestart(@TempDir final Path l3) throws Exception
    {
        final Map<String, String> settings = settings(l3);
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            keys(session, 62, 6);
            write(session, 0, 6);
            session.flush();
        }
        // A new engine (new pool, empty index) on the same L3 directory, as after a restart or on another node.
        try (Engine engine = EngineFixture.start(settings(l3));
             Session session = engine.openSession())
        {
            keys(session, 62, 6);
            assertThat(session.lookup(0, 6)).isEqualTo(6);
            assertThat(session.l3Pages()).isEqualTo(6);
            assertThat(session.acquire(0, 6)).isEqualTo(6);
            for (int i = 0; i < 6; i++)
            {
                assertThat(intact(session, i)).as("page %d", i).isTrue();
            }
            session.release();
            assertThat(engine.snapshot().get(EngineCounter.L3_HIT_PAGES)).isEqualTo(6);
        }
    }

    /**
     * A tier no other engine writes (not shared) that was empty at start holds only what this engine wrote, which its
     * index knows: lookups do not probe it. One that held pages at start (a restart), or a shared one, is probed.
     */
    @Test
    void shouldProbeOnlyTiersThatCanHoldWhatTheIndexDoesNotKnow(@TempDir final Path dir) throws Exception
    {
        final Path l3 = dir.resolve("l3");
        try (Engine engine = EngineFixture.start(settings(l3));
             Session session = engine.openSession())
        {
            keys(session, 70, 4);
            assertThat(session.lookup(0, 4)).isZero();
            assertThat(engine.snapshot().get(EngineCounter.PROBE_KEYS)).as("empty and not shared at start: nothing to ask it").isZero();
            write(session, 0, 4);
            session.flush();
            session.evict(0, 4);
            assertThat(session.acquire(0, 4)).as("what it wrote, the index knows").isEqualTo(4);
            assertThat(intact(session, 3)).isTrue();
            session.release();
            assertThat(engine.snapshot().get(EngineCounter.PROBE_KEYS)).isZero();
        }
        try (Engine restarted = EngineFixture.start(settings(l3));
             Session session = restarted.openSession())
        {
            keys(session, 70, 4);
            assertThat(session.acquire(0, 4)).as("a restart: the tier holds pages its index does not know, found by probing").isEqualTo(4);
            assertThat(intact(session, 3)).isTrue();
            session.release();
            assertThat(restarted.snapshot().get(EngineCounter.PROBE_KEYS)).isPositive();
        }
        final Map<String, String> shared = settings(dir.resolve("shared"));
        shared.put("tier.disk.shared", "true");
        try (Engine engine = EngineFixture.start(shared);
             Session session = engine.openSession())
        {
            keys(session, 71, 2);
            assertThat(session.lookup(0, 2)).isZero();
            assertThat(engine.snapshot().get(EngineCounter.PROBE_KEYS)).as("shared: other engines write it").isPositive();
        }
    }
}
