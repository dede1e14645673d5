package io.kvtier.engine.core;

import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.config.PrefetchMode;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.spi.TierBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/** Lookups, probes, the negative-probe memory and prefetch, driven on the part itself. */
class LookupsTest
{
    private static final Duration TTL = Duration.ofSeconds(10);

    @TempDir
    Path dir;

    private CoreParts parts;

    private CoreParts parts(final Consumer<CoreParts.Settings> configure) throws IOException
    {
        parts = new CoreParts(dir, s ->
        {
            s.negativeProbeTtl = TTL;
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

    private ClientRecord lookup(final TestPort port, final int from, final int count)
    {
        final ClientRecord r = parts.begin(port, MessageType.LOOKUP, from, count);
        parts.lookups.lookup(r);
        return r;
    }

    /** Submits the open batches and answers the probe batches submitted since {@code seen}, as a working tier. */
    private int answerProbes(final int tier, final int seen)
    {
        parts.flush();
        final int now = parts.tier(tier).exists.size();
        for (int b = seen; b < now; b++)
        {
            parts.tier(tier).answer(parts.tier(tier).exists.get(b));
        }
        parts.deliver();
        return now;
    }

    /** Keys the tier holds but the index does not know of: a restarted engine, or another node's writes. */
    private void unknownInL3(final long high, final long low)
    {
        parts.inL3(high, low, 0);
        parts.index.removeTier(high, low, 0);
    }

    @Test
    void shouldCountThePoolRunAndTheL3PartOfAPrefix() throws IOException
    {
        parts(s -> { });
        final TestPort port = parts.open(1, 6);
        parts.serve(1, 1);
        parts.serve(1, 2);
        parts.inL3(1, 3, 0);
        parts.serve(1, 4);
        parts.inL3(1, 5, 0);
        parts.index.addTier(1, 6, 0);
        parts.tier(0).objects.clear();

        lookup(port, 0, 5);

        assertThat(port.completions).isEqualTo(1);
        assertThat(port.l2Pages).as("the leading run in the pool").isEqualTo(2);
        assertThat(port.l3Pages).as("the rest of the prefix, in L3 or in the pool after a gap").isEqualTo(3);
        assertThat(port.resultCount).isEqualTo(5);
        assertThat(parts.counter(EngineCounter.LOOKUPS)).isEqualTo(1);
        parts.flush();
        assertThat(parts.tier(0).batches()).as("nothing to ask the tiers").isZero();
    }

    @Test
    void shouldProbeRoundAfterRoundWhileEveryKeyIsFound() throws IOException
    {
        parts(s -> s.probePages = 2);
        final TestPort port = parts.open(1, 5);
        for (int i = 1; i <= 5; i++)
        {
            unknownInL3(1, i);
        }

        final ClientRecord r = lookup(port, 0, 5);
        assertThat(r.phase).isEqualTo(ClientRecord.PHASE_PROBING);
        int seen = 0;
        int rounds = 0;
        while (port.completions == 0 && rounds < 10)
        {
            seen = answerProbes(0, seen);
            rounds++;
        }

        assertThat(rounds).as("2 + 2 + 1 keys").isEqualTo(3);
        assertThat(port.l3Pages).isEqualTo(5);
        assertThat(port.resultCount).isEqualTo(5);
        assertThat(parts.counter(EngineCounter.PROBE_KEYS)).isEqualTo(5);
        assertThat(parts.counter(EngineCounter.PROBE_HITS)).isEqualTo(5);
        assertThat(parts.tierBits(1, 5)).as("what the tier said is in the index").isEqualTo(1);
    }

    /**
     * The chaos campaign's finding (seed 349, slab tiers): a client evicted its page and asked where the key
     * was; the probe waited a second on a stuck tier, another client committed the key meanwhile, and the
     * answer said L3 where it was the pool. The client took that for an L3 copy, and nothing held one.
     */
    @Test
    void shouldNotProbeATierTheIndexKnowsWholeUntilAWritesOutcomeIsUnknown() throws IOException
    {
        parts(s -> { });
        parts.lookups.trustIndex(new boolean[] {true}, java.util.List.of("local"));
        final TestPort port = parts.open(1, 3);
        // Against the premise, so that a probe would show: the tier holds a key its index does not know.
        unknownInL3(1, 1);

        final ClientRecord r = lookup(port, 0, 3);
        parts.flush();
        assertThat(r.phase).as("answered at once").isNotEqualTo(ClientRecord.PHASE_PROBING);
        assertThat(port.completions).isEqualTo(1);
        assertThat(parts.tier(0).exists).as("the tier is not asked").isEmpty();
        assertThat(parts.counter(EngineCounter.PROBE_KEYS)).isZero();

        parts.lookups.indexMayMiss(0, "a backup timed out");
        assertThat(lookup(port, 0, 3).phase).isEqualTo(ClientRecord.PHASE_PROBING);
        answerProbes(0, 0);
        assertThat(port.completions).isEqualTo(2);
        assertThat(port.l3Pages).as("found by the probe").isEqualTo(1);
        assertThat(parts.counter(EngineCounter.PROBE_KEYS)).isEqualTo(3);
    }

    @Test
    void shouldProbeEveryTierAgainOnceTheIndexForgetsAnEntry() throws IOException
    {
        parts(s -> { });
        parts.lookups.trustIndex(new boolean[] {true}, java.util.List.of("local"));
        final TestPort port = parts.open(1, 2);
        unknownInL3(1, 1);
        lookup(port, 0, 2);
        parts.flush();
        assertThat(parts.tier(0).exists).isEmpty();

        // L3-only entries until the index, full, forgets one.
        for (long k = 0; parts.index.forgotten() == 0; k++)
        {
            assertThat(k).as("the index forgets within a few of its sizes").isLessThan(1L << 22);
            parts.index.addTier(7, k, 0, 0);
        }
        assertThat(lookup(port, 0, 2).phase).isEqualTo(ClientRecord.PHASE_PROBING);
        answerProbes(0, 0);
        assertThat(port.l3Pages).isEqualTo(1);
    }

    @Test
    void shouldCountAsPoolAPageCommittedWhileItsProbeWaited() throws IOException
    {
        parts(s -> { });
        final TestPort port = parts.open(1, 2);

        final ClientRecord r = lookup(port, 0, 1);
        assertThat(r.phase).isEqualTo(ClientRecord.PHASE_PROBING);
        parts.serve(1, 1);
        answerProbes(0, 0);

        assertThat(port.completions).isEqualTo(1);
        assertThat(port.l2Pages).as("committed to the pool while the probe waited").isEqualTo(1);
        assertThat(port.l3Pages).as("no tier holds it").isZero();
        assertThat(parts.tierBits(1, 1)).isZero();
    }

    @Test
    void shouldExtendThePoolRunOnlyWhereItHadReachedTheProbedKeys() throws IOException
    {
        parts(s -> { });
        final TestPort port = parts.open(1, 4);
        parts.serve(1, 1);
        parts.inL3(1, 2, 0);

        final ClientRecord r = lookup(port, 0, 4);
        assertThat(r.phase).isEqualTo(ClientRecord.PHASE_PROBING);
        parts.serve(1, 3);
        answerProbes(0, 0);

        assertThat(port.l2Pages).as("the run stops at the L3 page").isEqualTo(1);
        assertThat(port.l3Pages).as("the L3 page, then the pool page after it").isEqualTo(2);
    }

    @Test
    void shouldRememberAKeyNoTierHasForTheTimeToLiveOnly() throws IOException
    {
        parts(s -> { });
        final TestPort port = parts.open(1, 3);
        unknownInL3(1, 1);

        lookup(port, 0, 3);
        final int seen = answerProbes(0, 0);
        assertThat(port.resultCount).isEqualTo(1);
        assertThat(parts.counter(EngineCounter.PROBE_KEYS)).isEqualTo(3);

        parts.advance(TTL.minusNanos(1));
        lookup(port, 0, 3);
        parts.flush();
        assertThat(port.completions).as("answered without asking again").isEqualTo(2);
        assertThat(port.resultCount).isEqualTo(1);
        assertThat(parts.tier(0).exists).hasSize(seen);
        assertThat(parts.counter(EngineCounter.PROBES_SKIPPED)).isEqualTo(1);

        parts.advance(Duration.ofNanos(1));
        lookup(port, 0, 3);
        assertThat(port.completions).as("the memory expired: it asks").isEqualTo(2);
        answerProbes(0, seen);
        assertThat(port.completions).isEqualTo(3);
        assertThat(parts.counter(EngineCounter.PROBE_KEYS)).isEqualTo(5);
    }

    @Test
    void shouldForgetThatL3LackedAKeyOnceThisEngineCopiedIt() throws IOException
    {
        parts(s -> { });
        final TestPort port = parts.open(1, 1);
        lookup(port, 0, 1);
        final int seen = answerProbes(0, 0);
        assertThat(port.resultCount).isZero();

        parts.lookups.copiedToL3(1, 1);
        lookup(port, 0, 1);
        parts.flush();

        assertThat(parts.tier(0).exists).hasSizeGreaterThan(seen);
        assertThat(parts.counter(EngineCounter.PROBES_SKIPPED)).isZero();
    }

    @Test
    void shouldNotRememberAsMissingAKeyAnotherTierHas() throws IOException
    {
        parts(s -> s.tiers = 2);
        final TestPort port = parts.open(1, 1);
        parts.inL3(1, 1, 1);
        parts.index.removeTier(1, 1, 1);

        lookup(port, 0, 1);
        answerProbes(0, 0);
        answerProbes(1, 0);
        assertThat(port.resultCount).isEqualTo(1);
        parts.index.removeTier(1, 1, 1);

        lookup(port, 0, 1);
        assertThat(parts.counter(EngineCounter.PROBES_SKIPPED)).isZero();
        assertThat(port.completions).as("asks again").isEqualTo(1);
    }

    @Test
    void shouldPrefetchTheL3PartAndAnswerWhenItLanded() throws IOException
    {
        parts(s ->
        {
            s.prefetch = PrefetchMode.WAIT_COMPLETE;
            s.prefetchThreshold = 2;
        });
        final TestPort port = parts.open(1, 3);
        parts.serve(1, 1);
        parts.inL3(1, 2, 0);
        parts.inL3(1, 3, 0);

        final ClientRecord r = lookup(port, 0, 3);

        assertThat(port.completions).isZero();
        assertThat(r.phase).isEqualTo(ClientRecord.PHASE_PREFETCH_WAIT);
        assertThat(r.pending).isEqualTo(2);
        parts.flush();
        parts.tier(0).answer(parts.tier(0).reads.getFirst());
        parts.deliver();

        assertThat(port.completions).isEqualTo(1);
        assertThat(port.l2Pages).as("counted again once they landed").isEqualTo(3);
        assertThat(port.l3Pages).isZero();
        assertThat(parts.counter(EngineCounter.PREFETCH_PAGES)).isEqualTo(2);
    }

    @Test
    void shouldNotPrefetchBelowTheThreshold() throws IOException
    {
        parts(s ->
        {
            s.prefetch = PrefetchMode.WAIT_COMPLETE;
            s.prefetchThreshold = 2;
        });
        final TestPort port = parts.open(1, 2);
        parts.serve(1, 1);
        parts.inL3(1, 2, 0);

        lookup(port, 0, 2);

        assertThat(port.completions).isEqualTo(1);
        assertThat(port.l3Pages).isEqualTo(1);
        assertThat(parts.counter(EngineCounter.L3_READS)).isZero();
    }

    @Test
    void shouldAnswerAPrefetchingLookupAtItsDeadlineWhateverLanded() throws IOException
    {
        parts(s ->
        {
            s.prefetch = PrefetchMode.TIMEOUT;
            s.prefetchTimeout = Duration.ofSeconds(1);
        });
        final TestPort port = parts.open(1, 2);
        parts.inL3(1, 1, 0);
        parts.inL3(1, 2, 0);
        lookup(port, 0, 2);
        parts.flush();
        final TierBatch read = parts.tier(0).reads.getFirst();

        parts.advance(Duration.ofSeconds(1).minusNanos(1));
        parts.lookups.onTime(parts.now());
        assertThat(port.completions).isZero();

        parts.advance(Duration.ofNanos(1));
        parts.lookups.onTime(parts.now());
        assertThat(port.completions).isEqualTo(1);
        assertThat(port.l2Pages).isZero();
        assertThat(port.l3Pages).isEqualTo(2);

        parts.tier(0).answer(read);
        parts.deliver();
        assertThat(port.completions).as("answered once").isEqualTo(1);
    }

    @Test
    void shouldKeepALiveDeadlineWhenAnsweredOnesFillItsRing() throws IOException
    {
        // One client slot: room for 4 deadlines. Ten lookups whose loads land in time leave stale ones.
        parts(s ->
        {
            s.maxClients = 1;
            s.prefetch = PrefetchMode.TIMEOUT;
            s.prefetchTimeout = Duration.ofSeconds(1);
        });
        final TestPort port = parts.open(1, 1);
        for (int round = 0; round < 10; round++)
        {
            port.keys(100 + round, 1);
            parts.inL3(100 + round, 1, 0);
            lookup(port, 0, 1);
            parts.flush();
            parts.tier(0).answer(parts.tier(0).reads.getLast());
            parts.deliver();
            assertThat(port.completions).isEqualTo(round + 1);
        }
        port.keys(200, 1);
        parts.inL3(200, 1, 0);
        lookup(port, 0, 1);

        parts.advance(Duration.ofSeconds(1));
        parts.lookups.onTime(parts.now());

        assertThat(port.completions).isEqualTo(11);
        assertThat(port.l3Pages).isEqualTo(1);
    }

    @Test
    void shouldStartLoadsOfThePrefixesL3PartOnAPrefetch() throws IOException
    {
        parts(s -> { });
        final TestPort port = parts.open(1, 4);
        parts.serve(1, 1);
        parts.inL3(1, 2, 0);
        parts.inL3(1, 3, 0);
        parts.inL3(1, 5, 0);

        parts.lookups.prefetch(parts.begin(port, MessageType.PREFETCH, 0, 4));

        assertThat(port.completions).as("answers at once").isEqualTo(1);
        assertThat(port.resultCount).as("key 4 is nowhere: the prefix ends before it").isEqualTo(2);
        assertThat(parts.counter(EngineCounter.L3_READS)).isEqualTo(2);
        assertThat(port.status(1)).as("nobody waits").isEqualTo(PageEntryStatus.NONE);
    }
}
