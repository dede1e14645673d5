package io.kvtier.engine.core;

import io.kvtier.client.pool.PageStateWord;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.config.WritePolicy;
import io.kvtier.engine.status.EngineCounter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/** Reserve, commit, abort, and reservations that lapse, driven directly on the part. */
class ReservationsTest
{
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    @TempDir
    Path dir;

    private CoreParts parts;

    private CoreParts parts(final Consumer<CoreParts.Settings> configure) throws IOException
    {
        parts = new CoreParts(dir, s ->
        {
            s.reservationTimeout = TIMEOUT;
            configure.accept(s);
        });
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

    private ClientRecord reserve(final TestPort port, final int from, final int count)
    {
        final ClientRecord r = parts.begin(port, MessageType.RESERVE, from, count);
        parts.reservations.reserve(r);
        return r;
    }

    private int commit(final TestPort port, final int from, final int count)
    {
        parts.reservations.commit(parts.begin(port, MessageType.COMMIT, from, count));
        return port.resultCount;
    }

    private boolean visible(final TestPort port, final int key)
    {
        final long high = port.keys().high(key);
        final long low = port.keys().low(key);
        return parts.residency.servingPage(parts.index.find(high, low), high, low) != Residency.NONE;
    }

    @Test
    void shouldReserveAnInvisibleWritingPagePerKey() throws IOException
    {
        parts(s -> { });
        final TestPort port = parts.open(1, 3);
        final ClientRecord r = reserve(port, 0, 3);

        assertThat(port.completions).isEqualTo(1);
        assertThat(port.status).isEqualTo(ErrorCode.OK);
        assertThat(port.resultCount).isEqualTo(3);
        assertThat(parts.counter(EngineCounter.PAGES_RESERVED)).isEqualTo(3);
        assertThat(port.page(0)).isNotIn(port.page(1), port.page(2));
        assertThat(port.page(1)).isNotEqualTo(port.page(2));
        for (int i = 0; i < 3; i++)
        {
            final int page = port.page(i);
            assertThat(port.status(i)).isEqualTo(PageEntryStatus.RESERVED);
            assertThat(parts.state(page)).isEqualTo(PageStateWord.WRITING);
            assertThat(port.generations()[i]).isEqualTo(parts.generation(page));
            assertThat(parts.pool.metadata().ownerPlain(page)).isEqualTo(r.id);
            assertThat(parts.boundPage(1, i + 1)).as("bound, so that no one else writes the key").isEqualTo(page);
            assertThat(visible(port, i)).isFalse();
        }
        assertThat(r.holdLimit).isEqualTo(3);
    }

    @Test
    void shouldAnswerExistsForAServingKeyAndBusyForOneAnotherClientWrites() throws IOException
    {
        parts(s -> { });
        final TestPort port = parts.open(1, 3);
        final TestPort other = parts.open(1, 3);
        parts.serve(1, 1);
        reserve(other, 1, 1);
        assertThat(other.status(1)).isEqualTo(PageEntryStatus.RESERVED);

        reserve(port, 0, 3);

        assertThat(port.status(0)).isEqualTo(PageEntryStatus.EXISTS);
        assertThat(port.status(1)).isEqualTo(PageEntryStatus.BUSY);
        assertThat(port.status(2)).isEqualTo(PageEntryStatus.RESERVED);
        assertThat(port.resultCount).isEqualTo(1);

        // Its own reservation is kept as it is when the client asks again.
        final int page = port.page(2);
        final int freeBefore = parts.space.free();
        reserve(port, 2, 1);
        assertThat(port.status(2)).isEqualTo(PageEntryStatus.RESERVED);
        assertThat(port.page(2)).isEqualTo(page);
        assertThat(parts.space.free()).isEqualTo(freeBefore);
    }

    @Test
    void shouldAnswerPoolFullForKeysNoPageCanBeFoundFor() throws IOException
    {
        parts(s -> s.pages = 2);
        final TestPort port = parts.open(1, 3);

        reserve(port, 0, 3);

        assertThat(port.status(0)).isEqualTo(PageEntryStatus.RESERVED);
        assertThat(port.status(1)).isEqualTo(PageEntryStatus.RESERVED);
        assertThat(port.status(2)).isEqualTo(PageEntryStatus.POOL_FULL);
        assertThat(port.resultCount).isEqualTo(2);
        assertThat(parts.counter(EngineCounter.RESERVE_POOL_FULL)).isEqualTo(1);
    }

    @Test
    void shouldCommitASealedPageAndMakeItVisible() throws IOException
    {
        parts(s -> { });
        final TestPort port = parts.open(1, 1);
        reserve(port, 0, 1);
        final int page = port.page(0);
        parts.seal(port, 0);

        assertThat(commit(port, 0, 1)).isEqualTo(1);

        assertThat(port.status(0)).isEqualTo(PageEntryStatus.COMMITTED);
        assertThat(parts.state(page)).isEqualTo(PageStateWord.SERVING);
        assertThat(parts.pins(page)).isZero();
        assertThat(parts.pool.metadata().ownerPlain(page)).isEqualTo(EngineConductor.ENGINE_OWNER);
        assertThat(visible(port, 0)).isTrue();
        assertThat(parts.counter(EngineCounter.PAGES_COMMITTED)).isEqualTo(1);
    }

    @Test
    void shouldRefuseToCommitAPageThatWasNotSealedForItsLength() throws IOException
    {
        parts(s -> { });
        final TestPort port = parts.open(1, 3);
        reserve(port, 0, 3);
        final int unsealed = port.page(1);
        final int wrongLength = port.page(2);
        parts.seal(port, 0);
        port.lengths()[1] = 500;
        parts.seal(port, 2);
        port.lengths()[2]++;
        final int freeBefore = parts.space.free();

        assertThat(commit(port, 0, 3)).isEqualTo(1);

        assertThat(port.status(0)).isEqualTo(PageEntryStatus.COMMITTED);
        assertThat(port.status(1)).isEqualTo(PageEntryStatus.INVALID);
        assertThat(port.status(2)).isEqualTo(PageEntryStatus.INVALID);
        for (final int page : new int[] {unsealed, wrongLength})
        {
            assertThat(parts.state(page)).isEqualTo(PageStateWord.FREE);
        }
        assertThat(visible(port, 1)).isFalse();
        assertThat(visible(port, 2)).isFalse();
        assertThat(parts.boundPage(1, 2)).isNegative();
        assertThat(parts.space.free()).as("the refused pages are free again").isEqualTo(freeBefore + 2);
    }

    @Test
    void shouldRefuseToCommitAnUnsealedPageWhoseLastUseWasSealedForTheSameKey() throws IOException
    {
        parts(s -> { });
        final TestPort port = parts.open(1, 1);
        assertThat(parts.write(port, 0, 1)).isEqualTo(1);
        final int page = parts.boundPage(1, 1);
        assertThat(parts.space.evict(page, parts.pool.metadata().stateWordAcquire(page))).isTrue();

        // The key is written again, into the same page, and committed without a new seal: the
        // trailer still carries this key and length from the page's last use.
        reserve(port, 0, 1);
        assertThat(port.page(0)).isEqualTo(page);
        port.lengths()[0] = CoreParts.lengthOf(1);

        assertThat(commit(port, 0, 1)).isZero();
        assertThat(port.status(0)).isEqualTo(PageEntryStatus.INVALID);
        assertThat(visible(port, 0)).isFalse();
    }

    @Test
    void shouldFreeAbortedReservationsAtOnce() throws IOException
    {
        parts(s -> { });
        final TestPort port = parts.open(1, 2);
        final ClientRecord r = reserve(port, 0, 2);
        final int[] pages = {port.page(0), port.page(1)};
        final int[] generations = {parts.generation(pages[0]), parts.generation(pages[1])};
        final int freeBefore = parts.space.free();

        assertThat(parts.reservations.abort(r, 0, 2, false)).isEqualTo(2);

        assertThat(parts.counter(EngineCounter.PAGES_ABORTED)).isEqualTo(2);
        assertThat(parts.space.free()).isEqualTo(freeBefore + 2);
        for (int i = 0; i < 2; i++)
        {
            assertThat(port.status(i)).isEqualTo(PageEntryStatus.NONE);
            assertThat(parts.state(pages[i])).isEqualTo(PageStateWord.FREE);
            assertThat(parts.generation(pages[i])).isEqualTo(generations[i] + 1);
            assertThat(parts.boundPage(1, i + 1)).isNegative();
        }
    }

    @Test
    void shouldTakeBackALapsedReservationThroughQuarantineAndNeverShowIt() throws IOException
    {
        parts(s -> s.quarantine = Duration.ofSeconds(3));
        final TestPort port = parts.open(1, 1);
        reserve(port, 0, 1);
        final int page = port.page(0);
        final int generation = parts.generation(page);
        final int freeBefore = parts.space.free();
        parts.seal(port, 0);

        parts.advance(TIMEOUT.minusNanos(1));
        parts.reservations.onTime(parts.now());
        assertThat(parts.state(page)).as("still within its timeout").isEqualTo(PageStateWord.WRITING);

        parts.advance(Duration.ofNanos(1));
        parts.reservations.onTime(parts.now());
        assertThat(parts.state(page)).isEqualTo(PageStateWord.FREE);
        assertThat(parts.generation(page)).isEqualTo(generation + 1);
        assertThat(parts.boundPage(1, 1)).isNegative();
        assertThat(parts.counter(EngineCounter.RESERVATIONS_EXPIRED)).isEqualTo(1);
        assertThat(parts.space.free()).as("its writer may still be writing: it rests first").isEqualTo(freeBefore);
        assertThat(parts.counter(EngineCounter.PAGES_QUARANTINED)).isEqualTo(1);

        // Its writer's late commit is refused and the key never shows.
        assertThat(commit(port, 0, 1)).isZero();
        assertThat(port.status(0)).isEqualTo(PageEntryStatus.EXPIRED);
        assertThat(visible(port, 0)).isFalse();
        assertThat(parts.state(page)).isEqualTo(PageStateWord.FREE);

        parts.advance(Duration.ofSeconds(3));
        parts.space.onTime(parts.now());
        assertThat(parts.space.free()).isEqualTo(freeBefore + 1);
    }

    @Test
    void shouldLeaveCommittedAndReusedPagesAloneAtTheirOldDeadlines() throws IOException
    {
        parts(s -> s.pages = 2);
        final TestPort port = parts.open(1, 3);
        final ClientRecord r = reserve(port, 0, 2);
        final int committed = port.page(0);
        final int aborted = port.page(1);
        parts.seal(port, 0);
        commit(port, 0, 1);
        parts.reservations.abort(r, 1, 2, false);
        parts.advance(Duration.ofSeconds(1));
        reserve(port, 2, 1);
        assertThat(port.page(2)).as("the aborted page, reused").isEqualTo(aborted);

        parts.advance(TIMEOUT.minusSeconds(1));
        parts.reservations.onTime(parts.now());

        assertThat(parts.state(committed)).isEqualTo(PageStateWord.SERVING);
        assertThat(parts.state(aborted)).as("its new reservation has a second to go").isEqualTo(PageStateWord.WRITING);
        assertThat(parts.counter(EngineCounter.RESERVATIONS_EXPIRED)).isZero();

        parts.advance(Duration.ofSeconds(1));
        parts.reservations.onTime(parts.now());
        assertThat(parts.state(aborted)).isEqualTo(PageStateWord.FREE);
        assertThat(parts.counter(EngineCounter.RESERVATIONS_EXPIRED)).isEqualTo(1);
    }

    @Test
    void shouldKeepALiveDeadlineWhenStaleOnesFillTheRing() throws IOException
    {
        // 4 pages: room for 9 deadlines. Forty reserve-and-abort rounds fill it with stale ones many times.
        parts(s -> s.pages = 4);
        final TestPort port = parts.open(1, 2);
        reserve(port, 0, 1);
        final int live = port.page(0);
        for (int round = 0; round < 40; round++)
        {
            final ClientRecord r = reserve(port, 1, 1);
            assertThat(port.status(1)).isEqualTo(PageEntryStatus.RESERVED);
            parts.reservations.abort(r, 1, 2, false);
        }

        parts.advance(TIMEOUT);
        parts.reservations.onTime(parts.now());

        assertThat(parts.state(live)).isEqualTo(PageStateWord.FREE);
        assertThat(parts.counter(EngineCounter.RESERVATIONS_EXPIRED)).isEqualTo(1);
    }

    @Test
    void shouldQuarantineTheReservationsOfAClientThatWentSilent() throws IOException
    {
        parts(s -> { });
        final TestPort port = parts.open(1, 1);
        final ClientRecord r = reserve(port, 0, 1);
        final int page = port.page(0);
        final int freeBefore = parts.space.free();

        assertThat(parts.reservations.abort(r, 0, 1, true)).as("not an abort by the client").isZero();

        assertThat(parts.state(page)).isEqualTo(PageStateWord.FREE);
        assertThat(parts.space.free()).isEqualTo(freeBefore);
        assertThat(parts.counter(EngineCounter.RESERVATIONS_EXPIRED)).isEqualTo(1);
        assertThat(parts.counter(EngineCounter.PAGES_QUARANTINED)).isEqualTo(1);
    }

    @Test
    void shouldStartACopyOfEachCommittedPageUnderWriteThrough() throws IOException
    {
        parts(s -> s.writePolicy = WritePolicy.WRITE_THROUGH);
        final TestPort port = parts.open(1, 2);

        assertThat(parts.write(port, 0, 2)).isEqualTo(2);
        parts.flush();

        assertThat(parts.counter(EngineCounter.BACKUPS_STARTED)).isEqualTo(2);
        assertThat(parts.tier(0).writes).hasSize(1);
        assertThat(parts.tier(0).writes.getFirst().size()).isEqualTo(2);
    }
}
