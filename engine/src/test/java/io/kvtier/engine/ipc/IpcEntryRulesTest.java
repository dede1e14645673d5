package io.kvtier.engine.ipc;

import io.kvtier.client.IpcConnection;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.client.protocol.RequestDescriptor;
import io.kvtier.client.protocol.ResponseDecoder;
import io.kvtier.engine.Engine;
import io.kvtier.engine.config.EngineConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.kvtier.engine.ipc.IpcTestSupport.keys;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/ipc-protocol.md section 4, "Entries": every operation writes an entry for every slot of its
 * range, from what the slot holds after the request and what the request did for it; nothing an
 * earlier request said is read back; an entry that names no page carries no generation; Result Count
 * is what the document says for each operation.
 */
class IpcEntryRulesTest
{
    private static final int N = 3;

    @TempDir
    Path directory;

    /** A response's entries, copied out. */
    private record Entries(int status, int result, int fromPool, int fromL3, int[] pages, int[] generations, int[] statuses)
    {
    }

    private static Entries call(final IpcConnection client, final long requestId) throws Exception
    {
        final ResponseDecoder r = client.awaitResponse(requestId);
        final int n = r.entryCount();
        final int[] pages = new int[n];
        final int[] generations = new int[n];
        final int[] statuses = new int[n];
        for (int i = 0; i < n; i++)
        {
            pages[i] = r.entryPageId(i);
            generations[i] = r.entryGeneration(i);
            statuses[i] = r.entryStatus(i);
        }
        final Entries entries = new Entries(r.status(), r.resultCount(), r.fromPool(), r.fromL3(), pages, generations, statuses);
        client.releaseResponse();
        return entries;
    }

    private static Entries keyed(final IpcConnection client, final int type, final int first, final long base) throws Exception
    {
        return call(client, client.send(type, first, N, keys(base, N), keys(base, N)));
    }

    private static Entries slots(final IpcConnection client, final int type, final int first) throws Exception
    {
        return call(client, client.send(type, first, N, 0));
    }

    private static void assertNothingHeld(final Entries entries, final int status)
    {
        assertThat(entries.statuses()).containsOnly(status);
        assertThat(entries.pages()).containsOnly(-1);
        assertThat(entries.generations()).as("an entry naming no page carries no generation").containsOnly(0);
    }

    @Test
    void everyOperationAnswersForEverySlotAndNoOutcomeIsReadBack() throws Exception
    {
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 32));
             IpcConnection client = IpcConnection.connect(IpcTestSupport.socket(engine), 16))
        {
            final Entries reserved = keyed(client, MessageType.RESERVE, 0, 0x100);
            assertThat(reserved.statuses()).containsOnly(PageEntryStatus.RESERVED);
            assertThat(reserved.result()).isEqualTo(N);
            final Entries again = call(client, client.send(MessageType.RESERVE, 0, N, RequestDescriptor.FLAG_KEYS_IN_SLOTS));
            assertThat(again.statuses()).as("the slots' own reservations, kept").containsOnly(PageEntryStatus.RESERVED);
            assertThat(again.pages()).containsExactly(reserved.pages());
            assertThat(again.result()).as("RESERVE's Result Count: the entries RESERVED").isEqualTo(N);

            final Entries committed = call(client, client.sendCommit(0, N, new int[] {64, 64, 64}));
            assertNothingHeld(committed, PageEntryStatus.COMMITTED);
            assertThat(committed.result()).isEqualTo(N);
            assertNothingHeld(call(client, client.sendCommit(0, N, new int[] {64, 64, 64})), PageEntryStatus.NONE);
            final Entries aborted = slots(client, MessageType.ABORT, 0);
            assertNothingHeld(aborted, PageEntryStatus.NONE);
            assertThat(aborted.result()).isZero();

            // Outcomes of RESERVE (EXISTS) are not read back by a BACKUP, a PREFETCH or an EVICT of the same slots.
            assertNothingHeld(call(client, client.send(MessageType.RESERVE, 0, N, RequestDescriptor.FLAG_KEYS_IN_SLOTS)), PageEntryStatus.EXISTS);
            assertNothingHeld(call(client, client.send(MessageType.BACKUP, 0, N, RequestDescriptor.FLAG_KEYS_IN_SLOTS)), PageEntryStatus.NONE);
            assertNothingHeld(call(client, client.send(MessageType.PREFETCH, 0, N, RequestDescriptor.FLAG_KEYS_IN_SLOTS)), PageEntryStatus.NONE);

            // ACQUIRE: the prefix pinned, every slot after it a MISS naming no page.
            final Entries acquired = call(client, client.send(MessageType.ACQUIRE, 4, 4,
                new long[] {0x100, 0x101, 0x999, 0x102}, new long[] {0x100, 0x101, 0x999, 0x102}));
            assertThat(acquired.result()).isEqualTo(2);
            assertThat(acquired.statuses()).containsExactly(PageEntryStatus.PINNED, PageEntryStatus.PINNED, PageEntryStatus.MISS,
                PageEntryStatus.MISS);
            assertThat(acquired.pages()[3]).as("the key after the gap is in the pool, but past the prefix").isEqualTo(-1);
            assertThat(acquired.generations()[2]).isZero();
            assertThat(acquired.fromPool()).isEqualTo(2);

            // Slots that hold pins report them, as PINNED, whatever the operation.
            final Entries lookedUp = call(client, client.send(MessageType.LOOKUP, 4, 2, RequestDescriptor.FLAG_KEYS_IN_SLOTS));
            assertThat(lookedUp.statuses()).containsOnly(PageEntryStatus.PINNED);
            assertThat(lookedUp.pages()).containsExactly(acquired.pages()[0], acquired.pages()[1]);
            final Entries reacquired = call(client, client.send(MessageType.ACQUIRE, 4, 2, RequestDescriptor.FLAG_KEYS_IN_SLOTS));
            assertThat(reacquired.statuses()).containsOnly(PageEntryStatus.PINNED);
            assertThat(reacquired.fromPool()).isEqualTo(2);
            assertThat(reacquired.fromL3()).isZero();
            final Entries released = call(client, client.send(MessageType.RELEASE, 4, 4, 0));
            assertNothingHeld(released, PageEntryStatus.NONE);
            assertThat(released.result()).isEqualTo(2);
        }
    }

    @Test
    void keysInSlotsNeedsSlotsARequestGaveKeysAndADeviceLoadReportsAReservationAsHeld() throws Exception
    {
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 32));
             IpcConnection client = IpcConnection.connect(IpcTestSupport.socket(engine), 16))
        {
            // Slots 8.. never had a key: there is nothing to reserve under (the engine would have used the all-zero key).
            final Entries refused = call(client, client.send(MessageType.RESERVE, 8, 2, RequestDescriptor.FLAG_KEYS_IN_SLOTS));
            assertThat(refused.status()).isEqualTo(ErrorCode.INVALID.code());
            keyed(client, MessageType.LOOKUP, 8, 0x900);
            final Entries reserved = call(client, client.send(MessageType.RESERVE, 8, N, RequestDescriptor.FLAG_KEYS_IN_SLOTS));
            assertThat(reserved.statuses()).containsOnly(PageEntryStatus.RESERVED);

            final java.nio.file.Path file = directory.resolve("kv");
            java.nio.file.Files.write(file, new byte[256 * 4]);
            final int layout = IpcTestSupport.await(client, client.sendRegisterKv(io.kvtier.client.KvBufferRegistration.hostFiles(
                io.kvtier.client.protocol.DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS, new int[] {1, 2, 4, 2, 8, 2}, 4,
                new java.nio.file.Path[] {file}, new long[] {0}))).resultCount();
            final Entries loaded = call(client, client.sendDeviceCopy(MessageType.DEVICE_LOAD, layout, 8, N, new int[] {0, 1, 2}, new int[] {4, 4, 4}));
            assertThat(loaded.statuses()).as("slots that hold reservations, not pins: nothing copied, still reserved")
                .containsOnly(PageEntryStatus.RESERVED);
            assertThat(loaded.pages()).containsExactly(reserved.pages());
            assertThat(loaded.generations()).containsExactly(reserved.generations());
            assertThat(loaded.result()).isZero();
        }
    }

    @Test
    void aPageAPrefetchLoadedCountsFromL3ForTheFirstRequestThatPinsItOnly() throws Exception
    {
        final Map<String, String> settings = IpcTestSupport.settings(directory, 32);
        settings.put("tier.disk.type", "posix");
        settings.put("tier.disk.dir", directory.resolve("l3").toString());
        settings.put(EngineConfig.POLICY_PREFETCH, "off");
        try (Engine engine = IpcTestSupport.start(settings);
             IpcConnection first = IpcConnection.connect(IpcTestSupport.socket(engine), 16);
             IpcConnection second = IpcConnection.connect(IpcTestSupport.socket(engine), 16))
        {
            assertThat(keyed(first, MessageType.RESERVE, 0, 0x500).statuses()).containsOnly(PageEntryStatus.RESERVED);
            assertThat(call(first, first.sendCommit(0, N, new int[] {64, 64, 64})).result()).isEqualTo(N);
            keyed(first, MessageType.BACKUP, 0, 0x500);
            assertThat(call(first, first.send(MessageType.FLUSH, 0, 0, 0)).status()).isEqualTo(ErrorCode.OK.code());
            assertThat(keyed(first, MessageType.EVICT, 0, 0x500).result()).isEqualTo(N);

            final Entries prefetched = keyed(first, MessageType.PREFETCH, 0, 0x500);
            assertThat(prefetched.result()).as("PREFETCH's Result Count: loads it started").isEqualTo(N);
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            int inPool = 0;
            while (inPool < N && System.nanoTime() - deadline < 0)
            {
                inPool = IpcTestSupport.await(first, first.send(MessageType.LOOKUP, 0, N, keys(0x500, N), keys(0x500, N))).poolPages();
            }
            assertThat(inPool).as("the prefetch landed").isEqualTo(N);

            final Entries firstUse = keyed(second, MessageType.ACQUIRE, 0, 0x500);
            assertThat(firstUse.statuses()).containsOnly(PageEntryStatus.PINNED_FROM_L3);
            assertThat(firstUse.fromL3()).isEqualTo(N);
            assertThat(firstUse.fromPool()).isZero();
            final Entries again = call(second, second.send(MessageType.ACQUIRE, 0, N, RequestDescriptor.FLAG_KEYS_IN_SLOTS));
            assertThat(again.statuses()).as("slots that already held these pins: nothing came from L3 for this request")
                .containsOnly(PageEntryStatus.PINNED);
            assertThat(again.fromL3()).isZero();
            assertThat(again.fromPool()).isEqualTo(N);
            final Entries laterUse = keyed(first, MessageType.ACQUIRE, 0, 0x500);
            assertThat(laterUse.statuses()).as("already used once: found in the pool").containsOnly(PageEntryStatus.PINNED);
            assertThat(laterUse.fromPool()).isEqualTo(N);
            assertThat(laterUse.fromL3()).isZero();
        }
    }
}
