package io.kvtier.engine.core;

import io.kvtier.engine.client.PageStatus;
import io.kvtier.engine.client.RequestOp;
import io.kvtier.engine.pool.PageStateWord;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
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
        return parts.io.queueKeyIo(tier, TierIoBatch.REMOVE, 9, low, EngineConductor.ENGINE_OWNER, 0, 0);
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
    void shouldGiveTheWaitersOfALateReadAMissAndStillUseItsAnswer() throws IOException
    {
        parts(s -> { });
        parts.inL3(1, 1, 0);
        final TestPort port = parts.open(1, 1);
        parts.acquires.acquire(parts.begin(port, RequestOp.ACQUIRE, 0, 1));
        parts.flush();
        final TierBatch read = parts.tier(0).reads.getFirst();

        parts.advance(IO_TIMEOUT.minusNanos(1));
        parts.io.onTime(parts.now());
        assertThat(port.completions).isZero();
        assertThat(parts.counter(EngineCounter.L3_TIMEOUTS)).isZero();

        parts.advance(Duration.ofNanos(1));
        parts.io.onTime(parts.now());
        assertThat(parts.counter(EngineCounter.L3_TIMEOUTS)).isEqualTo(1);
        assertThat(port.completions).isEqualTo(1);
        assertThat(port.resultCount).isZero();
        final int page = parts.boundPage(1, 1);
        assertThat(parts.state(page)).as("held until the tier answers").isEqualTo(PageStateWord.WRITING);
        parts.advance(IO_TIMEOUT);
        parts.io.onTime(parts.now());
        assertThat(parts.counter(EngineCounter.L3_TIMEOUTS)).as("counted once").isEqualTo(1);

        parts.tier(0).answer(read);
        parts.deliver();
        assertThat(parts.state(page)).isEqualTo(PageStateWord.SERVING);
        parts.acquires.acquire(parts.begin(port, RequestOp.ACQUIRE, 0, 1));
        assertThat(port.status(0)).isEqualTo(PageStatus.PINNED_FROM_L3);
    }

    @Test
    void shouldAnswerEveryWaiterOfALateReadEvenForKeysTheTierAlreadyCompleted() throws IOException
    {
        parts(s -> { });
        parts.inL3(1, 1, 0);
        parts.inL3(1, 2, 0);
        final TestPort port = parts.open(1, 2);
        parts.acquires.acquire(parts.begin(port, RequestOp.ACQUIRE, 0, 2));
        parts.flush();
        final TierBatch read = parts.tier(0).reads.getFirst();
        assertThat(read.size()).isEqualTo(2);
        parts.tier(0).answer(read, 0);

        parts.advance(IO_TIMEOUT);
        parts.io.onTime(parts.now());

        assertThat(port.completions).as("a tier that never finishes the batch must not hold the request").isEqualTo(1);
        assertThat(port.resultCount).isZero();
        parts.tier(0).answer(read, 1);
        parts.deliver();
        assertThat(port.completions).isEqualTo(1);
        assertThat(parts.state(parts.boundPage(1, 1))).isEqualTo(PageStateWord.SERVING);
        assertThat(parts.state(parts.boundPage(1, 2))).isEqualTo(PageStateWord.SERVING);
    }

    @Test
    void shouldAnswerEveryProbeOfALateBatchEvenOnesTheTierAlreadyAnswered() throws IOException
    {
        parts(s -> { });
        final TestPort port = parts.open(1, 2);
        parts.lookups.lookup(parts.begin(port, RequestOp.LOOKUP, 0, 2));
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
        parts.lookups.lookup(parts.begin(port, RequestOp.LOOKUP, 0, 2));
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
    void shouldTurnAPluginThatThrowsIntoIoErrors() throws IOException
    {
        parts(s -> { });
        parts.inL3(1, 1, 0);
        parts.tier(0).throwOnSubmit = true;
        final int page = load(1, 1);
        final int freeBefore = parts.space.free();

        parts.flush();

        assertThat(parts.counter(EngineCounter.PLUGIN_ERRORS)).isEqualTo(1);
        assertThat(parts.done).as("every key completed: the batch is done").hasSize(1);
        parts.deliver();
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
