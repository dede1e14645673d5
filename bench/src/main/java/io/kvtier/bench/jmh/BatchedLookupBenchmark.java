package io.kvtier.bench.jmh;

import io.kvtier.client.PageKeyChain;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.RequestDecoder;
import io.kvtier.client.protocol.RequestDescriptor;
import io.kvtier.client.protocol.RequestEncoder;
import io.kvtier.client.protocol.RequestValidator;
import io.kvtier.client.protocol.ResponseDescriptor;
import io.kvtier.client.protocol.ResponseEncoder;
import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.core.Agent;
import io.kvtier.engine.core.ClientPort;
import io.kvtier.engine.core.InternalOp;
import io.kvtier.engine.core.Pipeline;
import io.kvtier.engine.core.Sleeper;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The engine-side cost of one batched LOOKUP of {@value #KEYS} keys, without a client's wait (issue 21,
 * section 2): what the engine thread does with a request record in a client's ring, in the order the IPC
 * adapter does it (the copy out of the ring, {@link RequestValidator}, the keys into the client's chain),
 * then the lookup itself through {@link Pipeline#handleOnEngineThread} (the engine's checks, the index and
 * the pool's page metadata for every key, as for an IPC client), and the response with an entry per key
 * written the way the IPC client's port writes it. The engine thread runs {@value #BATCHES} of them in
 * one duty cycle of its own, so the hand-over between the benchmark's thread and the engine thread is
 * one in {@value #BATCHES} batches; every batch checks that it found the prefix it should.
 *
 * <p>Beside it, in the same run: the parts alone in the benchmark's thread (the request's decode, the
 * response's encode, the client's encode of its keys), and the floor for a hash lookup, a plain
 * open-addressing probe of the same keys in a {@code long[]} table. Scores are per batch of
 * {@value #KEYS} keys; divide by {@value #KEYS} for a key.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx1g"})
public class BatchedLookupBenchmark
{
    static final int KEYS = 1024;
    static final int BATCHES = 16;
    private static final int PAGE_SIZE = 4096;
    private static final java.lang.management.ThreadMXBean CPU = java.lang.management.ManagementFactory.getThreadMXBean();

    /** {@code hits}: every key in the pool; {@code half}: key 512 was never written, so the prefix ends there. */
    @Param({"hits", "half"})
    String prefix;

    private Engine engine;
    private Session writer;
    private Pipeline pipeline;
    private Port port;
    private EngineDuty duty;
    private Arena arena;
    /** The client's request ring, holding one LOOKUP record of all the keys. */
    private MemorySegment ring;
    private final RequestDecoder decoder = new RequestDecoder();
    private final RequestEncoder encoder = new RequestEncoder();
    private final ResponseEncoder responseEncoder = new ResponseEncoder();
    private MemorySegment requestCopy;
    private MemorySegment responses;
    private int recordLength;
    private int expectedPrefix;
    private PageKeyChain keys;
    private long[] table;
    private long tableMask;
    private long requestId;

    @Setup
    public void setUp() throws Exception
    {
        final java.util.Map<String, String> settings = BenchEngines.poolOnly("batched-lookup", "32MiB", PAGE_SIZE);
        // The duty below is polled in every cycle: a spinning engine thread takes the hand-over at once.
        settings.put(EngineConfig.ENGINE_IDLE_STRATEGY, "spin");
        settings.put(EngineConfig.SESSION_MAX_KEYS, String.valueOf(KEYS));
        engine = BenchEngines.start(settings);
        writer = engine.openSession();
        keys = new PageKeyChain(KEYS);
        for (int i = 0; i < KEYS; i++)
        {
            final long high = 0x6261746368000000L | i;
            final long low = (i + 1) * 0x9E3779B97F4A7C15L;
            keys.add(high, low);
            writer.keys().add(high, low);
        }
        if (BenchEngines.writeAll(writer, KEYS, PAGE_SIZE) != KEYS)
        {
            throw new IllegalStateException("setup could not commit " + KEYS + " pages");
        }
        expectedPrefix = KEYS;
        if (prefix.equals("half"))
        {
            expectedPrefix = KEYS / 2;
            keys.set(KEYS / 2, 0x6D69737300000000L, 0x6D697373L); // never written
        }

        arena = Arena.ofShared();
        recordLength = (int)RequestDescriptor.expectedLength(MessageType.LOOKUP, KEYS, 0);
        ring = arena.allocate(recordLength, 64);
        encoder.wrap(ring, 0).header(recordLength, MessageType.LOOKUP, 0, 0, KEYS, 0, 0).keys(keys, 0, KEYS);
        requestCopy = arena.allocate(recordLength, 8);
        responses = arena.allocate(ResponseDescriptor.length(KEYS), 64);

        table = new long[2 * 4 * KEYS];
        tableMask = 4 * KEYS - 1;
        for (int i = 0; i < KEYS; i++)
        {
            if (i != KEYS / 2 || expectedPrefix == KEYS)
            {
                insert(keys.high(i), keys.low(i));
            }
        }

        pipeline = engine.pipeline();
        port = new Port();
        duty = new EngineDuty();
        pipeline.attach(duty, new NoSleeper());
        if (!pipeline.publish(port, InternalOp.OPEN, 0, 0))
        {
            throw new IllegalStateException("the engine refused to open the benchmark's client");
        }
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (port.completions == 0)
        {
            if (System.nanoTime() - deadline > 0)
            {
                throw new IllegalStateException("the engine did not open the benchmark's client in 10 s");
            }
            Thread.onSpinWait();
        }
        if (port.status != ErrorCode.OK)
        {
            throw new IllegalStateException("the engine opened the benchmark's client with " + port.status);
        }
    }

    @TearDown
    public void tearDown()
    {
        pipeline.attach(null, new NoSleeper());
        writer.close();
        engine.close();
        arena.close();
    }

    /**
     * @return the prefix found by the last of {@value #BATCHES} batched LOOKUPs, each the engine thread's whole work
     *         on a request record: copy, validate, keys into the chain, the lookup, the response
     */
    @Setup(Level.Iteration)
    public void resetCpu()
    {
        if (duty != null)
        {
            duty.insideNanos = 0;
            duty.insideBatches = 0;
        }
    }

    /**
     * Prints the engine thread's CPU time per batch over the iteration, beside {@link #engineLookup}'s time: on a
     * host shared with other work the wall-clock figure counts the time either thread waited for a core, this one
     * does not.
     */
    @TearDown(Level.Iteration)
    public void printCpu()
    {
        if (duty != null && duty.insideBatches > 0)
        {
            System.out.printf("(engine thread CPU %.0f ns a batch)%n", (double)duty.insideNanos / duty.insideBatches);
        }
    }

    @Benchmark
    @OperationsPerInvocation(BATCHES)
    public int engineLookup()
    {
        final long target = duty.requested + 1;
        duty.requested = target;
        while (duty.done != target)
        {
            // Yields rather than spins: on a host of two cores this thread may share one with the engine thread.
            Thread.yield();
        }
        if (duty.failure != null)
        {
            throw new IllegalStateException(duty.failure);
        }
        return port.resultCount;
    }

    /** @return the Count read back after the request's copy, validation and keys into the chain, in this thread */
    @Benchmark
    public int decode()
    {
        return takeRequest();
    }

    /** @return the response's Length after its header and an entry per key are written, in this thread */
    @Benchmark
    public int encode()
    {
        return writeResponse(ErrorCode.OK, expectedPrefix, expectedPrefix);
    }

    /** @return the request's Length after the client's header and keys are written into its ring, in this thread */
    @Benchmark
    public int clientEncode()
    {
        encoder.wrap(ring, 0).header(recordLength, MessageType.LOOKUP, ++requestId, 0, KEYS, 0, 0).keys(keys, 0, KEYS);
        return recordLength;
    }

    /** @return the prefix found by probing the same keys in a plain open-addressing {@code long[]} table: the floor for a hash lookup */
    @Benchmark
    public int baselineLongTable()
    {
        int found = 0;
        while (found < KEYS && contains(keys.high(found), keys.low(found)))
        {
            found++;
        }
        if (found != expectedPrefix)
        {
            throw new IllegalStateException("the long[] table found a prefix of " + found + ", not " + expectedPrefix);
        }
        return found;
    }

    private static long home(final long high, final long low)
    {
        long z = high ^ low;
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    private void insert(final long high, final long low)
    {
        long slot = home(high, low) & tableMask;
        while (table[(int)(2 * slot)] != 0 || table[(int)(2 * slot + 1)] != 0)
        {
            slot = (slot + 1) & tableMask;
        }
        table[(int)(2 * slot)] = high;
        table[(int)(2 * slot + 1)] = low;
    }

    private boolean contains(final long high, final long low)
    {
        final long[] t = table;
        long slot = home(high, low) & tableMask;
        while (true)
        {
            final long h = t[(int)(2 * slot)];
            final long l = t[(int)(2 * slot + 1)];
            if (h == high && l == low)
            {
                return true;
            }
            if (h == 0 && l == 0)
            {
                return false;
            }
            slot = (slot + 1) & tableMask;
        }
    }

    /** What the IPC adapter does with a request record before the engine sees it. */
    private int takeRequest()
    {
        // The client's next request id, as its encoder writes it.
        ring.set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, RequestDescriptor.REQUEST_ID_OFFSET, ++requestId);
        MemorySegment.copy(ring, 0, requestCopy, 0, recordLength);
        final RequestDecoder request = decoder.wrap(requestCopy, 0, recordLength);
        final ErrorCode code = RequestValidator.validate(request, requestId - 1, KEYS, 1, recordLength);
        if (code != ErrorCode.OK)
        {
            throw new IllegalStateException("the benchmark's request was refused: " + code);
        }
        final int count = request.count();
        request.keysInto(port.keys, request.firstSlot(), count);
        return count;
    }

    private int writeResponse(final ErrorCode status, final int resultCount, final int l2Pages)
    {
        final int length = ResponseDescriptor.length(KEYS);
        responseEncoder.wrap(responses, 0).header(length, MessageType.LOOKUP, requestId, status.code(), resultCount, 0, KEYS, l2Pages, 0, 0, 0)
            .entries(0, KEYS, port.pageIds, port.generations, port.statuses);
        return length;
    }

    /** Runs the batches on the engine thread when the benchmark's thread asks for them. */
    private final class EngineDuty implements Agent
    {
        volatile long requested;
        volatile long done;
        volatile String failure;
        volatile long insideNanos;
        volatile long insideBatches;

        @Override
        public int doWork()
        {
            final long want = requested;
            if (want == done)
            {
                return 0;
            }
            final long t0 = CPU.getCurrentThreadCpuTime();
            for (int b = 0; b < BATCHES && failure == null; b++)
            {
                final int count = takeRequest();
                port.completions = 0;
                if (!pipeline.handleOnEngineThread(port, MessageType.LOOKUP, 0, count))
                {
                    failure = "the engine stopped";
                }
                else if (port.completions != 1 || port.status != ErrorCode.OK || port.resultCount != expectedPrefix || port.l2Pages != expectedPrefix)
                {
                    failure = "a batched lookup answered " + port.status + " with a prefix of " + port.resultCount + " (" + port.l2Pages
                        + " in the pool) after " + port.completions + " completions, not " + expectedPrefix;
                }
            }
            insideNanos += CPU.getCurrentThreadCpuTime() - t0;
            insideBatches += BATCHES;
            done = want;
            return 1;
        }

        @Override
        public String roleName()
        {
            return "batched-lookup-benchmark";
        }
    }

    /** The benchmark's client as the engine sees it: its slots, and a response written as an IPC client's port writes it. */
    private final class Port implements ClientPort
    {
        final PageKeyChain keys = new PageKeyChain(KEYS);
        final int[] lengths = new int[KEYS];
        final byte[] statuses = new byte[KEYS];
        final int[] pageIds = new int[KEYS];
        final int[] generations = new int[KEYS];
        volatile int completions;
        ErrorCode status;
        int resultCount;
        int l2Pages;
        private int id;
        private boolean expired;

        Port()
        {
            for (int i = 0; i < KEYS; i++)
            {
                keys.add(0, 0);
            }
            java.util.Arrays.fill(pageIds, -1);
        }

        @Override
        public int clientId()
        {
            return id;
        }

        @Override
        public void clientId(final int clientId)
        {
            id = clientId;
        }

        @Override
        public boolean isExpired()
        {
            return expired;
        }

        @Override
        public void expired()
        {
            expired = true;
        }

        @Override
        public PageKeyChain keys()
        {
            return keys;
        }

        @Override
        public int[] lengths()
        {
            return lengths;
        }

        @Override
        public byte[] statuses()
        {
            return statuses;
        }

        @Override
        public int[] pageIds()
        {
            return pageIds;
        }

        @Override
        public int[] generations()
        {
            return generations;
        }

        @Override
        public void complete(final ErrorCode outcome, final int result, final int pool, final int l3, final int fromPool, final int fromL3)
        {
            status = outcome;
            resultCount = result;
            l2Pages = pool;
            if (outcome == ErrorCode.OK && duty != null && duty.requested != 0)
            {
                writeResponse(outcome, result, pool);
            }
            completions = completions + 1;
        }
    }

    /** The engine thread spins (engine.idle-strategy = spin): it never sleeps, so nothing wakes it. */
    private static final class NoSleeper implements Sleeper
    {
        @Override
        public void sleep(final long maxNanos, final BooleanSupplier workAfterAnnouncing)
        {
            Thread.onSpinWait();
        }

        @Override
        public void wake()
        {
        }
    }
}
