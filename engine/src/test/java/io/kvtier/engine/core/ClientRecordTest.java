package io.kvtier.engine.core;

import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The engine's record of a client and of its request in flight. */
class ClientRecordTest
{
    private static ClientRecord bound(final TestPort port)
    {
        final ClientRecord r = new ClientRecord(3);
        r.bind(port, 100);
        return r;
    }

    @Test
    void shouldTakeThePortsArraysAndGiveItItsId()
    {
        final TestPort port = new TestPort(4).keys(1, 4);
        final ClientRecord r = bound(port);

        assertThat(port.clientId()).isEqualTo(3);
        assertThat(r.registered).isTrue();
        assertThat(r.keys).isSameAs(port.keys());
        assertThat(r.status).isSameAs(port.statuses());
        assertThat(r.pageIds).isSameAs(port.pageIds());
        assertThat(r.lastActivityNanos).isEqualTo(100);

        r.unbind();
        assertThat(r.registered).isFalse();
        assertThat(r.port).isNull();
        assertThat(r.keys).isNull();
    }

    @Test
    void shouldStartEachRequestAfreshAndKnowWhichRequestAWaiterWasFor()
    {
        final TestPort port = new TestPort(4).keys(1, 4);
        final ClientRecord r = bound(port);
        r.begin(MessageType.LOOKUP, 1, 2, 200, System.nanoTime());
        final int first = r.opSeq;
        r.pending = 2;
        r.resultCount = 5;
        r.phase = ClientRecord.PHASE_PROBING;
        assertThat(r.awaits(first)).isTrue();

        r.begin(MessageType.ACQUIRE, 0, 3, 300, System.nanoTime());

        assertThat(r.opSeq).isNotEqualTo(first);
        assertThat(r.awaits(first)).as("a waiter of the last request").isFalse();
        assertThat(r.awaits(r.opSeq)).isTrue();
        assertThat(r.op).isEqualTo(MessageType.ACQUIRE);
        assertThat(r.cursor).isZero();
        assertThat(r.probedUntil).isZero();
        assertThat(r.pending).isZero();
        assertThat(r.resultCount).isZero();
        assertThat(r.phase).isEqualTo(ClientRecord.PHASE_NONE);
        assertThat(r.lastActivityNanos).isEqualTo(300);

        r.finish(0);
        assertThat(r.awaits(r.opSeq)).as("answered").isFalse();
        r.begin(MessageType.ACQUIRE, 0, 3, 400, System.nanoTime());
        r.unbind();
        assertThat(r.awaits(r.opSeq)).as("closed").isFalse();
    }

    @Test
    void shouldClearEarlierOutcomesButKeepPinsAndReservations()
    {
        final TestPort port = new TestPort(5).keys(1, 5);
        final ClientRecord r = bound(port);
        final int[] before = {PageEntryStatus.PINNED, PageEntryStatus.PINNED_FROM_L3, PageEntryStatus.RESERVED, PageEntryStatus.MISS, PageEntryStatus.COMMITTED};
        for (int i = 0; i < before.length; i++)
        {
            port.statuses()[i] = (byte)before[i];
        }
        r.begin(MessageType.RESERVE, 0, 5, 0, System.nanoTime());

        r.resetStatuses();

        assertThat(port.status(0)).isEqualTo(PageEntryStatus.PINNED);
        assertThat(port.status(1)).as("from L3 describes the request that pinned it, not this one").isEqualTo(PageEntryStatus.PINNED);
        assertThat(port.status(2)).isEqualTo(PageEntryStatus.RESERVED);
        assertThat(port.status(3)).isEqualTo(PageEntryStatus.NONE);
        assertThat(port.status(4)).isEqualTo(PageEntryStatus.NONE);
        assertThat(port.pageIds()[4]).as("an outcome's slot names no page").isEqualTo(-1);
        assertThat(port.generations()[4]).isZero();
    }

    @Test
    void shouldOnlyClearTheRequestsOwnKeys()
    {
        final TestPort port = new TestPort(3).keys(1, 3);
        final ClientRecord r = bound(port);
        port.statuses()[0] = (byte)PageEntryStatus.MISS;
        port.statuses()[2] = (byte)PageEntryStatus.MISS;
        r.begin(MessageType.LOOKUP, 1, 1, 0, System.nanoTime());

        r.resetStatuses();

        assertThat(port.status(0)).isEqualTo(PageEntryStatus.MISS);
        assertThat(port.status(2)).isEqualTo(PageEntryStatus.MISS);
    }

    @Test
    void shouldOnlyRaiseItsHoldLimit()
    {
        final ClientRecord r = bound(new TestPort(8));
        r.hold(4);
        r.hold(1);
        assertThat(r.holdLimit).isEqualTo(5);
        r.hold(7);
        assertThat(r.holdLimit).isEqualTo(8);
    }

    @Test
    void shouldHandItsResultsToThePortWhenItEnds()
    {
        final TestPort port = new TestPort(2);
        final ClientRecord r = bound(port);
        r.begin(MessageType.ACQUIRE, 0, 2, 0, System.nanoTime());
        r.phase = ClientRecord.PHASE_SPACE_WAIT;
        r.l2Pages = 1;
        r.l3Pages = 2;
        r.acquiredFromPool = 3;
        r.acquiredFromL3 = 4;

        r.finish(7);

        assertThat(r.inFlight).isFalse();
        assertThat(r.phase).isEqualTo(ClientRecord.PHASE_NONE);
        assertThat(port.completions).isEqualTo(1);
        assertThat(port.status).isEqualTo(ErrorCode.OK);
        assertThat(port.resultCount).isEqualTo(7);
        assertThat(port.l2Pages).isEqualTo(1);
        assertThat(port.l3Pages).isEqualTo(2);
        assertThat(port.fromPool).isEqualTo(3);
        assertThat(port.fromL3).isEqualTo(4);

        r.begin(MessageType.COMMIT, 0, 1, 0, System.nanoTime());
        r.complete(ErrorCode.INTERNAL_ERROR);
        assertThat(port.status).isEqualTo(ErrorCode.INTERNAL_ERROR);
        assertThat(port.resultCount).as("a new request's count starts at 0").isZero();
    }
}
