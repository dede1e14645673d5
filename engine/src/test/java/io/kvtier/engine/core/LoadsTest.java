package io.kvtier.engine.core;

import io.kvtier.client.pool.PageStateWord;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.spi.PageKey;
import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/** Loads from L3 into the pool and the requests waiting for them, driven on the part itself. */
class LoadsTest
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

    private int load(final long high, final long low)
    {
        return parts.loads.loadFor(parts.index.find(high, low), high, low, false);
    }

    /** A request of the port waiting, as a prefetching lookup does, for key 0 to land in {@code page}. */
    private ClientRecord waiter(final TestPort port, final int page)
    {
        final ClientRecord r = parts.begin(port, MessageType.LOOKUP, 0, 1);
        assertThat(parts.loads.addWaiter(page, r, 0, Loads.WAIT_NOTIFY)).isTrue();
        r.status[0] = (byte)PageEntryStatus.WAITING;
        r.pending = 1;
        r.phase = ClientRecord.PHASE_PREFETCH_WAIT;
        return r;
    }

    private TierBatch submittedRead(final int tier)
    {
        parts.flush();
        assertThat(parts.tier(tier).reads).isNotEmpty();
        return parts.tier(tier).reads.getLast();
    }

    @Test
    void shouldLoadNothingForAKeyNoTierHoldsOrOneAClientIsWriting() throws IOException
    {
        parts(s -> { });
        assertThat(load(1, 1)).isEqualTo(PoolSpace.NONE);
        final TestPort writer = parts.open(1, 1);
        parts.reservations.reserve(parts.begin(writer, MessageType.RESERVE, 0, 1));
        parts.index.addTier(1, 1, 0);
        assertThat(load(1, 1)).as("a client is writing it").isEqualTo(PoolSpace.NONE);

        assertThat(parts.loads.starvedForSpace()).isFalse();
        assertThat(parts.counter(EngineCounter.L3_READS)).isZero();
    }

    @Test
    void shouldLoadFromTheFirstTierThatHoldsTheKeyOnceWhoeverAsks() throws IOException
    {
        parts(s -> s.tiers = 2);
        parts.inL3(1, 1, 1);

        final int page = load(1, 1);

        assertThat(page).isNotEqualTo(PoolSpace.NONE);
        assertThat(parts.state(page)).isEqualTo(PageStateWord.WRITING);
        assertThat(parts.pool.metadata().ownerPlain(page)).isEqualTo(EngineConductor.ENGINE_OWNER);
        assertThat(parts.boundPage(1, 1)).as("bound, so that a second request waits for this load").isEqualTo(page);
        assertThat(parts.loads.isLoading(page)).isTrue();
        assertThat(load(1, 1)).isEqualTo(page);
        assertThat(parts.counter(EngineCounter.L3_READS)).isEqualTo(1);
        parts.flush();
        assertThat(parts.tier(0).reads).isEmpty();
        assertThat(parts.tier(1).reads).hasSize(1);
    }

    @Test
    void shouldServeAVerifiedFrameAndTellItsWaiters() throws IOException
    {
        parts(s -> { });
        parts.inL3(1, 1, 0);
        final TestPort port = parts.open(1, 1);
        final int page = load(1, 1);
        final ClientRecord r = waiter(port, page);

        parts.tier(0).answer(submittedRead(0));
        parts.deliver();

        assertThat(parts.state(page)).isEqualTo(PageStateWord.SERVING);
        assertThat(parts.pins(page)).isZero();
        assertThat(parts.loads.isLoading(page)).isFalse();
        assertThat(port.status(0)).isEqualTo(PageEntryStatus.LOADED);
        assertThat(parts.waitsOver).containsExactly(r);
        assertThat(port.completions).as("the lookup answered when its wait was over").isEqualTo(1);
        assertThat(parts.counter(EngineCounter.L3_PAGES_LOADED)).isEqualTo(1);
        assertThat(parts.counter(EngineCounter.L3_BYTES_READ)).isEqualTo(parts.pool.frameLength());
        assertThat(parts.loads.takeFirstUse(page)).as("its first use counts as an L3 hit").isTrue();
        assertThat(parts.loads.takeFirstUse(page)).isFalse();
    }

    @Test
    void shouldCountAPrefetchedPage() throws IOException
    {
        parts(s -> { });
        parts.inL3(1, 1, 0);
        parts.loads.loadFor(parts.index.find(1, 1), 1, 1, true);
        parts.tier(0).answer(submittedRead(0));
        parts.deliver();
        assertThat(parts.counter(EngineCounter.PREFETCH_PAGES)).isEqualTo(1);
    }

    @Test
    void shouldTreatAFrameThatFailsVerificationAsAMissAndRemoveIt() throws IOException
    {
        parts(s -> { });
        parts.inL3(1, 1, 0);
        parts.tier(0).objects.get(new PageKey(1, 1))[10] ^= 0x5A;
        final TestPort port = parts.open(1, 1);
        final int page = load(1, 1);
        final int generation = parts.generation(page);
        waiter(port, page);
        final int freeBefore = parts.space.free();

        parts.tier(0).answer(submittedRead(0));
        parts.deliver();

        assertThat(parts.counter(EngineCounter.L3_CORRUPT)).isEqualTo(1);
        assertThat(port.status(0)).isEqualTo(PageEntryStatus.MISS);
        assertThat(parts.state(page)).isEqualTo(PageStateWord.FREE);
        assertThat(parts.generation(page)).isEqualTo(generation + 1);
        assertThat(parts.space.free()).isEqualTo(freeBefore + 1);
        assertThat(parts.index.find(1, 1)).as("no tier holds it any more").isNegative();
        parts.flush();
        assertThat(parts.tier(0).removes).as("the corrupt object is removed from its tier").hasSize(1);
    }

    @Test
    void shouldTryTheNextTierWhenOneLacksThePage() throws IOException
    {
        parts(s -> s.tiers = 2);
        parts.inL3(1, 1, 0, 1);
        parts.tier(0).objects.clear();
        final TestPort port = parts.open(1, 1);
        final int page = load(1, 1);
        waiter(port, page);

        parts.tier(0).answer(submittedRead(0));
        parts.deliver();

        assertThat(parts.counter(EngineCounter.L3_READ_MISSES)).isEqualTo(1);
        assertThat(parts.tierBits(1, 1)).isEqualTo(0b10);
        assertThat(port.status(0)).as("still waiting, for the second tier").isEqualTo(PageEntryStatus.WAITING);
        assertThat(parts.loads.isLoading(page)).isTrue();
        parts.tier(1).answer(submittedRead(1));
        parts.deliver();

        assertThat(parts.counter(EngineCounter.L3_READS)).isEqualTo(2);
        assertThat(port.status(0)).isEqualTo(PageEntryStatus.LOADED);
        assertThat(parts.state(page)).isEqualTo(PageStateWord.SERVING);
    }

    @Test
    void shouldRestThePageWhenATierFailedWithoutSayingItIsDone() throws IOException
    {
        parts(s -> s.tiers = 2);
        parts.inL3(1, 1, 0, 1);
        final TestPort port = parts.open(1, 1);
        final int page = load(1, 1);
        waiter(port, page);
        final int freeBefore = parts.space.free();

        RecordingTier.complete(submittedRead(0), TierStatus.IO_ERROR);
        parts.deliver();

        assertThat(parts.counter(EngineCounter.L3_ERRORS)).isEqualTo(1);
        assertThat(port.status(0)).isEqualTo(PageEntryStatus.MISS);
        assertThat(parts.state(page)).isEqualTo(PageStateWord.FREE);
        assertThat(parts.space.free()).as("quarantined: the tier may still write into it").isEqualTo(freeBefore);
        assertThat(parts.counter(EngineCounter.PAGES_QUARANTINED)).isEqualTo(1);
        parts.flush();
        assertThat(parts.tier(1).reads).as("not tried elsewhere while the page may still change").isEmpty();
    }

    @Test
    void shouldProbeATrustedTierAgainOnceAReadOfItEndsWithItsOutcomeUnknown() throws IOException
    {
        parts(s -> s.tiers = 2);
        parts.lookups.trustIndex(new boolean[] {true, true}, java.util.List.of("failing", "other"));
        parts.inL3(1, 1, 0);
        final TestPort port = parts.open(1, 1);
        final int page = load(1, 1);
        waiter(port, page);
        assertThat(parts.lookups.probes(0)).as("trusted: empty and unshared at start").isFalse();

        RecordingTier.complete(submittedRead(0), TierStatus.IO_ERROR);
        parts.deliver();

        assertThat(parts.tierBits(1, 1)).as("the index let go of the copy").isZero();
        assertThat(parts.lookups.probes(0)).as("the tier may still hold it: probed again").isTrue();
        assertThat(parts.lookups.probes(1)).as("the other tier is still known whole").isFalse();
    }

    @Test
    void shouldAnswerTheWaitersOfAnAbandonedLoadAndNeverServeItsLateFrame() throws IOException
    {
        parts(s -> { });
        parts.inL3(1, 1, 0);
        final TestPort port = parts.open(1, 1);
        final int page = load(1, 1);
        final ClientRecord r = waiter(port, page);
        final TierBatch read = submittedRead(0);

        parts.loads.abandon(page);

        assertThat(port.status(0)).isEqualTo(PageEntryStatus.MISS);
        assertThat(parts.waitsOver).containsExactly(r);
        assertThat(parts.state(page)).as("held until the tier answers").isEqualTo(PageStateWord.WRITING);
        assertThat(parts.loads.loadingPage(parts.index.find(1, 1))).as("no one joins an abandoned load").isEqualTo(PoolSpace.NONE);
        final int again = load(1, 1);
        assertThat(again).as("the key is free for a new load, into another page").isNotEqualTo(PoolSpace.NONE).isNotEqualTo(page);

        parts.tier(0).answer(read);
        parts.deliver();
        assertThat(parts.state(page)).as("the late frame is never served, whatever it holds").isEqualTo(PageStateWord.FREE);
        assertThat(parts.counter(EngineCounter.PAGES_QUARANTINED)).as("the late tier may be later still").isEqualTo(1);
        assertThat(parts.counter(EngineCounter.L3_PAGES_LOADED)).isZero();
        assertThat(parts.boundPage(1, 1)).isEqualTo(again);
        assertThat(parts.tierBits(1, 1)).as("the object itself is fine: the tier keeps its bit").isEqualTo(1);

        parts.flush();
        parts.tier(0).answer(submittedRead(0));
        parts.deliver();
        assertThat(parts.state(again)).isEqualTo(PageStateWord.SERVING);
    }

    @Test
    void shouldNotWakeAWaiterWhoseRequestEnded() throws IOException
    {
        parts(s -> { });
        parts.inL3(1, 1, 0);
        final TestPort port = parts.open(1, 1);
        final int page = load(1, 1);
        final ClientRecord r = waiter(port, page);
        r.finish(0);
        r.begin(MessageType.LOOKUP, 0, 1, parts.now(), System.nanoTime());
        r.status[0] = (byte)PageEntryStatus.WAITING;
        r.pending = 1;

        parts.tier(0).answer(submittedRead(0));
        parts.deliver();

        assertThat(port.status(0)).isEqualTo(PageEntryStatus.WAITING);
        assertThat(r.pending).isEqualTo(1);
        assertThat(parts.waitsOver).isEmpty();
    }

    @Test
    void shouldRefuseAWaiterWhenItsTableIsFullAndTakeMoreOnceLoadsEnd() throws IOException
    {
        parts(s -> { });
        parts.inL3(1, 1, 0);
        final TestPort port = parts.open(1, 1);
        final int page = load(1, 1);
        final ClientRecord r = parts.begin(port, MessageType.LOOKUP, 0, 1);
        int added = 0;
        while (parts.loads.addWaiter(page, r, 0, Loads.WAIT_NOTIFY))
        {
            added++;
        }
        assertThat(added).isEqualTo(4096);

        parts.tier(0).answer(submittedRead(0));
        parts.deliver();
        assertThat(parts.loads.addWaiter(page, r, 0, Loads.WAIT_NOTIFY)).isTrue();
    }

    @Test
    void shouldSayWhenItFoundNoPageForALoad() throws IOException
    {
        parts(s -> s.pages = 1);
        parts.inL3(1, 1, 0);
        final int page = parts.serve(1, 2);
        assertThat(parts.pool.tryPin(page)).isTrue();

        assertThat(load(1, 1)).isEqualTo(PoolSpace.NONE);
        assertThat(parts.loads.starvedForSpace()).isTrue();
        assertThat(load(1, 3)).isEqualTo(PoolSpace.NONE);
        assertThat(parts.loads.starvedForSpace()).as("a key L3 lacks is not a want of space").isFalse();
    }
}
