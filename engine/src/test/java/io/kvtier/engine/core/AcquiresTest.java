package io.kvtier.engine.core;

import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.config.WritePolicy;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.spi.PageKey;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Acquires and releases on the part itself, over the real loads, lookups and backups behind it and a
 * tier that answers when the test says.
 */
class AcquiresTest
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

    private ClientRecord acquire(final TestPort port, final int from, final int count)
    {
        final ClientRecord r = parts.begin(port, MessageType.ACQUIRE, from, count);
        parts.acquires.acquire(r);
        return r;
    }

    @Test
    void shouldPinTheWholePrefixFromThePool() throws IOException
    {
        parts(s -> { });
        final TestPort port = parts.open(1, 3);
        final int[] pages = {parts.serve(1, 1), parts.serve(1, 2), parts.serve(1, 3)};

        final ClientRecord r = acquire(port, 0, 3);

        assertThat(port.completions).isEqualTo(1);
        assertThat(port.status).isEqualTo(ErrorCode.OK);
        assertThat(port.resultCount).isEqualTo(3);
        assertThat(port.fromPool).isEqualTo(3);
        assertThat(port.fromL3).isZero();
        for (int i = 0; i < 3; i++)
        {
            assertThat(port.status(i)).isEqualTo(PageEntryStatus.PINNED);
            assertThat(port.page(i)).isEqualTo(pages[i]);
            assertThat(port.generations()[i]).isEqualTo(parts.generation(pages[i]));
            assertThat(parts.pins(pages[i])).isEqualTo(1);
            assertThat(parts.pool.metadata().hitCountPlain(pages[i])).isEqualTo(1);
        }
        assertThat(r.holdLimit).isEqualTo(3);
        assertThat(parts.counter(EngineCounter.L2_HIT_PAGES)).isEqualTo(3);
        assertThat(parts.counter(EngineCounter.ACQUIRE_PAGES_REQUESTED)).isEqualTo(3);
    }

    @Test
    void shouldStopAtTheFirstKeyThatIsNowhere() throws IOException
    {
        parts(s -> s.tiers = 0);
        final TestPort port = parts.open(1, 3);
        parts.serve(1, 1);
        final int third = parts.serve(1, 3);

        acquire(port, 0, 3);

        assertThat(port.resultCount).isEqualTo(1);
        assertThat(port.status(0)).isEqualTo(PageEntryStatus.PINNED);
        // Every slot after the prefix is a MISS, naming no page: the prefix ended before it.
        assertThat(port.status(1)).isEqualTo(PageEntryStatus.MISS);
        assertThat(port.status(2)).isEqualTo(PageEntryStatus.MISS);
        assertThat(port.pageIds()[2]).isEqualTo(-1);
        assertThat(port.generations()[2]).isZero();
        assertThat(parts.pins(third)).as("past the gap nothing is pinned").isZero();
        assertThat(parts.counter(EngineCounter.L2_HIT_PAGES)).isEqualTo(1);
    }

    @Test
    void shouldLoadAnL3KeyAndAnswerOnceItIsVerifiedAndPinned() throws IOException
    {
        parts(s -> { });
        final TestPort port = parts.open(1, 2);
        parts.serve(1, 1);
        parts.inL3(1, 2, 0);

        final ClientRecord r = acquire(port, 0, 2);

        assertThat(port.completions).as("waits for the load").isZero();
        assertThat(port.status(0)).isEqualTo(PageEntryStatus.PINNED);
        assertThat(port.status(1)).isEqualTo(PageEntryStatus.WAITING);
        assertThat(r.pending).isEqualTo(1);
        parts.flush();
        assertThat(parts.tier(0).reads).hasSize(1);
        parts.tier(0).answer(parts.tier(0).reads.getFirst());
        parts.deliver();

        assertThat(port.completions).isEqualTo(1);
        assertThat(port.resultCount).isEqualTo(2);
        assertThat(port.fromPool).isEqualTo(1);
        assertThat(port.fromL3).isEqualTo(1);
        assertThat(port.status(1)).isEqualTo(PageEntryStatus.PINNED_FROM_L3);
        assertThat(parts.pins(port.page(1))).isEqualTo(1);
        assertThat(parts.counter(EngineCounter.L2_HIT_PAGES)).isEqualTo(1);
        assertThat(parts.counter(EngineCounter.L3_HIT_PAGES)).isEqualTo(1);
    }

    @Test
    void shouldGiveBackPinsPastALoadThatFailed() throws IOException
    {
        parts(s -> { });
        final TestPort port = parts.open(1, 3);
        final int first = parts.serve(1, 1);
        parts.inL3(1, 2, 0);
        final int third = parts.serve(1, 3);

        acquire(port, 0, 3);
        assertThat(parts.pins(third)).as("pinned while the load runs").isEqualTo(1);
        parts.tier(0).objects.remove(new PageKey(1, 2));
        parts.flush();
        parts.tier(0).answer(parts.tier(0).reads.getFirst());
        parts.deliver();

        assertThat(port.resultCount).isEqualTo(1);
        assertThat(port.status(0)).isEqualTo(PageEntryStatus.PINNED);
        assertThat(port.status(1)).isEqualTo(PageEntryStatus.MISS);
        assertThat(port.status(2)).isEqualTo(PageEntryStatus.MISS);
        assertThat(parts.pins(first)).isEqualTo(1);
        assertThat(parts.pins(third)).isZero();
        assertThat(parts.counter(EngineCounter.L2_HIT_PAGES)).as("only the prefix counts").isEqualTo(1);
    }

    @Test
    void shouldShareOneLoadBetweenTwoRequestsForTheSameKey() throws IOException
    {
        parts(s -> { });
        final TestPort a = parts.open(1, 1);
        final TestPort b = parts.open(1, 1);
        parts.inL3(1, 1, 0);

        acquire(a, 0, 1);
        acquire(b, 0, 1);
        parts.flush();

        assertThat(parts.counter(EngineCounter.L3_READS)).isEqualTo(1);
        assertThat(parts.tier(0).reads).hasSize(1);
        assertThat(parts.tier(0).reads.getFirst().size()).isEqualTo(1);
        parts.tier(0).answer(parts.tier(0).reads.getFirst());
        parts.deliver();

        assertThat(a.resultCount).isEqualTo(1);
        assertThat(b.resultCount).isEqualTo(1);
        assertThat(a.page(0)).isEqualTo(b.page(0));
        assertThat(parts.pins(a.page(0))).isEqualTo(2);
    }

    @Test
    void shouldAskTheTiersAboutAnUnknownKeyAndLoadItWhenOneHasIt() throws IOException
    {
        parts(s -> { });
        final TestPort port = parts.open(1, 1);
        parts.inL3(1, 1, 0);
        parts.index.removeTier(1, 1, 0); // a restarted engine: the index does not know what the tier holds

        final ClientRecord r = acquire(port, 0, 1);

        assertThat(r.phase).isEqualTo(ClientRecord.PHASE_ACQUIRE_PROBING);
        parts.flush();
        parts.tier(0).answer(parts.tier(0).exists.getFirst());
        parts.deliver();
        assertThat(port.completions).as("found: now it loads").isZero();
        parts.flush();
        parts.tier(0).answer(parts.tier(0).reads.getFirst());
        parts.deliver();

        assertThat(port.resultCount).isEqualTo(1);
        assertThat(port.status(0)).isEqualTo(PageEntryStatus.PINNED_FROM_L3);
    }

    @Test
    void shouldReleasePinsAndKeepReservations() throws IOException
    {
        parts(s -> { });
        final TestPort port = parts.open(1, 2);
        final int page = parts.serve(1, 1);
        acquire(port, 0, 1);
        parts.reservations.reserve(parts.begin(port, MessageType.RESERVE, 1, 1));
        final ClientRecord r = parts.begin(port, MessageType.RELEASE, 0, 2);

        assertThat(parts.acquires.release(r, 0, 2)).isEqualTo(1);

        assertThat(parts.pins(page)).isZero();
        assertThat(port.status(0)).isEqualTo(PageEntryStatus.NONE);
        assertThat(port.status(1)).isEqualTo(PageEntryStatus.RESERVED);
        assertThat(parts.acquires.release(r, 0, 2)).as("nothing left to drop").isZero();
    }

    @Test
    void shouldCopyAPageToL3OnItsNthHitUnderWriteThroughSelective() throws IOException
    {
        parts(s ->
        {
            s.writePolicy = WritePolicy.WRITE_THROUGH_SELECTIVE;
            s.writeHitThreshold = 2;
        });
        final TestPort port = parts.open(1, 1);
        parts.serve(1, 1);

        acquire(port, 0, 1);
        parts.acquires.release(parts.begin(port, MessageType.RELEASE, 0, 1), 0, 1);
        assertThat(parts.counter(EngineCounter.BACKUPS_STARTED)).isZero();
        acquire(port, 0, 1);

        assertThat(parts.counter(EngineCounter.BACKUPS_STARTED)).isEqualTo(1);
    }
}
