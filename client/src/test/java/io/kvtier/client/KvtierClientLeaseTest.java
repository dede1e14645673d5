package io.kvtier.client;

import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.client.protocol.RequestDecoder;
import io.kvtier.client.protocol.RequestEncoder;
import io.kvtier.client.protocol.ResponseDecoder;
import io.kvtier.client.protocol.ResponseEncoder;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What the client sends for its leases, against a scripted channel that records each request and
 * answers it as told: pins are released and reservations aborted on close, never twice, and the
 * slots come back. (The engine's side of the same is checked end to end in bench's KvtierClientIpcTest.)
 */
class KvtierClientLeaseTest
{
    /** A request as the engine would see it. */
    record Sent(int type, int firstSlot, int count, int namespaceIndex)
    {
    }

    /** Answers every request with the status and per-slot page status it is given. */
    static final class ScriptedChannel implements RequestChannel
    {
        final MemorySegment request = Arena.ofAuto().allocate(1 << 16, 8);
        final MemorySegment response = Arena.ofAuto().allocate(1 << 16, 8);
        final MemorySegment pool = Arena.ofAuto().allocate(8 * 8192, 4096);
        final List<Sent> sent = new ArrayList<>();
        int status;
        int entryStatus = PageEntryStatus.PINNED;
        int resultCount = -1;
        long requestId;

        @Override
        public RequestEncoder begin(final int type, final int bodyLength, final int firstSlot, final int count, final int namespaceIndex, final int flags)
        {
            return new RequestEncoder().wrap(request, 0).header(32 + bodyLength, type, ++requestId, firstSlot, count, namespaceIndex, flags);
        }

        @Override
        public ResponseDecoder sendAndAwait()
        {
            final RequestDecoder decoded = new RequestDecoder().wrap(request, 0, request.get(java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED, 0));
            sent.add(new Sent(decoded.type(), decoded.firstSlot(), decoded.count(), decoded.namespaceIndex()));
            final int entries = status == 0 && !MessageType.isSlotless(decoded.type()) ? decoded.count() : 0;
            final ResponseEncoder encoder = new ResponseEncoder().wrap(response, 0)
                .header(48 + 12 * entries, decoded.type(), decoded.requestId(), status, resultCount >= 0 ? resultCount : entries, decoded.firstSlot(), entries,
                    entries, 0, entries, 0);
            for (int i = 0; i < entries; i++)
            {
                encoder.entry(i, i, 1, entryStatus);
            }
            return new ResponseDecoder().wrap(response, 0);
        }

        @Override
        public void finish()
        {
        }

        @Override
        public MemorySegment pool()
        {
            return pool;
        }

        @Override
        public int pageSize()
        {
            return 4096;
        }

        @Override
        public long dataOffset()
        {
            return 0;
        }

        @Override
        public long frameLength()
        {
            return 8192;
        }

        @Override
        public int maxKeys()
        {
            return 8;
        }

        @Override
        public int maxMessageLength()
        {
            return 4096;
        }

        @Override
        public void close()
        {
            sent.add(new Sent(MessageType.CLOSE, 0, 0, 0));
        }

        List<Integer> types()
        {
            return sent.stream().map(Sent::type).toList();
        }
    }

    private static PageKeyChain keys(final int n)
    {
        final PageKeyChain chain = new PageKeyChain(8);
        for (int i = 0; i < n; i++)
        {
            chain.add(i, i);
        }
        return chain;
    }

    @Test
    void shouldReleaseThePinsOnCloseOnceAndGiveTheSlotsBack()
    {
        final ScriptedChannel channel = new ScriptedChannel();
        final KvtierClient client = new KvtierClient(channel, 1);
        final PinnedPages pages = client.acquire(keys(3));
        try (pages)
        {
            assertThat(pages.count()).isEqualTo(3);
            assertThat(pages.pageOffset(2)).isEqualTo(2 * 8192);
            assertThat(client.slotsInUse()).isEqualTo(3);
        }
        pages.close();

        assertThat(channel.sent).containsExactly(new Sent(MessageType.ACQUIRE, 0, 3, 0), new Sent(MessageType.RELEASE, 0, 3, 0));
        assertThat(client.slotsInUse()).isZero();
        assertThatThrownBy(() -> pages.page(0)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void shouldAbortAnUncommittedReservationOnCloseAndNotACommittedOne()
    {
        final ScriptedChannel channel = new ScriptedChannel();
        channel.entryStatus = PageEntryStatus.RESERVED;
        final KvtierClient client = new KvtierClient(channel, 1);
        try (ReservedPages abandoned = client.reserve(keys(4), 1, 2))
        {
            assertThat(abandoned.reservedCount()).isEqualTo(2);
            assertThat(abandoned.isReserved(1)).isTrue();
        }
        try (ReservedPages written = client.reserve(keys(4), 0, 4))
        {
            channel.entryStatus = PageEntryStatus.COMMITTED;
            assertThat(written.commit(100)).isEqualTo(4);
        }

        assertThat(channel.types()).containsExactly(MessageType.RESERVE, MessageType.ABORT, MessageType.RESERVE, MessageType.COMMIT);
        assertThat(client.slotsInUse()).isZero();
    }

    @Test
    void shouldGiveLeasesOpenAtOnceDisjointSlots()
    {
        final ScriptedChannel channel = new ScriptedChannel();
        final KvtierClient client = new KvtierClient(channel, 1);
        try (PinnedPages first = client.acquire(keys(3)); PinnedPages second = client.acquire(keys(5)))
        {
            assertThat(first.firstSlot).isZero();
            assertThat(second.firstSlot).isEqualTo(3);
            assertThatThrownBy(() -> client.acquire(keys(1))).isInstanceOf(IllegalStateException.class).hasMessageContaining("no run of 1 free slots");
        }
        assertThat(client.slotsInUse()).isZero();
    }

    @Test
    void shouldNameTheErrorCodeAndKeepNoSlotsWhenTheEngineRefuses()
    {
        final ScriptedChannel channel = new ScriptedChannel();
        channel.status = ErrorCode.SLOT_HELD.code();
        final KvtierClient client = new KvtierClient(channel, 1);

        assertThatThrownBy(() -> client.acquire(keys(2))).isInstanceOfSatisfying(KvtierException.class, ex ->
        {
            assertThat(ex.errorCode()).isEqualTo(ErrorCode.SLOT_HELD);
            assertThat(ex.operation()).isEqualTo(MessageType.ACQUIRE);
            assertThat(ex.getMessage()).contains("ACQUIRE").contains("SLOT_HELD (20)");
        });
        assertThat(client.slotsInUse()).isZero();
        assertThat(channel.types()).as("nothing to release after a refused acquire").containsExactly(MessageType.ACQUIRE);
    }

    @Test
    void shouldReuseItsLeasesAndLookupResult()
    {
        final ScriptedChannel channel = new ScriptedChannel();
        final KvtierClient client = new KvtierClient(channel, 1);
        final PinnedPages first;
        try (PinnedPages pages = client.acquire(keys(2)))
        {
            first = pages;
        }
        try (PinnedPages pages = client.acquire(keys(2)))
        {
            assertThat(pages).isSameAs(first);
        }
        assertThat(client.lookup(keys(2))).isSameAs(client.lookup(keys(1)));
    }
}
