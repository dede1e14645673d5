package io.kvtier.engine.ipc;

import io.kvtier.client.IpcConnection;
import io.kvtier.client.Namespace;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.HandshakeDescriptor;
import io.kvtier.client.protocol.IdleStrategy;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.client.protocol.RequestDescriptor;
import io.kvtier.client.protocol.RequestEncoder;
import io.kvtier.client.protocol.ResponseDecoder;
import io.kvtier.engine.Engine;
import io.kvtier.engine.status.EngineCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static io.kvtier.engine.ipc.IpcTestSupport.fill;
import static io.kvtier.engine.ipc.IpcTestSupport.holds;
import static io.kvtier.engine.ipc.IpcTestSupport.keys;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * LOOKUP_AND_LOCK and COMMIT_AND_RELEASE over IPC (docs/ipc-protocol.md section 4, version 1.3): the
 * committed prefix pinned and the rest reserved in one round trip, the reservations written in place and
 * committed with the pins dropped in another, every entry and count as the document says; a pool that
 * fills midway; and each hostile request (a Reserve Limit out of range, a flag on the wrong operation, a
 * slot holding a reservation, another namespace's keys, a client of minor version 2, a client that goes
 * away holding what it locked) answered with its named code, the client going on and nothing of anyone
 * else changed.
 */
class IpcCombinedRequestsTest
{
    private static final int LENGTH = 512;

    @TempDir
    Path directory;

    /** A response, copied out so the ring can move on. */
    private record Answer(int status, int result, int poolPages, int fromPool, int[] pages, int[] statuses)
    {
    }

    private static Answer await(final IpcConnection client, final long requestId) throws Exception
    {
        final ResponseDecoder r = client.awaitResponse(requestId);
        final int n = r.entryCount();
        final int[] pages = new int[n];
        final int[] statuses = new int[n];
        for (int i = 0; i < n; i++)
        {
            pages[i] = r.entryPageId(i);
            statuses[i] = r.entryStatus(i);
        }
        final Answer answer = new Answer(r.status(), r.resultCount(), r.poolPages(), r.fromPool(), pages, statuses);
        client.releaseResponse();
        return answer;
    }

    private static int[] lengths(final int n)
    {
        final int[] lengths = new int[n];
        java.util.Arrays.fill(lengths, LENGTH);
        return lengths;
    }

    /** Reserves, writes and commits keys {@code base..base+n-1} through slots from {@code first} with the fine-grained requests. */
    private static void store(final IpcConnection client, final int first, final long base, final int n) throws Exception
    {
        final long[] k = keys(base, n);
        final Answer reserved = await(client, client.send(MessageType.RESERVE, first, n, k, k));
        assertThat(reserved.statuses()).containsOnly(PageEntryStatus.RESERVED);
        for (int i = 0; i < n; i++)
        {
            fill(client.page(reserved.pages()[i]), k[i], k[i], LENGTH);
        }
        assertThat(await(client, client.sendCommit(first, n, lengths(n))).result()).isEqualTo(n);
    }

    @Test
    void theCommittedPrefixIsPinnedTheRestReservedThenCommittedWithThePinsDroppedInTwoRoundTrips() throws Exception
    {
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 32));
             IpcConnection writer = IpcConnection.connect(IpcTestSupport.socket(engine), 16);
             IpcConnection client = IpcConnection.connect(IpcTestSupport.socket(engine), 16))
        {
            store(writer, 0, 0x100, 3);
            final long[] chain = keys(0x100, 6);

            final Answer locked = await(client, client.sendLookupAndLock(2, 6, RequestDescriptor.RESERVE_ALL, chain, chain));
            assertThat(locked.status()).isZero();
            assertThat(locked.result()).as("Result Count: the pinned prefix").isEqualTo(3);
            assertThat(locked.poolPages()).as("the RESERVED entries").isEqualTo(3);
            assertThat(locked.fromPool()).isEqualTo(3);
            assertThat(locked.statuses()).containsExactly(PageEntryStatus.PINNED, PageEntryStatus.PINNED, PageEntryStatus.PINNED,
                PageEntryStatus.RESERVED, PageEntryStatus.RESERVED, PageEntryStatus.RESERVED);
            assertThat(locked.pages()).doesNotContain(-1).doesNotHaveDuplicates();
            for (int i = 0; i < 3; i++)
            {
                assertThat(holds(client.page(locked.pages()[i]), chain[i], chain[i], LENGTH)).as("pinned page %d", i).isTrue();
                fill(client.page(locked.pages()[i + 3]), chain[i + 3], chain[i + 3], LENGTH);
            }
            assertThat(await(writer, writer.send(MessageType.LOOKUP, 8, 6, chain, chain)).result()).as("reservations stay invisible")
                .isEqualTo(3);

            final Answer done = await(client, client.sendCommitAndRelease(2, 6, lengths(6), false));
            assertThat(done.status()).isZero();
            assertThat(done.result()).as("Result Count: pages committed").isEqualTo(3);
            assertThat(done.poolPages()).as("the pins dropped").isEqualTo(3);
            assertThat(done.statuses()).containsExactly(PageEntryStatus.NONE, PageEntryStatus.NONE, PageEntryStatus.NONE,
                PageEntryStatus.COMMITTED, PageEntryStatus.COMMITTED, PageEntryStatus.COMMITTED);
            assertThat(done.pages()).containsOnly(-1);

            final Answer read = await(writer, writer.send(MessageType.ACQUIRE, 8, 6, RequestDescriptor.FLAG_KEYS_IN_SLOTS));
            assertThat(read.result()).isEqualTo(6);
            for (int i = 0; i < 6; i++)
            {
                assertThat(holds(writer.page(read.pages()[i]), chain[i], chain[i], LENGTH)).as("page %d", i).isTrue();
            }
            assertThat(await(writer, writer.send(MessageType.RELEASE, 8, 6, 0)).result()).isEqualTo(6);
            assertThat(await(writer, writer.send(MessageType.EVICT, 8, 6, RequestDescriptor.FLAG_KEYS_IN_SLOTS)).result())
                .as("no pin left anywhere").isEqualTo(6);
            assertThat(engine.snapshot().get(EngineCounter.PAGES_COMMITTED)).isEqualTo(6);
        }
    }

    @Test
    void theReserveLimitStopsTheReservationsAndAPoolThatFillsMidwayNamesWhatWasDone() throws Exception
    {
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 6));
             IpcConnection client = IpcConnection.connect(IpcTestSupport.socket(engine), 16))
        {
            store(client, 0, 0x200, 2);
            final long[] chain = keys(0x200, 8);
            final Answer limited = await(client, client.sendLookupAndLock(0, 8, 1, chain, chain));
            assertThat(limited.result()).isEqualTo(2);
            assertThat(limited.poolPages()).isEqualTo(1);
            assertThat(limited.statuses()).containsExactly(PageEntryStatus.PINNED, PageEntryStatus.PINNED, PageEntryStatus.RESERVED,
                PageEntryStatus.MISS, PageEntryStatus.MISS, PageEntryStatus.MISS, PageEntryStatus.MISS, PageEntryStatus.MISS);
            assertThat(await(client, client.send(MessageType.ABORT, 0, 8, 0)).result()).isEqualTo(1);

            // Six pages: two pinned, four free; the keys after them find the pool full.
            final Answer full = await(client, client.sendLookupAndLock(0, 8, RequestDescriptor.RESERVE_ALL, null, null));
            assertThat(full.status()).isZero();
            assertThat(full.result()).isEqualTo(2);
            assertThat(full.poolPages()).isEqualTo(4);
            assertThat(full.statuses()).containsExactly(PageEntryStatus.PINNED, PageEntryStatus.PINNED, PageEntryStatus.RESERVED,
                PageEntryStatus.RESERVED, PageEntryStatus.RESERVED, PageEntryStatus.RESERVED, PageEntryStatus.POOL_FULL, PageEntryStatus.POOL_FULL);
            assertThat(full.pages()[6]).isEqualTo(-1);
            for (int i = 2; i < 6; i++)
            {
                fill(client.page(full.pages()[i]), chain[i], chain[i], LENGTH);
            }
            final Answer committed = await(client, client.sendCommitAndRelease(0, 8, lengths(8), false));
            assertThat(committed.result()).isEqualTo(4);
            assertThat(committed.poolPages()).isEqualTo(2);
            assertThat(await(client, client.send(MessageType.ACQUIRE, 0, 8, RequestDescriptor.FLAG_KEYS_IN_SLOTS)).result()).isEqualTo(6);
        }
    }

    @Test
    void hostileCombinedRequestsAreAnsweredWithTheirCodesAndTheClientGoesOn() throws Exception
    {
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 32));
             IpcConnection client = IpcConnection.connect(IpcTestSupport.socket(engine), 16))
        {
            final long[] chain = keys(0x300, 3);
            for (final int limit : new int[] {-2, 4, Integer.MIN_VALUE})
            {
                final Answer refused = await(client, client.sendLookupAndLock(0, 3, limit, chain, chain));
                assertThat(refused.status()).as("Reserve Limit %d of 3 keys", limit).isEqualTo(ErrorCode.INVALID.code());
                assertThat(refused.statuses()).isEmpty();
            }
            RequestEncoder request = client.claim(MessageType.COMMIT, 0, 1, 0, RequestDescriptor.FLAG_BACKUP, 4);
            request.commitLength(0, LENGTH);
            assertThat(await(client, client.publish()).status()).as("BACKUP on a COMMIT").isEqualTo(ErrorCode.MALFORMED.code());
            request = client.claim(MessageType.COMMIT_AND_RELEASE, 0, 1, 0, 0, 4);
            request.commitLength(0, LENGTH).reserveLimit(1);
            assertThat(await(client, client.publish()).status()).as("a COMMIT_AND_RELEASE's reserved word").isEqualTo(ErrorCode.MALFORMED.code());
            assertThat(await(client, client.send(MessageType.COMMIT_AND_RELEASE, 0, 1, RequestDescriptor.FLAG_KEYS_IN_SLOTS)).status())
                .isEqualTo(ErrorCode.MALFORMED.code());
            assertThat(await(client, client.sendLookupAndLock(0, 3, RequestDescriptor.RESERVE_ALL, null, null)).status())
                .as("KEYS_IN_SLOTS on slots no request gave keys").isEqualTo(ErrorCode.INVALID.code());

            // A slot holding a reservation cannot be locked: the engine would lose track of it.
            final Answer reserved = await(client, client.send(MessageType.RESERVE, 1, 1, new long[] {chain[1]}, new long[] {chain[1]}));
            assertThat(reserved.statuses()).containsExactly(PageEntryStatus.RESERVED);
            assertThat(await(client, client.sendLookupAndLock(0, 3, RequestDescriptor.RESERVE_ALL, chain, chain)).status())
                .isEqualTo(ErrorCode.SLOT_HELD.code());
            final int maxKeys = client.maxKeys();
            assertThat(await(client, client.sendLookupAndLock(maxKeys - 1, 2, RequestDescriptor.RESERVE_ALL, keys(1, 2), keys(1, 2))).status())
                .isEqualTo(ErrorCode.SLOT_RANGE.code());

            // The client goes on: its reservation is still its own, and commits.
            fill(client.page(reserved.pages()[0]), chain[1], chain[1], LENGTH);
            final Answer committed = await(client, client.sendCommitAndRelease(0, 3, lengths(3), false));
            assertThat(committed.status()).isZero();
            assertThat(committed.statuses()).containsExactly(PageEntryStatus.NONE, PageEntryStatus.COMMITTED, PageEntryStatus.NONE);
            assertThat(engine.snapshot().get(EngineCounter.PAGES_RESERVED)).isEqualTo(1);
        }
    }

    @Test
    void aClientOfMinorVersion2IsAnsweredUnknownTypeAndKeepsItsFineGrainedRequests() throws Exception
    {
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 32));
             IpcConnection old = IpcConnection.connect(IpcTestSupport.socket(engine), 16, new byte[0], HandshakeDescriptor.MAJOR_VERSION, 2,
                 IdleStrategy.Kind.BACKOFF))
        {
            assertThat(old.welcome().engineMinorVersion()).isEqualTo(HandshakeDescriptor.COMBINED_MINOR_VERSION);
            final long[] chain = keys(0x400, 2);
            assertThat(await(old, old.sendLookupAndLock(0, 2, RequestDescriptor.RESERVE_ALL, chain, chain)).status())
                .isEqualTo(ErrorCode.UNKNOWN_TYPE.code());
            assertThat(await(old, old.sendCommitAndRelease(0, 2, lengths(2), false)).status()).isEqualTo(ErrorCode.UNKNOWN_TYPE.code());
            store(old, 0, 0x400, 2);
            assertThat(await(old, old.send(MessageType.ACQUIRE, 0, 2, RequestDescriptor.FLAG_KEYS_IN_SLOTS)).result()).isEqualTo(2);
        }
    }

    @Test
    void anotherNamespacesPagesAreNeitherPinnedNorNamedExisting() throws Exception
    {
        final Namespace tenantA = new Namespace("m", "bf16/page16/layer-first/tp1", 0, "tenant-a");
        final Namespace tenantB = new Namespace("m", "bf16/page16/layer-first/tp1", 0, "tenant-b");
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 32));
             IpcConnection a = IpcConnection.connect(IpcTestSupport.socket(engine), 16, tenantA.rootBytes(), 1);
             IpcConnection b = IpcConnection.connect(IpcTestSupport.socket(engine), 16, tenantB.rootBytes(), 1))
        {
            store(a, 0, 0x500, 2);
            final long[] chain = keys(0x500, 2);
            final Answer other = await(b, b.sendLookupAndLock(0, 2, RequestDescriptor.RESERVE_ALL, chain, chain));
            assertThat(other.status()).isZero();
            assertThat(other.result()).as("tenant A's pages are not tenant B's prefix").isZero();
            assertThat(other.statuses()).as("BUSY, never EXISTS: that would tell B that A holds the keys")
                .containsOnly(PageEntryStatus.BUSY);
            assertThat(engine.snapshot().get(EngineCounter.NAMESPACE_MISSES)).isPositive();
            final Answer own = await(a, a.sendLookupAndLock(0, 2, RequestDescriptor.RESERVE_ALL, null, null));
            assertThat(own.result()).isEqualTo(2);
            assertThat(await(a, a.sendCommitAndRelease(0, 2, lengths(2), false)).poolPages()).isEqualTo(2);
        }
    }

    @Test
    /** A client that closes; one killed mid-write while holding what it locked is {@link IpcCrossProcessTest}'s second round. */
    void whatAClientLockedComesBackWhenItClosesAndItsReservationsNeverBecomeVisible() throws Exception
    {
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 32));
             IpcConnection other = IpcConnection.connect(IpcTestSupport.socket(engine), 16))
        {
            store(other, 0, 0x600, 2);
            final long[] chain = keys(0x600, 4);
            final IpcConnection client = IpcConnection.connect(IpcTestSupport.socket(engine), 16);
            final Answer locked = await(client, client.sendLookupAndLock(0, 4, RequestDescriptor.RESERVE_ALL, chain, chain));
            assertThat(locked.result()).isEqualTo(2);
            assertThat(locked.poolPages()).isEqualTo(2);
            fill(client.page(locked.pages()[2]), chain[2], chain[2], LENGTH);
            client.close();

            final long deadline = System.nanoTime() + 60_000_000_000L;
            while (engine.ipc().orElseThrow().clientCount() != 1)
            {
                assertThat(System.nanoTime() - deadline).as("gave up waiting for the engine to let the client go").isNegative();
                Thread.sleep(5);
            }
            // Its pins are gone (both pages can be evicted), its reservations never became visible.
            assertThat(await(other, other.send(MessageType.EVICT, 0, 2, RequestDescriptor.FLAG_KEYS_IN_SLOTS)).result()).isEqualTo(2);
            assertThat(await(other, other.send(MessageType.LOOKUP, 4, 4, chain, chain)).result()).isZero();
            final Answer again = await(other, other.send(MessageType.RESERVE, 4, 4, RequestDescriptor.FLAG_KEYS_IN_SLOTS));
            assertThat(again.statuses()).as("every key free to write again").containsOnly(PageEntryStatus.RESERVED);
        }
    }
}
