package io.kvtier.engine.ipc;

import io.kvtier.client.IpcConnection;
import io.kvtier.client.IpcException;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.client.protocol.RequestDescriptor;
import io.kvtier.client.protocol.ResponseDecoder;
import io.kvtier.engine.Engine;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Once warm, the IPC request path allocates nothing: not the client's thread ({@code IpcConnection}),
 * not the {@code kvtier-ipc-seal} thread that seals commits, not the engine thread that reads,
 * validates and answers, and, for the device operations, not the {@code kvtier-device} thread that
 * plans and runs the copies. Measured as {@code EngineAllocationTest} measures the in-process path:
 * per-thread allocated bytes over windows of requests, the first window with none passing.
 */
class IpcAllocationTest
{
    private static final int ROUNDS = 2_000;
    private static final int MAX_WINDOWS = 40;
    private static final int PREFIX = 4;

    @TempDir
    Path directory;

    private com.sun.management.ThreadMXBean threads;

    @BeforeEach
    void enableCounters()
    {
        assumeTrue(ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean, "no per-thread allocation counter");
        threads = (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isThreadAllocatedMemorySupported(), "no per-thread allocation counter");
        threads.setThreadAllocatedMemoryEnabled(true);
    }

    @Test
    void theRequestPathAllocatesNothingOnAnyThreadOnceWarm() throws Exception
    {
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 64));
             IpcConnection client = IpcConnection.connect(IpcTestSupport.socket(engine), 16))
        {
            final Workload workload = new Workload(client);
            workload.setUp();
            assertAllocatesNothing(List.of("kvtier-ipc-seal", "kvtier-pipeline"), workload::round);
            assertThat(workload.committed).as("the rounds did their work").isGreaterThanOrEqualTo(ROUNDS);
        }
    }

    /** Protocol 1.3: a LOOKUP_AND_LOCK and a COMMIT_AND_RELEASE per round, the sealer and the engine thread included. */
    @Test
    void theCombinedRequestsAllocateNothingOnAnyThreadOnceWarm() throws Exception
    {
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 64));
             IpcConnection client = IpcConnection.connect(IpcTestSupport.socket(engine), 16))
        {
            final Workload prefix = new Workload(client);
            prefix.setUp();
            final CombinedWorkload workload = new CombinedWorkload(client);
            assertAllocatesNothing(List.of("kvtier-ipc-seal", "kvtier-pipeline"), workload::round);
            assertThat(workload.committed).as("the rounds did their work").isGreaterThanOrEqualTo(ROUNDS);
        }
    }

    @Test
    void theDeviceOperationsAllocateNothingOnAnyThreadOnceWarm() throws Exception
    {
        try (Engine engine = IpcTestSupport.start(IpcTestSupport.settings(directory, 64));
             IpcConnection client = IpcConnection.connect(IpcTestSupport.socket(engine), 16);
             Arena arena = Arena.ofShared())
        {
            final DeviceWorkload workload = new DeviceWorkload(client, directory.resolve("kv"), arena);
            workload.setUp();
            assertAllocatesNothing(List.of("kvtier-device", "kvtier-ipc-seal", "kvtier-pipeline"), workload::round);
            assertThat(workload.copied).as("the rounds did their work").isGreaterThanOrEqualTo(2L * ROUNDS);
        }
    }

    private interface Round
    {
        void run() throws Exception;
    }

    /** Per-thread allocated bytes over windows of rounds, the client's thread and the named engine threads; the first clean window passes. */
    private void assertAllocatesNothing(final List<String> threadNames, final Round round) throws Exception
    {
        final long[] serverThreads = Thread.getAllStackTraces().keySet().stream()
            .filter(t -> threadNames.contains(t.getName()))
            .sorted(java.util.Comparator.comparing(t -> threadNames.indexOf(t.getName())))
            .mapToLong(Thread::threadId).toArray();
        assertThat(serverThreads).hasSize(threadNames.size());
        long least = Long.MAX_VALUE;
        String perThread = "";
        for (int window = 0; window < MAX_WINDOWS && least > 0; window++)
        {
            final long[] serverBefore = threads.getThreadAllocatedBytes(serverThreads);
            final long clientBefore = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < ROUNDS; i++)
            {
                round.run();
            }
            final long clientBytes = threads.getCurrentThreadAllocatedBytes() - clientBefore;
            final long[] serverAfter = threads.getThreadAllocatedBytes(serverThreads);
            long bytes = clientBytes;
            final long[] server = new long[serverThreads.length];
            for (int t = 0; t < serverThreads.length; t++)
            {
                server[t] = serverAfter[t] - serverBefore[t];
                bytes += server[t];
            }
            if (bytes < least)
            {
                least = bytes;
                perThread = "client " + clientBytes + ", then " + String.join(" and ", threadNames) + " " + Arrays.toString(server);
            }
        }
        assertThat(least).as("bytes allocated over the cleanest window of %d rounds (%s)", ROUNDS, perThread).isZero();
    }

    /**
     * Save a block into a fresh reserved page (a DEVICE_SAVE, committed through the sealer), acquire it,
     * load it into another block, release and evict it: the device thread's whole path.
     */
    private static final class DeviceWorkload
    {
        private static final int BLOCKS = 8;
        private final IpcConnection client;
        private final Path file;
        private final Arena arena;
        private final long[] fresh = new long[1];
        private final int[] block = new int[1];
        private final int[] tokens = {4};
        private long next = 0x9000;
        private int layout;
        long copied;

        DeviceWorkload(final IpcConnection client, final Path file, final Arena arena)
        {
            this.client = client;
            this.file = file;
            this.arena = arena;
        }

        void setUp() throws Exception
        {
            try (java.nio.channels.FileChannel channel = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.CREATE_NEW,
                java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE))
            {
                channel.write(java.nio.ByteBuffer.allocate(1), 768L * BLOCKS - 1);
                channel.map(java.nio.channels.FileChannel.MapMode.READ_WRITE, 0, 768L * BLOCKS, arena).fill((byte)0x3C);
            }
            final ResponseDecoder r = client.awaitResponse(client.sendRegisterKv(io.kvtier.client.KvBufferRegistration.hostFiles(
                io.kvtier.client.protocol.DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS, new int[] {3, 2, 4, 2, 8, 2}, BLOCKS,
                new Path[] {file}, new long[] {0})));
            layout = r.resultCount();
            assertThat(r.status()).isZero();
            client.releaseResponse();
        }

        void round() throws IpcException
        {
            fresh[0] = next++;
            ResponseDecoder r = client.awaitResponse(client.send(MessageType.RESERVE, 0, 1, fresh, fresh));
            expect(r.entryStatus(0), PageEntryStatus.RESERVED);
            block[0] = (int)(fresh[0] % BLOCKS);
            r = client.awaitResponse(client.sendDeviceCopy(MessageType.DEVICE_SAVE, layout, 0, 1, block, tokens));
            expect(r.entryStatus(0), PageEntryStatus.COMMITTED);
            expect(client.awaitResponse(client.send(MessageType.ACQUIRE, 1, 1, fresh, fresh)).resultCount(), 1);
            block[0] = (int)((fresh[0] + 3) % BLOCKS);
            r = client.awaitResponse(client.sendDeviceCopy(MessageType.DEVICE_LOAD, layout, 1, 1, block, tokens));
            expect(r.entryStatus(0), PageEntryStatus.COPIED);
            copied += 2;
            expect(client.awaitResponse(client.send(MessageType.RELEASE, 1, 1, 0)).resultCount(), 1);
            expect(client.awaitResponse(client.send(MessageType.EVICT, 0, 1, RequestDescriptor.FLAG_KEYS_IN_SLOTS)).resultCount(), 1);
        }

        private void expect(final int actual, final int expected)
        {
            if (actual != expected)
            {
                throw new AssertionError("expected " + expected + " but was " + actual);
            }
            client.releaseResponse();
        }
    }

    /** Lookup, acquire and release of a committed prefix; reserve, write, commit and evict of a fresh page. */
    private static final class Workload
    {
        private final IpcConnection client;
        private final long[] prefix = IpcTestSupport.keys(0x7000, PREFIX);
        private final long[] fresh = new long[1];
        private final int[] length = {64};
        private long next = 0x8000;
        long committed;

        Workload(final IpcConnection client)
        {
            this.client = client;
        }

        void setUp() throws IpcException
        {
            ResponseDecoder r = client.awaitResponse(client.send(MessageType.RESERVE, 0, PREFIX, prefix, prefix));
            final int[] pages = new int[PREFIX];
            for (int i = 0; i < PREFIX; i++)
            {
                pages[i] = r.entryPageId(i);
            }
            client.releaseResponse();
            final int[] lengths = new int[PREFIX];
            Arrays.fill(lengths, 64);
            for (int i = 0; i < PREFIX; i++)
            {
                IpcTestSupport.fill(client.page(pages[i]), prefix[i], prefix[i], 64);
            }
            r = client.awaitResponse(client.sendCommit(0, PREFIX, lengths));
            assertThat(r.resultCount()).isEqualTo(PREFIX);
            client.releaseResponse();
        }

        void round() throws IpcException
        {
            expect(client.awaitResponse(client.send(MessageType.LOOKUP, 0, PREFIX, RequestDescriptor.FLAG_KEYS_IN_SLOTS)).poolPages(), PREFIX);
            expect(client.awaitResponse(client.send(MessageType.ACQUIRE, 0, PREFIX, RequestDescriptor.FLAG_KEYS_IN_SLOTS)).resultCount(), PREFIX);
            expect(client.awaitResponse(client.send(MessageType.RELEASE, 0, PREFIX, 0)).resultCount(), PREFIX);
            fresh[0] = next++;
            ResponseDecoder r = client.awaitResponse(client.send(MessageType.RESERVE, 8, 1, fresh, fresh));
            expect(r.entryStatus(0), PageEntryStatus.RESERVED);
            final int page = r.entryPageId(0);
            client.releaseResponse();
            final long at = client.pageOffset(page);
            for (int b = 0; b < 64; b += 8)
            {
                client.pool().set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, at + b, fresh[0] + b);
            }
            r = client.awaitResponse(client.sendCommit(8, 1, length));
            expect(r.resultCount(), 1);
            committed++;
            expect(client.awaitResponse(client.send(MessageType.EVICT, 8, 1, RequestDescriptor.FLAG_KEYS_IN_SLOTS)).resultCount(), 1);
        }

        private void expect(final int actual, final int expected)
        {
            if (actual != expected)
            {
                throw new AssertionError("expected " + expected + " but was " + actual);
            }
            client.releaseResponse();
        }
    }

    /**
     * The committed prefix and one fresh key after it locked in one request (the prefix pinned, the fresh
     * key reserved), the fresh page written, then committed with the pins dropped in another; the fresh
     * page evicted so that the pool never fills.
     */
    private static final class CombinedWorkload
    {
        private final IpcConnection client;
        private final long[] chain = new long[PREFIX + 1];
        private final int[] lengths = new int[PREFIX + 1];
        private long next = 0xA000;
        long committed;

        CombinedWorkload(final IpcConnection client)
        {
            this.client = client;
            System.arraycopy(IpcTestSupport.keys(0x7000, PREFIX), 0, chain, 0, PREFIX);
            Arrays.fill(lengths, 64);
        }

        void round() throws IpcException
        {
            chain[PREFIX] = next++;
            ResponseDecoder r = client.awaitResponse(client.sendLookupAndLock(0, PREFIX + 1, RequestDescriptor.RESERVE_ALL, chain, chain));
            if (r.resultCount() != PREFIX || r.reservedPages() != 1 || r.entryStatus(PREFIX) != PageEntryStatus.RESERVED)
            {
                throw new AssertionError("locked " + r.resultCount() + " and reserved " + r.reservedPages());
            }
            final long at = client.pageOffset(r.entryPageId(PREFIX));
            client.releaseResponse();
            for (int b = 0; b < 64; b += 8)
            {
                client.pool().set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, at + b, chain[PREFIX] + b);
            }
            r = client.awaitResponse(client.sendCommitAndRelease(0, PREFIX + 1, lengths, false));
            if (r.resultCount() != 1 || r.pinsReleased() != PREFIX)
            {
                throw new AssertionError("committed " + r.resultCount() + " and released " + r.pinsReleased());
            }
            client.releaseResponse();
            committed++;
            r = client.awaitResponse(client.send(MessageType.EVICT, PREFIX, 1, RequestDescriptor.FLAG_KEYS_IN_SLOTS));
            if (r.resultCount() != 1)
            {
                throw new AssertionError("evicted " + r.resultCount());
            }
            client.releaseResponse();
        }
    }
}
