package io.kvtier.engine;

import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.status.EngineCounter;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static io.kvtier.engine.EngineFixture.intact;
import static io.kvtier.engine.EngineFixture.keys;
import static io.kvtier.engine.EngineFixture.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The pool (L2) alone: lifecycle, visibility, pins, eviction, full pool. */
class EnginePoolTest
{
    @Test
    void shouldServeCommittedPagesWithTheirBytes() throws Exception
    {
        try (Engine engine = EngineFixture.start(EngineFixture.settings(null, 64));
             Session writer = engine.openSession();
             Session reader = engine.openSession())
        {
            keys(writer, 1, 10);
            assertThat(write(writer, 0, 10)).isEqualTo(10);
            keys(reader, 1, 10);
            assertThat(reader.lookup(0, 10)).isEqualTo(10);
            assertThat(reader.l2Pages()).isEqualTo(10);
            assertThat(reader.acquire(0, 10)).isEqualTo(10);
            for (int i = 0; i < 10; i++)
            {
                assertThat(reader.status(i)).isEqualTo(PageEntryStatus.PINNED);
                assertThat(intact(reader, i)).as("page %d", i).isTrue();
            }
            assertThat(reader.acquiredFromPool()).isEqualTo(10);
            reader.release();
            assertThat(engine.snapshot().get(EngineCounter.L2_HIT_PAGES)).isEqualTo(10);
        }
    }

    @Test
    void shouldNeverShowAReservedOrAbortedPage() throws Exception
    {
        try (Engine engine = EngineFixture.start(EngineFixture.settings(null, 64));
             Session writer = engine.openSession();
             Session reader = engine.openSession())
        {
            keys(writer, 2, 4);
            keys(reader, 2, 4);
            assertThat(writer.reserve(0, 4)).isEqualTo(4);
            for (int i = 0; i < 4; i++)
            {
                EngineFixture.fill(writer, i);
            }
            assertThat(reader.lookup(0, 4)).isZero();
            assertThat(reader.acquire(0, 4)).isZero();
            // A second writer of the same keys is told someone else is writing them.
            assertThat(reader.reserve(0, 4)).isZero();
            assertThat(reader.status(0)).isEqualTo(PageEntryStatus.BUSY);
            writer.commit(0, 2);
            writer.abort(2, 2);
            assertThat(reader.acquire(0, 4)).isEqualTo(2);
            reader.release();
            assertThat(engine.snapshot().get(EngineCounter.PAGES_ABORTED)).isEqualTo(2);
        }
    }

    @Test
    void shouldStopThePrefixAtTheFirstMissingPageAndDropPinsPastIt() throws Exception
    {
        try (Engine engine = EngineFixture.start(EngineFixture.settings(null, 64));
             Session session = engine.openSession())
        {
            keys(session, 3, 6);
            write(session, 0, 2);
            write(session, 3, 3);
            assertThat(session.acquire(0, 6)).isEqualTo(2);
            assertThat(session.status(3)).isNotEqualTo(PageEntryStatus.PINNED);
            session.release();
            // Pages 3..5 were not left pinned: they can all be evicted.
            assertThat(session.evict(0, 6)).isEqualTo(5);
        }
    }

    @Test
    void shouldTellExistingPagesApartOnReserve() throws Exception
    {
        try (Engine engine = EngineFixture.start(EngineFixture.settings(null, 64));
             Session session = engine.openSession())
        {
            keys(session, 4, 3);
            write(session, 0, 2);
            assertThat(session.reserve(0, 3)).isEqualTo(1);
            assertThat(session.status(0)).isEqualTo(PageEntryStatus.EXISTS);
            assertThat(session.status(1)).isEqualTo(PageEntryStatus.EXISTS);
            assertThat(session.status(2)).isEqualTo(PageEntryStatus.RESERVED);
            session.abort(2, 1);
        }
    }

    @Test
    void shouldRejectACommitWithoutAPayloadLength() throws Exception
    {
        try (Engine engine = EngineFixture.start(EngineFixture.settings(null, 64));
             Session session = engine.openSession())
        {
            keys(session, 5, 1);
            session.reserve(0, 1);
            assertThatThrownBy(() -> session.commit(0, 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("payload length");
            assertThatThrownBy(() -> session.payloadLength(0, EngineFixture.PAGE_SIZE + 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("page size");
        }
    }

    @Test
    void shouldRejectKeyRangesOutsideTheChain() throws Exception
    {
        try (Engine engine = EngineFixture.start(EngineFixture.settings(null, 64));
             Session session = engine.openSession())
        {
            keys(session, 6, 3);
            assertThatThrownBy(() -> session.acquire(1, 3)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("[1, 4)");
        }
    }

    @Test
    void shouldEvictLeastRecentlyUsedUnpinnedPagesBetweenWaterLevels() throws Exception
    {
        final Map<String, String> settings = EngineFixture.settings(null, 20);
        settings.put(EngineConfig.POOL_EVICT_HIGH, "0.9");
        settings.put(EngineConfig.POOL_EVICT_LOW, "0.5");
        // The victims named below are LRU's; the default policy's order is tested on its own.
        settings.put(EngineConfig.POLICY_EVICTION, "lru");
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            keys(session, 7, 40);
            write(session, 0, 18);
            // Touch pages 0..3 so they are the most recently used; pin 4 so it cannot go.
            assertThat(session.acquire(0, 5)).isEqualTo(5);
            session.release(0, 4);
            write(session, 18, 1);
            // Taking a 19th page at 18 in use (high water) first evicts down to 10 (low water), oldest
            // unpinned first: 5, 6, ... 12; then the new page makes 11.
            assertThat(engine.snapshot().get(EngineCounter.PAGES_IN_USE)).isEqualTo(11);
            assertThat(engine.snapshot().get(EngineCounter.PAGES_EVICTED)).isEqualTo(8);
            assertThat(session.acquire(0, 5)).isEqualTo(5);
            for (int i = 5; i <= 12; i++)
            {
                assertThat(session.lookup(i, 1)).as("page %d", i).isZero();
            }
            assertThat(session.lookup(13, 6)).isEqualTo(6);
            session.release();
        }
    }

    @Test
    void shouldReportAFullPoolAndKeepCommittedPages() throws Exception
    {
        try (Engine engine = EngineFixture.start(EngineFixture.settings(null, 8));
             Session holder = engine.openSession();
             Session writer = engine.openSession())
        {
            keys(holder, 8, 8);
            write(holder, 0, 8);
            assertThat(holder.acquire(0, 8)).isEqualTo(8);
            keys(writer, 9, 2);
            assertThat(writer.reserve(0, 2)).isZero();
            assertThat(writer.status(0)).isEqualTo(PageEntryStatus.POOL_FULL);
            assertThat(writer.status(1)).isEqualTo(PageEntryStatus.POOL_FULL);
            for (int i = 0; i < 8; i++)
            {
                assertThat(intact(holder, i)).isTrue();
            }
            assertThat(engine.snapshot().get(EngineCounter.RESERVE_POOL_FULL)).isEqualTo(1);
            holder.release();
            assertThat(writer.reserve(0, 2)).isEqualTo(2);
            writer.abort(0, 2);
        }
    }

    @Test
    void shouldKeepPinnedPagesOutOfEviction() throws Exception
    {
        try (Engine engine = EngineFixture.start(EngineFixture.settings(null, 10));
             Session holder = engine.openSession();
             Session churn = engine.openSession())
        {
            keys(holder, 10, 3);
            write(holder, 0, 3);
            assertThat(holder.acquire(0, 3)).isEqualTo(3);
            keys(churn, 11, 100);
            for (int i = 0; i < 100; i++)
            {
                write(churn, i, 1);
            }
            for (int i = 0; i < 3; i++)
            {
                assertThat(intact(holder, i)).isTrue();
            }
            assertThat(holder.evict(0, 3)).isZero();
            holder.release();
            assertThat(holder.evict(0, 3)).isEqualTo(3);
        }
    }

    @Test
    void shouldRefuseASecondEngineOnTheSamePoolFile() throws Exception
    {
        final Map<String, String> settings = EngineFixture.settings(null, 8);
        try (Engine engine = EngineFixture.start(settings))
        {
            assertThatThrownBy(() -> EngineFixture.start(settings))
                .isInstanceOf(io.kvtier.engine.pool.PoolOwnedException.class)
                .hasMessageContaining("owned by a live engine")
                .hasMessageContaining("pid " + ProcessHandle.current().pid())
                .hasMessageContaining("pool.path");
            try (Session session = engine.openSession())
            {
                keys(session, 12, 1);
                assertThat(write(session, 0, 1)).isEqualTo(1);
            }
        }
    }

    @Test
    void shouldFailRequestsAfterClose() throws Exception
    {
        final Engine engine = EngineFixture.start(EngineFixture.settings(null, 8));
        final Session session = engine.openSession();
        keys(session, 13, 1);
        engine.close();
        assertThatThrownBy(() -> session.lookup(0, 1)).isInstanceOf(SessionException.class).hasMessageContaining("closed");
        assertThat(EngineFixture.poolPath(EngineFixture.settings(null, 8))).doesNotExist();
    }

    @Test
    void shouldZeroTheUnusedTailOfAPageSoNoEarlierBytesLeak() throws Exception
    {
        // 80 KiB pages: the tail is cleared in whole zero blocks, then a remainder, after an unaligned start.
        final java.util.Map<String, String> settings = EngineFixture.settings(null, 4);
        settings.put(io.kvtier.engine.config.EngineConfig.POOL_PAGE_SIZE, "80KiB");
        settings.put(io.kvtier.engine.config.EngineConfig.POOL_SIZE, "320KiB");
        try (Engine engine = EngineFixture.start(settings);
             Session session = engine.openSession())
        {
            final long pageSize = engine.pool().pageSize();
            session.keys().add(1, 1).add(2, 2);
            assertThat(session.reserve(0, 1)).isEqualTo(1);
            session.page(0).fill((byte)0xAB);
            session.payloadLength(0, (int)pageSize);
            assertThat(session.commit(0, 1)).isEqualTo(1);
            final int first = engine.pool().index().value(engine.pool().index().find(1, 1));
            assertThat(session.evict(0, 1)).isEqualTo(1);
            // The freed page is the next one handed out: the new, shorter page lands on the old bytes.
            assertThat(session.reserve(1, 1)).isEqualTo(1);
            assertThat(session.pageId(1)).isEqualTo(first);
            session.page(1).asSlice(0, 101).fill((byte)0x11);
            session.payloadLength(1, 101);
            assertThat(session.commit(1, 1)).isEqualTo(1);
            assertThat(session.acquire(1, 1)).isEqualTo(1);
            final java.lang.foreign.MemorySegment page = session.page(1);
            assertThat(page.asSlice(0, 101).mismatch(java.lang.foreign.Arena.global().allocate(101).fill((byte)0x11))).isEqualTo(-1);
            for (long at = 101; at < pageSize; at++)
            {
                assertThat(page.get(java.lang.foreign.ValueLayout.JAVA_BYTE, at)).as("byte %d of the tail", at).isZero();
            }
            assertThat(engine.pool().frames().payloadIntact(first)).isTrue();
            session.release();
        }
    }
}
