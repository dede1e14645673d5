package io.kvtier.engine.core;

import io.kvtier.client.pool.PageStateWord;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.status.EngineCounter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/** Open clients and their leases, driven directly on the session table with the real parts behind it. */
class SessionTableTest
{
    private static final Duration LEASE = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    private CoreParts parts;

    private CoreParts parts(final Consumer<CoreParts.Settings> configure) throws IOException
    {
        parts = new CoreParts(dir, s ->
        {
            s.sessionTimeout = LEASE;
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

    /** A client holding a pin on key 0 (a pool page) and a reservation on key 1; nothing in flight. */
    private TestPort clientWithAPinAndAReservation()
    {
        final TestPort port = parts.open(1, 2);
        parts.serve(1, 1);
        parts.acquires.acquire(parts.begin(port, MessageType.ACQUIRE, 0, 1));
        assertThat(port.status(0)).isEqualTo(PageEntryStatus.PINNED);
        parts.reservations.reserve(parts.begin(port, MessageType.RESERVE, 1, 1));
        assertThat(port.status(1)).isEqualTo(PageEntryStatus.RESERVED);
        return port;
    }

    @Test
    void shouldHandOutEachSlotOnceAndRefuseAClientWhenAllAreOpen() throws IOException
    {
        parts(s -> s.maxClients = 2);
        final TestPort a = parts.open(1, 1);
        final TestPort b = parts.open(2, 1);
        assertThat(a.clientId()).isBetween(1, 2);
        assertThat(b.clientId()).isBetween(1, 2).isNotEqualTo(a.clientId());
        assertThat(parts.sessions.recordOf(a).id).isEqualTo(a.clientId());
        assertThat(parts.sessions.recordOf(a).port).isSameAs(a);

        final TestPort refused = new TestPort(1);
        parts.sessions.open(refused, parts.now());
        assertThat(refused.status).isEqualTo(ErrorCode.INVALID);
        assertThat(parts.sessions.recordOf(refused)).isNull();

        final int freed = a.clientId();
        final ClientRecord r = parts.begin(a, MessageType.CLOSE, 0, 0);
        parts.sessions.close(r);
        assertThat(a.status).isEqualTo(ErrorCode.OK);
        assertThat(parts.sessions.recordOf(a)).as("closed").isNull();

        final TestPort c = new TestPort(1);
        parts.sessions.open(c, parts.now());
        assertThat(c.status).isEqualTo(ErrorCode.OK);
        assertThat(c.clientId()).isEqualTo(freed);
        assertThat(parts.sessions.recordOf(a)).as("its old slot is someone else's now").isNull();
    }

    @Test
    void shouldKnowNoPortThatIsNotOpenUnderItsId() throws IOException
    {
        parts(s -> { });
        final TestPort open = parts.open(1, 1);
        final TestPort never = new TestPort(1);
        assertThat(parts.sessions.recordOf(never)).isNull();
        never.clientId(open.clientId());
        assertThat(parts.sessions.recordOf(never)).as("another port under an open client's id").isNull();
        never.clientId(parts.sessions.capacity() + 1);
        assertThat(parts.sessions.recordOf(never)).isNull();
    }

    @Test
    void shouldExpireAClientSilentPastItsLeaseAndTakeBackItsPinsAndReservations() throws IOException
    {
        parts(s -> s.maxClients = 1);
        final TestPort port = clientWithAPinAndAReservation();
        final int pinned = port.page(0);
        final int reserved = port.page(1);
        final int freeBefore = parts.space.free();

        parts.advance(LEASE);
        parts.sessions.onTime(parts.now());
        assertThat(port.isExpired()).as("silent exactly as long as its lease").isFalse();
        assertThat(parts.pins(pinned)).isEqualTo(1);

        parts.advance(Duration.ofNanos(1));
        parts.sessions.onTime(parts.now());

        assertThat(port.isExpired()).isTrue();
        assertThat(parts.counter(EngineCounter.SESSIONS_EXPIRED)).isEqualTo(1);
        assertThat(parts.sessions.recordOf(port)).isNull();
        assertThat(parts.pins(pinned)).as("its pin is dropped").isZero();
        assertThat(parts.state(pinned)).isEqualTo(PageStateWord.SERVING);
        assertThat(parts.state(reserved)).as("its reservation is taken back").isEqualTo(PageStateWord.FREE);
        assertThat(parts.boundPage(1, 2)).isNegative();
        assertThat(parts.counter(EngineCounter.RESERVATIONS_EXPIRED)).isEqualTo(1);
        assertThat(parts.space.free()).as("through quarantine: it may still be writing").isEqualTo(freeBefore);
        assertThat(parts.counter(EngineCounter.PAGES_QUARANTINED)).isEqualTo(1);

        // Its slot is free for the next client.
        final TestPort next = new TestPort(1);
        parts.sessions.open(next, parts.now());
        assertThat(next.status).isEqualTo(ErrorCode.OK);
        parts.sessions.onTime(parts.now());
        assertThat(parts.counter(EngineCounter.SESSIONS_EXPIRED)).isEqualTo(1);
    }

    @Test
    void shouldCountTheLeaseFromTheClientsLastRequest() throws IOException
    {
        parts(s -> { });
        final TestPort port = parts.open(1, 1);
        parts.advance(Duration.ofSeconds(20));
        parts.begin(port, InternalOp.KEEP_ALIVE, 0, 0).finish(0);

        parts.advance(Duration.ofSeconds(11));
        parts.sessions.onTime(parts.now());
        assertThat(port.isExpired()).isFalse();

        parts.advance(Duration.ofSeconds(19).plusNanos(1));
        parts.sessions.onTime(parts.now());
        assertThat(port.isExpired()).isTrue();
    }

    @Test
    void shouldNotExpireAClientWhileItsRequestIsInFlight() throws IOException
    {
        parts(s -> { });
        final TestPort port = parts.open(1, 1);
        final ClientRecord r = parts.begin(port, MessageType.FLUSH, 0, 0);

        parts.advance(LEASE.multipliedBy(3));
        parts.sessions.onTime(parts.now());
        assertThat(port.isExpired()).isFalse();
        assertThat(parts.sessions.recordOf(port)).isSameAs(r);
    }

    @Test
    void shouldFreeAClosingClientsReservationsAtOnceAndDropItsPins() throws IOException
    {
        parts(s -> { });
        final TestPort port = clientWithAPinAndAReservation();
        final int pinned = port.page(0);
        final int reserved = port.page(1);
        final int freeBefore = parts.space.free();

        parts.sessions.close(parts.begin(port, MessageType.CLOSE, 0, 0));

        assertThat(port.status).isEqualTo(ErrorCode.OK);
        assertThat(port.isExpired()).isFalse();
        assertThat(parts.pins(pinned)).isZero();
        assertThat(parts.state(reserved)).isEqualTo(PageStateWord.FREE);
        assertThat(parts.space.free()).as("it said it stopped writing: no quarantine").isEqualTo(freeBefore + 1);
        assertThat(parts.counter(EngineCounter.PAGES_ABORTED)).isEqualTo(1);
    }

    @Test
    void shouldForgetAClosingClientsWaitForSpace() throws IOException
    {
        parts(s -> s.pages = 1);
        final TestPort port = parts.open(1, 1);
        final int page = parts.space.allocate();
        final ClientRecord r = parts.begin(port, MessageType.RESERVE, 0, 1);
        // A write-back copy is pending, so the request may wait for the page it frees.
        r.phase = ClientRecord.PHASE_SPACE_WAIT;
        r.spaceDeadlineNanos = parts.now() + Duration.ofSeconds(5).toNanos();
        parts.gateOverride = new PoolSpace.EvictionGate()
        {
            @Override
            public int beforeEvict(final int p)
            {
                return EVICT;
            }

            @Override
            public void lost(final long keyHigh, final long keyLow)
            {
            }

            @Override
            public void evicted(final int p)
            {
            }

            @Override
            public int evictionsPending()
            {
                return 1;
            }
        };
        assertThat(parts.space.waitForSpace(r)).isTrue();

        parts.sessions.close(r);
        parts.space.free(page);
        parts.space.resumeSpaceWaiters();

        assertThat(parts.resumed).isEmpty();
    }

    @Test
    void shouldAnswerClosedToEveryRequestInFlightWhenTheEngineStops() throws IOException
    {
        parts(s -> { });
        final TestPort busy = parts.open(1, 1);
        final TestPort idle = parts.open(2, 1);
        parts.begin(busy, MessageType.FLUSH, 0, 0);

        parts.sessions.closeAll();

        assertThat(busy.completions).isEqualTo(1);
        assertThat(busy.status).isEqualTo(ErrorCode.CLOSED);
        assertThat(idle.completions).isZero();
    }
}
