package io.kvtier.engine.core;

import io.kvtier.client.pool.PageStateWord;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/** Tier I/O scheduling on its own: batches, the bound on those in flight per tier, and late tiers. */
class TierIoTest
{
    private static final Duration IO_TIMEOUT = Duration.ofSeconds(5);

    @TempDir
    Path dir;

    private CoreParts parts;

    private CoreParts parts(final Consumer<CoreParts.Settings> configure) throws IOException
    {
        parts = new CoreParts(dir, s ->
        {
            s.ioTimeout = IO_TIMEOUT;
            s.maxBatch = 2;
            s.maxInflight = 2;
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

    private boolean remove(final int tier, final long low)
    {
        return parts.io.queueKeyIo(tier, TierIoBatch.REMOVE, 9, low, 0, EngineConductor.ENGINE_OWNER, 0, 0);
    }

    private int load(final long high, final long low)
    {
        return parts.loads.loadFor(parts.index.find(high, low), high, low, false);
    }

    @Test
    void shouldSubmitAFullBatchAtOnceAndTheRestAtFlush() throws IOException
    {
        parts(s -> { });
        assertThat(remove(0, 1)).isTrue();
        assertThat(parts.tier(0).removes).isEmpty();
        assertThat(remove(0, 2)).isTrue();
        assertThat(parts.tier(0).removes).as("full: it goes now").hasSize(1);
        assertThat(remove(0, 3)).isTrue();
        assertThat(parts.tier(0).removes).hasSize(1);

        parts.flush();
        assertThat(parts.tier(0).removes).hasSize(2);
        assertThat(parts.tier(0).removes.getLast().size()).isEqualTo(1);
        parts.flush();
        assertThat(parts.tier(0).batches()).as("nothing open, nothing sent").isEqualTo(2);
    }

    @Test
    void shouldKeepNoMoreBatchesInFlightPerTierThanItsBound() throws IOException
    {
        parts(s -> s.tiers = 2);
        for (int k = 1; k <= 4; k++)
        {
            assertThat(remove(0, k)).isTrue();
        }
        assertThat(parts.tier(0).removes).hasSize(2);

        assertThat(remove(0, 5)).as("both batches are in flight: skipped").isFalse();
        assertThat(remove(1, 5)).as("another tier has its own").isTrue();

        RecordingTier.complete(parts.tier(0).removes.getFirst(), TierStatus.NOT_FOUND);
        parts.deliver();
        assertThat(remove(0, 5)).isTrue();
        parts.flush();
        assertThat(parts.tier(0).removes).hasSize(3);
    }

    @Test
    void shouldQueuePagesWhileEveryBatchIsInFlightAndSendThemWhenOneEnds() throws IOException
    {
        parts(s -> { });
        for (int k = 1; k <= 5; k++)
        {
            parts.inL3(1, k, 0);
        }
        final int[] pages = new int[5];
        for (int k = 0; k < 5; k++)
        {
            pages[k] = load(1, k + 1);
        }
        parts.flush();
        assertThat(parts.tier(0).reads).as("two batches of two; the fifth page waits").hasSize(2);

        final TierBatch first = parts.tier(0).reads.getFirst();
        parts.tier(0).answer(first);
        parts.deliver();
        parts.flush();
        assertThat(parts.tier(0).reads).hasSize(3);
        assertThat(parts.tier(0).reads.getLast().keyLow(0)).isEqualTo(5);
        parts.tier(0).answer(parts.tier(0).reads.get(1));
        parts.tier(0).answer(parts.tier(0).reads.getLast());
        parts.deliver();

        for (final int page : pages)
        {
            assertThat(parts.state(page)).isEqualTo(PageStateWord.SERVING);
        }
    }

    @Test
    void shouldGiveTheWaitersOfALateReadAMissTakeTheTierOutOfServiceAndNeverServeItsAnswer() throws IOException
    {
        parts(s -> { });
        parts.inL3(1, 1, 0);
        final TestPort port = parts.open(1, 1);
        parts.acquires.acquire(parts.begin(port, MessageType.ACQUIRE, 0, 1));
        parts.flush();
        final TierBatch read = parts.tier(0).reads.getFirst();
        final int page = parts.boundPage(1, 1);

        parts.advance(IO_TIMEOUT.minusNanos(1));
        parts.io.onTime(parts.now());
        assertThat(port.completions).isZero();
        assertThat(parts.counter(EngineCounter.L3_TIMEOUTS)).isZero();
        assertThat(parts.io.inService(0)).isTrue();

        parts.advance(Duration.ofNanos(1));
        parts.io.onTime(parts.now());
        assertThat(parts.counter(EngineCounter.L3_TIMEOUTS)).isEqualTo(1);
        assertThat(port.completions).isEqualTo(1);
        assertThat(port.resultCount).isZero();
        assertThat(parts.state(page)).as("held until the tier answers").isEqualTo(PageStateWord.WRITING);
        assertThat(parts.io.inService(0)).as("a tier late with a batch is stuck").isFalse();
        assertThat(parts.counter(EngineCounter.L3_STUCK)).isEqualTo(1);
        assertThat(parts.counter(EngineCounter.L3_TIERS_OUT_OF_SERVICE)).isEqualTo(1);
        assertThat(parts.counters.tierStateOpaque(0)).isEqualTo(io.kvtier.client.pool.CountersDescriptor.TIER_STUCK);

        // Stuck, it is handed nothing: its keys are misses at once.
        parts.acquires.acquire(parts.begin(port, MessageType.ACQUIRE, 0, 1));
        parts.flush();
        assertThat(port.completions).isEqualTo(2);
        assertThat(port.resultCount).isZero();
        assertThat(parts.counter(EngineCounter.L3_REFUSED)).isEqualTo(1);
        assertThat(parts.tier(0).reads).hasSize(1);
        parts.advance(IO_TIMEOUT);
        parts.io.onTime(parts.now());
        assertThat(parts.counter(EngineCounter.L3_TIMEOUTS)).as("counted once").isEqualTo(1);
        assertThat(parts.io.inService(0)).as("still holds the batch").isFalse();

        parts.tier(0).answer(read);
        parts.deliver();
        assertThat(parts.state(page)).as("the late answer is never served").isEqualTo(PageStateWord.FREE);
        parts.io.onTime(parts.now());
        assertThat(parts.io.inService(0)).as("it answered everything it was handed: back in service").isTrue();
        assertThat(parts.counter(EngineCounter.L3_TIERS_OUT_OF_SERVICE)).isZero();
        assertThat(parts.counters.tierStateOpaque(0)).isEqualTo(io.kvtier.client.pool.CountersDescriptor.TIER_IN_SERVICE);
        parts.acquires.acquire(parts.begin(port, MessageType.ACQUIRE, 0, 1));
        parts.flush();
        parts.tier(0).answer(parts.tier(0).reads.getLast());
        parts.deliver();
        assertThat(port.status(0)).isEqualTo(PageEntryStatus.PINNED_FROM_L3);
    }

    @Test
    void shouldTakeATierOutOfServiceWhoseCallDoesNotReturnAndRefuseWhatWaitsBehindIt() throws IOException
    {
        parts(s -> s.maxBatch = 1);
        parts.inL3(1, 1, 0);
        parts.inL3(1, 2, 0);
        parts.callers[0].callStarted = parts.now(); // a call that has not returned: batches now wait behind it
        final TestPort port = parts.open(1, 2);
        final DirectTierCaller caller = parts.callers[0];

        parts.advance(IO_TIMEOUT.minusNanos(1));
        parts.io.onTime(parts.now());
        assertThat(parts.io.inService(0)).isTrue();
        parts.advance(Duration.ofNanos(1));
        parts.io.onTime(parts.now());
        assertThat(parts.io.inService(0)).as("a call older than l3.io-timeout").isFalse();
        assertThat(parts.counter(EngineCounter.L3_STUCK)).isEqualTo(1);

        parts.acquires.acquire(parts.begin(port, MessageType.ACQUIRE, 0, 2));
        parts.flush();
        parts.deliver();
        assertThat(port.completions).as("answered at once").isEqualTo(1);
        assertThat(port.resultCount).isZero();
        assertThat(parts.tier(0).reads).as("nothing handed to a stuck tier").isEmpty();

        caller.callStarted = 0; // the call returned
        parts.io.onTime(parts.now());
        assertThat(parts.io.inService(0)).isTrue();
    }

    @Test
    void shouldRefuseABatchStillQueuedBehindAStuckCallAndTimeOutTheOneInIt() throws IOException
    {
        parts(s -> s.maxBatch = 1);
        parts.inL3(1, 1, 0);
        parts.inL3(1, 2, 0);
        final TestPort port = parts.open(1, 2);
        final DirectTierCaller caller = parts.callers[0];
        parts.acquires.acquire(parts.begin(port, MessageType.ACQUIRE, 0, 1));
        parts.flush();
        final TierIoBatch called = (TierIoBatch)parts.tier(0).reads.getFirst();
        // That call does not return; the next batch waits behind it.
        caller.callStarted = parts.now();
        caller.stalled = true;
        final TestPort other = parts.open(1, 2);
        parts.acquires.acquire(parts.begin(other, MessageType.ACQUIRE, 1, 1));
        parts.flush();
        assertThat(caller.queued).hasSize(1);
        final int queuedPage = caller.queued.getFirst().page[0];

        parts.advance(IO_TIMEOUT);
        parts.io.onTime(parts.now());
        parts.deliver();

        assertThat(port.completions).isEqualTo(1);
        assertThat(port.resultCount).isZero();
        assertThat(other.completions).isEqualTo(1);
        assertThat(other.resultCount).isZero();
        assertThat(parts.counter(EngineCounter.L3_REFUSED)).as("the queued batch's key").isEqualTo(1);
        assertThat(parts.tier(0).reads).as("the queued batch never reached the tier").hasSize(1);
        assertThat(parts.state(queuedPage)).as("never handed to the tier: free at once").isEqualTo(PageStateWord.FREE);
        assertThat(parts.state(called.page[0])).as("handed over: held until the tier answers").isEqualTo(PageStateWord.WRITING);

        caller.callStarted = 0;
        parts.io.onTime(parts.now());
        assertThat(parts.io.inService(0)).as("the batch it was handed is not back").isFalse();
        parts.tier(0).answer(called);
        parts.deliver();
        parts.io.onTime(parts.now());
        assertThat(parts.io.inService(0)).isTrue();
    }

    @Test
    void shouldAnswerEveryWaiterOfALateReadEvenForKeysTheTierAlreadyCompleted() throws IOException
    {
        parts(s -> { });
        parts.inL3(1, 1, 0);
        parts.inL3(1, 2, 0);
        final TestPort port = parts.open(1, 2);
        parts.acquires.acquire(parts.begin(port, MessageType.ACQUIRE, 0, 2));
        parts.flush();
        final TierBatch read = parts.tier(0).reads.getFirst();
        assertThat(read.size()).isEqualTo(2);
        final int first = parts.boundPage(1, 1);
        final int second = parts.boundPage(1, 2);
        parts.tier(0).answer(read, 0);

        parts.advance(IO_TIMEOUT);
        parts.io.onTime(parts.now());

        assertThat(port.completions).as("a tier that never finishes the batch must not hold the request").isEqualTo(1);
        assertThat(port.resultCount).isZero();
        parts.tier(0).answer(read, 1);
        parts.deliver();
        assertThat(port.completions).isEqualTo(1);
        assertThat(parts.state(first)).as("late: never served").isEqualTo(PageStateWord.FREE);
        assertThat(parts.state(second)).as("late: never served").isEqualTo(PageStateWord.FREE);
    }

    @Test
    void shouldAnswerEveryProbeOfALateBatchEvenOnesTheTierAlreadyAnswered() throws IOException
    {
        parts(s -> { });
        final TestPort port = parts.open(1, 2);
        parts.lookups.lookup(parts.begin(port, MessageType.LOOKUP, 0, 2));
        parts.flush();
        final TierBatch probe = parts.tier(0).exists.getFirst();
        assertThat(probe.size()).isEqualTo(2);
        probe.complete(0, TierStatus.NOT_FOUND);

        parts.advance(IO_TIMEOUT);
        parts.io.onTime(parts.now());

        assertThat(port.completions).as("a tier that never finishes the batch must not hold the lookup").isEqualTo(1);
        probe.complete(1, TierStatus.NOT_FOUND);
        parts.deliver();
        assertThat(port.completions).isEqualTo(1);
    }

    @Test
    void shouldAnswerTheProbesOfABatchThatTimedOutBeforeItsCompletionWasHandled() throws IOException
    {
        parts(s -> { });
        final TestPort port = parts.open(1, 2);
        parts.lookups.lookup(parts.begin(port, MessageType.LOOKUP, 0, 2));
        parts.flush();
        // The tier answered every key, late; the tick reaches the engine before the batch's completion does.
        RecordingTier.complete(parts.tier(0).exists.getFirst(), TierStatus.NOT_FOUND);
        parts.advance(IO_TIMEOUT);
        parts.io.onTime(parts.now());
        parts.deliver();

        assertThat(port.completions).isEqualTo(1);
        assertThat(port.resultCount).isZero();
    }

    @Test
    void shouldReadAnUntrustedTierIntoStagingAndServeOnlyTheVerifiedCopy() throws IOException
    {
        parts(s ->
        {
            s.untrusted = new boolean[] {true};
            s.stagingFrames = 2;
            s.maxBatch = 4;
        });
        final int[] pages = new int[3];
        for (int k = 0; k < 3; k++)
        {
            parts.inL3(1, k + 1, 0);
        }
        for (int k = 0; k < 3; k++)
        {
            pages[k] = load(1, k + 1);
        }
        parts.flush();
        assertThat(parts.tier(0).reads).hasSize(1);
        final TierBatch read = parts.tier(0).reads.getFirst();
        assertThat(read.size()).as("two staging frames: the third read waits for one").isEqualTo(2);
        final MemorySegment staged = read.segment(0);
        assertThat(staged.address()).as("never the pool frame").isNotEqualTo(parts.pool.frames().frame(pages[0]).address());
        assertThat(staged.byteSize()).isEqualTo(parts.pool.frameLength());
        assertThat(staged.address() % 4096).isZero();

        parts.tier(0).answer(read);
        // The tier goes on writing into what it was handed, after completing it.
        staged.fill((byte)0x6B);
        read.segment(1).fill((byte)0x6B);
        parts.deliver();

        for (int k = 0; k < 2; k++)
        {
            assertThat(parts.state(pages[k])).isEqualTo(PageStateWord.SERVING);
            assertThat(parts.pool.frames().payloadIntact(pages[k])).as("page %d holds the verified copy", k).isTrue();
        }
        assertThat(parts.counter(EngineCounter.L3_STAGED_READS)).isEqualTo(2);
        parts.flush();
        assertThat(parts.tier(0).reads).as("a frame came back: the waiting read goes").hasSize(2);
        parts.tier(0).answer(parts.tier(0).reads.getLast());
        parts.deliver();
        assertThat(parts.state(pages[2])).isEqualTo(PageStateWord.SERVING);
    }

    @Test
    void shouldRefuseAStagedReadWhoseCopyIsNotTheKeyItAskedFor() throws IOException
    {
        parts(s -> s.untrusted = new boolean[] {true});
        parts.inL3(1, 1, 0);
        parts.inL3(1, 2, 0);
        // The tier holds key 2's frame under key 1: a misdirected read.
        parts.tier(0).objects.put(new io.kvtier.spi.PageKey(1, 1), parts.tier(0).objects.get(new io.kvtier.spi.PageKey(1, 2)).clone());
        final int page = load(1, 1);
        parts.flush();
        parts.tier(0).answer(parts.tier(0).reads.getFirst());
        parts.deliver();
        assertThat(parts.state(page)).isEqualTo(PageStateWord.FREE);
        assertThat(parts.counter(EngineCounter.L3_CORRUPT)).isEqualTo(1);
    }

    @Test
    void shouldTurnAPluginThatThrowsIntoIoErrors() throws IOException
    {
        parts(s -> { });
        parts.inL3(1, 1, 0);
        parts.tier(0).throwOnSubmit = true;
        final int page = load(1, 1);
        final int freeBefore = parts.space.free();

        parts.flush();

        assertThat(parts.done).as("every key completed: the batch is done").hasSize(1);
        parts.deliver();
        assertThat(parts.counter(EngineCounter.PLUGIN_ERRORS)).as("counted once the batch is back").isEqualTo(1);
        assertThat(parts.counter(EngineCounter.L3_ERRORS)).isEqualTo(1);
        assertThat(parts.state(page)).isEqualTo(PageStateWord.FREE);
        assertThat(parts.space.free()).as("quarantined").isEqualTo(freeBefore);
    }

    @Test
    void shouldCountAFailedRemoveButNotOneOfAnObjectAlreadyGone() throws IOException
    {
        parts(s -> { });
        remove(0, 1);
        remove(0, 2);
        final TierBatch batch = parts.tier(0).removes.getFirst();
        batch.complete(0, TierStatus.NOT_FOUND);
        batch.complete(1, TierStatus.IO_ERROR);
        parts.deliver();
        assertThat(parts.counter(EngineCounter.L3_ERRORS)).isEqualTo(1);
    }
}
