package io.kvtier.engine.core;

import io.kvtier.client.pool.PageStateWord;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.engine.config.WritePolicy;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.spi.PageKey;
import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/** Copies from the pool to L3, driven on the part itself, over a tier that answers when the test says. */
class BackupsTest
{
    @TempDir
    Path dir;

    private CoreParts parts;

    private CoreParts parts(final Consumer<CoreParts.Settings> configure) throws IOException
    {
        parts = new CoreParts(dir, configure);
        return parts;
    }

    @AfterEach
    void close()
    {
        if (parts != null)
        {
            parts.close();
        }
    }

    private TierBatch submittedWrite()
    {
        parts.flush();
        assertThat(parts.tier(0).writes).isNotEmpty();
        return parts.tier(0).writes.getLast();
    }

    private int answeredWrites;

    /** Answers, as a working tier, the writes submitted since the last call, and delivers the answers. */
    private void answerNewWrites()
    {
        parts.flush();
        final List<TierBatch> writes = parts.tier(0).writes;
        while (answeredWrites < writes.size())
        {
            parts.tier(0).answer(writes.get(answeredWrites++));
        }
        parts.deliver();
    }

    private int pinned(final int... pages)
    {
        int n = 0;
        for (final int page : pages)
        {
            n += parts.pins(page) > 0 ? 1 : 0;
        }
        return n;
    }

    private ClientRecord flush(final TestPort port)
    {
        final ClientRecord r = parts.begin(port, MessageType.FLUSH, 0, 0);
        parts.backups.flush(r);
        return r;
    }

    @Test
    void shouldCopyAPageL3LacksPinnedUntilTheCopyLands() throws IOException
    {
        parts(s -> s.writePolicy = WritePolicy.WRITE_THROUGH);
        final int page = parts.serve(1, 1);

        parts.backups.backupIfMissing(page);

        assertThat(parts.pins(page)).isEqualTo(1);
        assertThat(parts.backups.isCopying(page)).isTrue();
        assertThat(parts.counter(EngineCounter.BACKUPS_STARTED)).isEqualTo(1);
        assertThat(parts.counter(EngineCounter.BACKUPS_IN_FLIGHT)).isEqualTo(1);
        final TierBatch write = submittedWrite();
        assertThat(write.size()).isEqualTo(1);
        assertThat(write.segment(0).byteSize()).as("payload and trailer, as a reader will verify it").isEqualTo(parts.pool.frameLength());
        parts.tier(0).answer(write);
        parts.deliver();

        assertThat(parts.pins(page)).isZero();
        assertThat(parts.backups.isCopying(page)).isFalse();
        assertThat(parts.tierBits(1, 1)).isEqualTo(1);
        assertThat(parts.counter(EngineCounter.BACKUPS_COMPLETED)).isEqualTo(1);
        assertThat(parts.counter(EngineCounter.BACKUPS_IN_FLIGHT)).isZero();
        assertThat(parts.counter(EngineCounter.L3_BYTES_WRITTEN)).isEqualTo(parts.pool.frameLength());
        assertThat(parts.tier(0).objects.get(new PageKey(1, 1))).isEqualTo(parts.pool.frames().frame(page).toArray(ValueLayout.JAVA_BYTE));

        parts.backups.backupIfMissing(page);
        assertThat(parts.counter(EngineCounter.BACKUPS_STARTED)).as("L3 has it now").isEqualTo(1);
    }

    @Test
    void shouldPinNoMoreThanMaxBackupPagesAndKeepTheRestUnpinnedInABacklog() throws IOException
    {
        parts(s ->
        {
            s.writePolicy = WritePolicy.WRITE_THROUGH;
            s.maxBackupPages = 2;
        });
        final int[] pages = new int[5];
        for (int i = 0; i < 5; i++)
        {
            pages[i] = parts.serve(1, i + 1);
            parts.backups.backupIfMissing(pages[i]);
        }

        assertThat(parts.backups.inFlight()).isEqualTo(2);
        assertThat(pinned(pages)).isEqualTo(2);
        assertThat(parts.counter(EngineCounter.BACKUPS_QUEUED)).isEqualTo(3);
        parts.tier(0).answer(submittedWrite());
        parts.deliver();
        assertThat(parts.backups.inFlight()).as("two more start as two end").isEqualTo(2);
        assertThat(pinned(pages)).isEqualTo(2);
        assertThat(parts.counter(EngineCounter.BACKUPS_QUEUED)).isEqualTo(1);
        parts.tier(0).answer(submittedWrite());
        parts.deliver();
        parts.tier(0).answer(submittedWrite());
        parts.deliver();

        assertThat(parts.counter(EngineCounter.BACKUPS_COMPLETED)).isEqualTo(5);
        assertThat(parts.counter(EngineCounter.BACKUPS_QUEUED)).isZero();
        assertThat(pinned(pages)).isZero();
        for (int i = 0; i < 5; i++)
        {
            assertThat(parts.tierBits(1, i + 1)).isEqualTo(1);
        }
    }

    @Test
    void shouldHoldAWriteBackPageUntilItsCopyLandsThenEvictIt() throws IOException
    {
        parts(s ->
        {
            s.pages = 1;
            s.writePolicy = WritePolicy.WRITE_BACK;
        });
        final int page = parts.serve(1, 1);

        assertThat(parts.space.allocate()).as("held for its copy").isEqualTo(PoolSpace.NONE);
        assertThat(parts.backups.evictionsPending()).isEqualTo(1);
        assertThat(parts.state(page)).isEqualTo(PageStateWord.SERVING);
        parts.tier(0).answer(submittedWrite());
        parts.deliver();

        assertThat(parts.backups.evictionsPending()).isZero();
        assertThat(parts.state(page)).isEqualTo(PageStateWord.FREE);
        assertThat(parts.boundPage(1, 1)).as("in L3 only now").isNegative();
        assertThat(parts.tierBits(1, 1)).isEqualTo(1);
        assertThat(parts.space.allocate()).isEqualTo(page);
    }

    private void writeBackParts(final boolean cleanAhead) throws IOException
    {
        // 32 pages: eviction at 32 in use down to 24; cleaning ahead from 16 in use; at most 8 copies in flight, 4 of them ahead.
        parts(s ->
        {
            s.pages = 32;
            s.writePolicy = WritePolicy.WRITE_BACK;
            s.maxBackupPages = 8;
        });
        parts.backups.cleanAhead(cleanAhead);
    }

    /**
     * Write-back copies the coldest pages ahead of eviction: once they landed, the eviction that reaches them
     * frees them at once, no reserve waits for a copy, and that eviction copies the pages just past it.
     */
    @Test
    void shouldCopyTheColdestWriteBackPagesAheadSoThatEvictionWaitsForNone() throws IOException
    {
        writeBackParts(true);
        final int[] pages = new int[32];
        for (int i = 0; i < 32; i++)
        {
            pages[i] = parts.serve(1, i + 1);
        }

        assertThat(parts.space.cleanAhead(8)).as("four copies start, the fifth finds no room").isEqualTo(4);
        assertThat(parts.backups.inFlight()).isEqualTo(4);
        assertThat(pinned(pages[0], pages[1], pages[2], pages[3])).as("the four coldest, pinned while copied").isEqualTo(4);
        for (int round = 0; round < 4; round++)
        {
            answerNewWrites();
            parts.space.cleanAhead(8);
        }
        answerNewWrites();
        assertThat(parts.counter(EngineCounter.BACKUPS_CLEANED_AHEAD)).as("the 8 coldest, an idle look's budget").isEqualTo(8);
        assertThat(parts.backups.inFlight()).isZero();

        assertThat(parts.space.allocate()).as("the full pool evicts its 8 coldest, all copied").isNotEqualTo(PoolSpace.NONE);
        assertThat(parts.counter(EngineCounter.EVICTIONS_HELD)).as("evictions that waited for a copy").isZero();
        assertThat(parts.backups.evictionsPending()).isZero();
        for (int i = 0; i < 8; i++)
        {
            assertThat(parts.boundPage(1, i + 1)).as("key (1, %d) left the pool", i + 1).isNegative();
            assertThat(parts.tierBits(1, i + 1)).as("and is in L3").isEqualTo(1);
        }
        assertThat(parts.counter(EngineCounter.BACKUPS_CLEANED_AHEAD)).as("the eviction copies the next coldest ahead").isEqualTo(12);
        assertThat(pinned(pages[8], pages[9], pages[10], pages[11])).isEqualTo(4);
    }

    /** Without clean-ahead the same eviction holds its pages for their copies: what the setting removes. */
    @Test
    void shouldHoldEvictionsForTheirCopiesWhenNotCleaningAhead() throws IOException
    {
        writeBackParts(false);
        for (int i = 0; i < 32; i++)
        {
            parts.serve(1, i + 1);
        }
        assertThat(parts.space.cleanAhead(64)).isZero();
        assertThat(parts.space.allocate()).as("every cold page held for its copy").isEqualTo(PoolSpace.NONE);
        assertThat(parts.counter(EngineCounter.EVICTIONS_HELD)).isEqualTo(8);
        assertThat(parts.backups.evictionsPending()).isEqualTo(8);
        assertThat(parts.counter(EngineCounter.BACKUPS_CLEANED_AHEAD)).isZero();
    }

    /** Cleaning ahead starts at its mark, and an engine whose pool did not change since its last look does nothing. */
    @Test
    void shouldCleanAheadFromItsMarkAndNotAgainUntilThePoolChanged() throws IOException
    {
        writeBackParts(true);
        for (int i = 0; i < 15; i++)
        {
            parts.serve(1, i + 1);
        }
        assertThat(parts.space.cleanAhead(64)).as("15 of 32 pages in use, below the mark of 16").isZero();
        parts.serve(1, 16);
        int looks = 0;
        while (parts.space.cleanAhead(64) > 0 && looks++ < 10)
        {
            answerNewWrites();
        }
        assertThat(parts.counter(EngineCounter.BACKUPS_CLEANED_AHEAD)).as("every page, four at a time").isEqualTo(16);
        assertThat(parts.space.cleanAhead(64)).as("nothing changed since the last look").isZero();
        parts.serve(1, 17);
        assertThat(parts.space.cleanAhead(64)).as("a page more, the hottest: outside the window of the 16 coldest").isZero();
        assertThat(parts.counter(EngineCounter.BACKUPS_CLEANED_AHEAD)).isEqualTo(16);
    }

    @Test
    void shouldNeverCleanAheadUnderWriteThrough() throws IOException
    {
        parts(s ->
        {
            s.pages = 32;
            s.writePolicy = WritePolicy.WRITE_THROUGH;
        });
        parts.backups.cleanAhead(true);
        for (int i = 0; i < 24; i++)
        {
            parts.serve(1, i + 1);
        }
        assertThat(parts.backups.cleansAhead()).isFalse();
        assertThat(parts.space.cleanAhead(64)).isZero();
        assertThat(parts.counter(EngineCounter.BACKUPS_CLEANED_AHEAD)).isZero();
    }

    @Test
    void shouldKeepAHeldPageThatAReaderPinnedMeanwhile() throws IOException
    {
        parts(s ->
        {
            s.pages = 1;
            s.writePolicy = WritePolicy.WRITE_BACK;
        });
        final int page = parts.serve(1, 1);
        parts.space.allocate();
        final TierBatch write = submittedWrite();
        assertThat(parts.pool.tryPin(page)).isTrue();

        parts.tier(0).answer(write);
        parts.deliver();

        assertThat(parts.state(page)).isEqualTo(PageStateWord.SERVING);
        assertThat(parts.pins(page)).isEqualTo(1);
        assertThat(parts.backups.evictionsPending()).isZero();
        parts.pool.unpin(page);
        assertThat(parts.space.allocate()).as("back in the eviction order, and copied now").isEqualTo(page);
    }

    @Test
    void shouldCountEachFailedCopyAndDropThePageAsLostAfterTheLastAttempt() throws IOException
    {
        parts(s ->
        {
            s.pages = 1;
            s.writePolicy = WritePolicy.WRITE_BACK;
        });
        final int page = parts.serve(1, 1);
        for (int attempt = 1; attempt < Backups.MAX_BACKUP_ATTEMPTS; attempt++)
        {
            assertThat(parts.space.allocate()).isEqualTo(PoolSpace.NONE);
            RecordingTier.complete(submittedWrite(), TierStatus.IO_ERROR);
            parts.deliver();
            assertThat(parts.counter(EngineCounter.BACKUPS_FAILED)).isEqualTo(attempt);
            assertThat(parts.state(page)).as("attempt " + attempt + " failed: it stays").isEqualTo(PageStateWord.SERVING);
            assertThat(parts.pins(page)).isZero();
            assertThat(parts.counter(EngineCounter.BACKUPS_LOST)).isZero();
        }

        assertThat(parts.space.allocate()).isEqualTo(PoolSpace.NONE);
        RecordingTier.complete(submittedWrite(), TierStatus.IO_ERROR);
        parts.deliver();

        assertThat(parts.counter(EngineCounter.BACKUPS_STARTED)).isEqualTo(Backups.MAX_BACKUP_ATTEMPTS);
        assertThat(parts.counter(EngineCounter.BACKUPS_FAILED)).isEqualTo(Backups.MAX_BACKUP_ATTEMPTS);
        assertThat(parts.counter(EngineCounter.BACKUPS_LOST)).isEqualTo(1);
        assertThat(parts.state(page)).isEqualTo(PageStateWord.FREE);
        assertThat(parts.index.find(1, 1)).isNegative();
    }

    @Test
    void shouldLetAPageWhoseWriteThroughCopiesKeptFailingLeaveAsLost() throws IOException
    {
        parts(s -> s.writePolicy = WritePolicy.WRITE_THROUGH);
        final int page = parts.serve(1, 1);
        assertThat(parts.backups.beforeEvict(page)).as("no copy needed yet").isEqualTo(PoolSpace.EvictionGate.EVICT);
        parts.backups.backupIfMissing(page);
        assertThat(parts.backups.beforeEvict(page)).as("being copied").isEqualTo(PoolSpace.EvictionGate.SKIP);
        RecordingTier.complete(submittedWrite(), TierStatus.NO_SPACE);
        parts.deliver();

        assertThat(parts.backups.beforeEvict(page)).as("its copy failed: copy it before it leaves").isEqualTo(PoolSpace.EvictionGate.HELD);
        for (int attempt = 2; attempt <= Backups.MAX_BACKUP_ATTEMPTS; attempt++)
        {
            RecordingTier.complete(submittedWrite(), TierStatus.NO_SPACE);
            parts.deliver();
            if (attempt < Backups.MAX_BACKUP_ATTEMPTS)
            {
                parts.backups.backupIfMissing(page);
            }
        }

        assertThat(parts.counter(EngineCounter.BACKUPS_FAILED)).isEqualTo(Backups.MAX_BACKUP_ATTEMPTS);
        assertThat(parts.backups.beforeEvict(page)).isEqualTo(PoolSpace.EvictionGate.EVICT_LOST);
    }

    @Test
    void shouldLetAPageLeaveFreelyWhenNoCopyIsNeeded() throws IOException
    {
        parts(s -> s.writePolicy = WritePolicy.WRITE_BACK);
        final int inL3 = parts.serve(1, 1);
        parts.index.addTier(1, 1, 0);
        assertThat(parts.backups.beforeEvict(inL3)).isEqualTo(PoolSpace.EvictionGate.EVICT);
        close();

        parts(s -> s.writePolicy = WritePolicy.NONE);
        final int page = parts.serve(1, 1);
        assertThat(parts.backups.beforeEvict(page)).isEqualTo(PoolSpace.EvictionGate.EVICT);
    }

    @Test
    void shouldAnswerFlushAtOnceWhenNothingIsInFlight() throws IOException
    {
        parts(s -> s.writePolicy = WritePolicy.WRITE_THROUGH);
        final TestPort port = parts.open(1, 1);
        flush(port);
        assertThat(port.completions).isEqualTo(1);
        assertThat(port.status).isEqualTo(ErrorCode.OK);
    }

    @Test
    void shouldAnswerFlushWhenTheLastCopyEndsAndTheBacklogIsEmpty() throws IOException
    {
        parts(s ->
        {
            s.writePolicy = WritePolicy.WRITE_THROUGH;
            s.maxBackupPages = 1;
        });
        final TestPort port = parts.open(1, 1);
        final int first = parts.serve(1, 1);
        final int second = parts.serve(1, 2);
        parts.backups.backupIfMissing(first);
        parts.backups.backupIfMissing(second);
        flush(port);
        assertThat(port.completions).isZero();

        // The waiting copy's page is evicted first: that copy will never be made.
        assertThat(parts.space.evict(second, parts.pool.metadata().stateWordAcquire(second))).isTrue();
        assertThat(parts.counter(EngineCounter.BACKUPS_SKIPPED)).isEqualTo(1);
        assertThat(parts.counter(EngineCounter.BACKUPS_QUEUED)).isZero();
        assertThat(port.completions).as("one copy still in flight").isZero();

        parts.tier(0).answer(submittedWrite());
        parts.deliver();
        assertThat(port.completions).isEqualTo(1);
        assertThat(port.status).isEqualTo(ErrorCode.OK);
    }

    @Test
    void shouldReportTheCopiesThatNeverStartedAsTheTotalOfEachWindowNotTheFirstAlone() throws IOException
    {
        parts(s ->
        {
            s.writePolicy = WritePolicy.WRITE_THROUGH;
            s.maxBackupPages = 1;
            s.pages = 32;
        });
        final java.util.List<String> warnings = new java.util.concurrent.CopyOnWriteArrayList<>();
        final java.util.logging.Logger log = java.util.logging.Logger.getLogger(Backups.class.getName());
        final java.util.logging.Handler capture = new java.util.logging.Handler()
        {
            @Override
            public void publish(final java.util.logging.LogRecord record)
            {
                warnings.add(java.text.MessageFormat.format(record.getMessage(), record.getParameters()));
            }

            @Override
            public void flush()
            {
            }

            @Override
            public void close()
            {
            }
        };
        log.addHandler(capture);
        try
        {
            parts.backups.backupIfMissing(parts.serve(1, 1)); // in flight: every later copy waits in the backlog
            for (int k = 2; k < 22; k++)
            {
                final int page = parts.serve(1, k);
                parts.backups.backupIfMissing(page);
                assertThat(parts.space.evict(page, parts.pool.metadata().stateWordAcquire(page))).isTrue();
            }
            assertThat(parts.counter(EngineCounter.BACKUPS_SKIPPED)).isEqualTo(20);
            assertThat(warnings).noneMatch(w -> w.contains("left the pool before their backup")).as("not within the window");
            parts.clock.advance(java.time.Duration.ofSeconds(11));
            parts.backups.onTime(parts.clock.nanoTime());
            assertThat(warnings).filteredOn(w -> w.contains("left the pool before their backup")).singleElement()
                .asString().contains("20 pages left the pool").contains("20 since the start");
        }
        finally
        {
            log.removeHandler(capture);
        }
    }

    @Test
    void shouldAnswerFlushAtTheIoTimeoutWithTheBackupsNotYetEnded() throws IOException
    {
        parts(s ->
        {
            s.writePolicy = WritePolicy.WRITE_THROUGH;
            s.maxBackupPages = 1;
        });
        final TestPort port = parts.open(1, 1);
        parts.backups.backupIfMissing(parts.serve(1, 1));
        parts.backups.backupIfMissing(parts.serve(1, 2));
        submittedWrite(); // handed to the tier, which never answers
        flush(port);

        parts.advance(parts.settings.ioTimeout.minusNanos(1));
        parts.backups.onTime(parts.now());
        assertThat(port.completions).as("within l3.io-timeout it waits").isZero();

        parts.advance(java.time.Duration.ofNanos(1));
        parts.backups.onTime(parts.now());
        assertThat(port.completions).isEqualTo(1);
        assertThat(port.status).isEqualTo(ErrorCode.OK);
        assertThat(port.resultCount).as("one copy in flight, one queued").isEqualTo(2);
        assertThat(parts.counter(EngineCounter.FLUSHES_TIMED_OUT)).isEqualTo(1);
    }

    @Test
    void shouldNotAnswerAFlushTwiceNorARequestThatIsNoLongerAFlush() throws IOException
    {
        parts(s -> s.writePolicy = WritePolicy.WRITE_THROUGH);
        final TestPort port = parts.open(1, 1);
        final int page = parts.serve(1, 1);
        parts.backups.backupIfMissing(page);
        final TierBatch write = submittedWrite();
        flush(port);
        // The client's flush was answered some other way (the engine closing) and it went on to another request.
        parts.record(port).complete(ErrorCode.CLOSED);
        parts.begin(port, InternalOp.KEEP_ALIVE, 0, 0);
        final int completions = port.completions;

        parts.advance(parts.settings.ioTimeout);
        parts.backups.onTime(parts.now());
        parts.tier(0).answer(write);
        parts.deliver();

        assertThat(port.completions).as("neither the deadline nor the copy's end answers it").isEqualTo(completions);
        assertThat(parts.counter(EngineCounter.FLUSHES_TIMED_OUT)).isZero();
    }

    @Test
    void shouldEndACopyWhoseBatchTimedOutAsFailedAndIgnoreTheTiersLateAnswer() throws IOException
    {
        parts(s -> s.writePolicy = WritePolicy.WRITE_THROUGH);
        final TestPort port = parts.open(1, 1);
        final int page = parts.serve(1, 1);
        parts.backups.backupIfMissing(page);
        final TierBatch write = submittedWrite();
        flush(port);

        parts.advance(parts.settings.ioTimeout);
        parts.io.onTime(parts.now());

        assertThat(parts.backups.isCopying(page)).isFalse();
        assertThat(parts.pins(page)).as("its pin goes: a late reader of it can only store bytes a load refuses").isZero();
        assertThat(parts.counter(EngineCounter.BACKUPS_FAILED)).isEqualTo(1);
        assertThat(parts.counter(EngineCounter.BACKUPS_IN_FLIGHT)).isZero();
        assertThat(port.completions).as("nothing in flight any more: the flush is answered").isEqualTo(1);
        assertThat(port.resultCount).isZero();

        parts.tier(0).answer(write);
        parts.deliver();
        assertThat(parts.tierBits(1, 1)).as("a late OK is not taken as a copy").isZero();
        assertThat(parts.counter(EngineCounter.BACKUPS_COMPLETED)).isZero();
        assertThat(parts.pins(page)).isZero();
    }

    @Test
    void shouldNotCopyAPageFromAStaleBacklogEntryAfterItWasReused() throws IOException
    {
        parts(s ->
        {
            s.writePolicy = WritePolicy.WRITE_THROUGH;
            s.maxBackupPages = 1;
        });
        final int first = parts.serve(1, 1);
        final int second = parts.serve(1, 2);
        parts.backups.backupIfMissing(first);
        parts.backups.backupIfMissing(second);
        assertThat(parts.space.evict(second, parts.pool.metadata().stateWordAcquire(second))).isTrue();
        assertThat(parts.serve(1, 3)).as("the same page, for another key").isEqualTo(second);

        parts.tier(0).answer(submittedWrite());
        parts.deliver();

        assertThat(parts.counter(EngineCounter.BACKUPS_STARTED)).isEqualTo(1);
        assertThat(parts.backups.inFlight()).isZero();
        assertThat(parts.pins(second)).isZero();
        assertThat(parts.tierBits(1, 3)).isZero();
    }

    @Test
    void shouldCopyTheClientsPoolPagesThatL3Lacks() throws IOException
    {
        parts(s -> s.writePolicy = WritePolicy.NONE);
        final TestPort port = parts.open(1, 4);
        parts.serve(1, 1);
        parts.serve(1, 2);
        parts.index.addTier(1, 2, 0);
        parts.serve(1, 4);

        parts.backups.backupKeys(parts.begin(port, MessageType.BACKUP, 0, 4));

        assertThat(port.resultCount).as("key 2 is in L3 already, key 3 is nowhere").isEqualTo(2);
        assertThat(parts.counter(EngineCounter.BACKUPS_STARTED)).isEqualTo(2);
    }
}
