package io.kvtier.engine.core;

import io.kvtier.client.pool.PageStateWord;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.collections.KeyTable;
import io.kvtier.engine.status.EngineCounter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Re-verification of recently loaded pages when they are pinned, on the part itself behind the real
 * acquires and loads: a sampled pin waits for the check, a page changed since its load is a miss and
 * leaves through quarantine, and a tier caught often enough leaves service. The test answers each check
 * ({@link CoreParts#reverify}) as the re-verification thread would.
 */
class ReverificationsTest
{
    @TempDir
    Path dir;

    private CoreParts parts;

    private CoreParts parts(final Consumer<CoreParts.Settings> configure) throws IOException
    {
        parts = new CoreParts(dir, s ->
        {
            s.reverifyRate = 1.0;
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

    /** Acquires keys [0, count) of the port's chain, all in L3 only, and lets the tier answer the loads. */
    private ClientRecord acquireLoaded(final TestPort port, final int count)
    {
        final ClientRecord r = parts.begin(port, MessageType.ACQUIRE, 0, count);
        parts.acquires.acquire(r);
        parts.flush();
        parts.tier(0).answer(parts.tier(0).reads.getLast());
        parts.deliver();
        return r;
    }

    @Test
    void shouldServeASampledPageOnlyOnceItsCheckSaysItStillMatches() throws IOException
    {
        parts(s -> { });
        parts.inL3(1, 1, 0);
        final TestPort port = parts.open(1, 1);

        final ClientRecord r = acquireLoaded(port, 1);

        assertThat(port.completions).as("the pin waits for its check").isZero();
        assertThat(port.status(0)).isEqualTo(PageEntryStatus.WAITING);
        assertThat(r.pending).isEqualTo(1);
        assertThat(parts.reverifyJobs).hasSize(1);
        assertThat(parts.counter(EngineCounter.L3_REVERIFIED)).isEqualTo(1);

        parts.reverify();

        assertThat(port.completions).isEqualTo(1);
        assertThat(port.resultCount).isEqualTo(1);
        assertThat(port.status(0)).isEqualTo(PageEntryStatus.PINNED_FROM_L3);
        assertThat(parts.pins(port.page(0))).isEqualTo(1);
        assertThat(parts.counter(EngineCounter.L3_HIT_PAGES)).isEqualTo(1);
        assertThat(parts.counter(EngineCounter.L3_LATE_WRITES)).isZero();
    }

    @Test
    void shouldAnswerAMissForAPageChangedAfterItsLoadAndRetireIt() throws IOException
    {
        parts(s -> { });
        parts.inL3(1, 1, 0);
        parts.inL3(1, 2, 0);
        final TestPort port = parts.open(1, 2);
        acquireLoaded(port, 2);
        final int first = parts.boundPage(1, 1);
        final int second = parts.boundPage(1, 2);
        // A tier that completed the read, then wrote into the first page.
        parts.pool.frames().payload(first).set(java.lang.foreign.ValueLayout.JAVA_BYTE, 0, (byte)0x6B);

        parts.reverify();
        parts.reverify();

        assertThat(port.completions).isEqualTo(1);
        assertThat(port.resultCount).as("the changed page ends the prefix").isZero();
        assertThat(port.status(0)).isEqualTo(PageEntryStatus.MISS);
        assertThat(parts.pins(first)).isZero();
        assertThat(parts.pins(second)).as("past the gap: given back").isZero();
        assertThat(parts.counter(EngineCounter.L3_LATE_WRITES)).isEqualTo(1);
        assertThat(parts.index.find(1, 1) == KeyTable.NONE || parts.boundPage(1, 1) != first).as("no one finds it again").isTrue();
        assertThat(parts.boundPage(1, 2)).as("the one that matched stays cached").isEqualTo(second);
        assertThat(parts.state(first)).as("unpinned, it left the pool").isEqualTo(PageStateWord.FREE);
        assertThat(parts.counter(EngineCounter.PAGES_QUARANTINED)).as("through quarantine: the tier may be writing it still").isEqualTo(1);
        assertThat(parts.io.inService(0)).as("one late write, under the limit of 3").isTrue();
    }

    @Test
    void shouldTakeATierOutOfServiceAtTheLateWriteLimit() throws IOException
    {
        parts(s -> s.lateWriteLimit = 1);
        parts.inL3(1, 1, 0);
        parts.inL3(1, 2, 0);
        final TestPort port = parts.open(1, 2);
        acquireLoaded(port, 1);
        parts.pool.frames().payload(parts.boundPage(1, 1)).set(java.lang.foreign.ValueLayout.JAVA_BYTE, 0, (byte)0x6B);

        parts.reverify();

        assertThat(parts.io.inService(0)).isFalse();
        assertThat(parts.counter(EngineCounter.L3_TIERS_OUT_OF_SERVICE)).isEqualTo(1);
        assertThat(parts.counters.tierStateOpaque(0)).isEqualTo(io.kvtier.client.pool.CountersDescriptor.TIER_OUT_OF_SERVICE);
        final ClientRecord r = parts.begin(port, MessageType.ACQUIRE, 1, 1);
        parts.acquires.acquire(r);
        parts.flush();
        assertThat(port.resultCount).as("its pages are misses now").isZero();
        assertThat(parts.tier(0).reads).as("nothing more is handed to it").hasSize(1);
        parts.advance(Duration.ofHours(1));
        parts.io.onTime(parts.now());
        assertThat(parts.io.inService(0)).as("until the engine restarts").isFalse();
    }

    @Test
    void shouldCheckOnlyPagesLoadedWithinTheWindowAndOneEligiblePinInOneOverTheRate() throws IOException
    {
        parts(s ->
        {
            s.reverifyRate = 0.5;
            s.reverifyWindow = Duration.ofSeconds(1);
        });
        parts.inL3(1, 1, 0);
        parts.inL3(1, 2, 0);
        final int pooled = parts.serve(1, 3);
        final TestPort port = parts.open(1, 3);
        acquireLoaded(port, 2);
        assertThat(parts.reverifyJobs).as("one pin in two").hasSize(1);
        parts.reverify();
        assertThat(port.resultCount).isEqualTo(2);
        parts.acquires.release(parts.record(port), 0, 3);

        // Pages committed by clients are never checked; loaded ones are while the window lasts.
        parts.acquires.acquire(parts.begin(port, MessageType.ACQUIRE, 2, 1));
        parts.acquires.release(parts.record(port), 2, 3);
        assertThat(parts.reverifyJobs).as("page %d was never loaded from L3", pooled).isEmpty();
        parts.acquires.acquire(parts.begin(port, MessageType.ACQUIRE, 0, 2));
        assertThat(parts.reverifyJobs).hasSize(1);
        parts.reverify();
        parts.acquires.release(parts.record(port), 0, 2);

        parts.advance(Duration.ofSeconds(1));
        parts.acquires.acquire(parts.begin(port, MessageType.ACQUIRE, 0, 2));
        assertThat(parts.reverifyJobs).as("loaded too long ago").isEmpty();
        assertThat(port.resultCount).isEqualTo(2);
        assertThat(parts.counter(EngineCounter.L3_REVERIFIED)).isEqualTo(2);
    }
}
