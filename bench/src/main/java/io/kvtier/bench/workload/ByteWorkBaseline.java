package io.kvtier.bench.workload;

import io.kvtier.client.PageKeyChain;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.zip.CRC32C;

/**
 * The demo's same-run baseline: the page byte work of a workload run with no engine at all, so that a
 * demo can say what fraction of it the engine reaches ({@code throughput_vs_baseline}).
 *
 * <p>It replays its own instance of the same {@link ChatWorkload} shape and seed on as many threads as
 * the demo had clients, and for each request does what a demo client does to page bytes and nothing
 * else: computes the prompt's page keys ({@link PageKeyChain}, as the clients do); walks them in order
 * through a table of the pages it holds and reads back every page of the leading run it holds (the
 * length in the trailer, then every byte against the key's pattern, {@link PagePattern#matches}), as a
 * client checks the prefix it acquired; then, for the rest of the prompt, takes each key no thread has
 * taken yet, writes its pattern ({@link PagePattern#fill}), computes the payload's CRC32C and writes the
 * trailer (key, length, CRC), as a committing client seals a page, and only then makes it visible to
 * the others' reads. Pages live in frames of the pool's frame size (payload, then a 4 KiB trailer block)
 * in a file in the pool's directory ({@code /dev/shm}: the same kind of memory as the pool), mapped
 * shared; the file is unlinked once mapped, and every page of it is touched before the clock starts.
 *
 * <p>What it leaves out is everything an engine adds: round trips, pins and leases, eviction (its table
 * never evicts: it has a frame for every page the engine's run wrote and a quarter more, and a page it
 * has no frame for is counted as not cached, as a full pool's is), backups, L3. Its hit rate is
 * therefore that of an unbounded cache, at least the engine's; it reports its own pages read and
 * written beside its time, and its throughput is, like the demo's, page payload bytes read and written
 * per second.
 */
public final class ByteWorkBaseline
{
    /** Bytes of a frame's trailer block, after its payload, as in the pool. */
    static final int TRAILER_BLOCK = 4096;
    /** The trailer's fields, at the start of the trailer block: key high, key low, payload length, payload CRC32C. */
    private static final long KEY_HIGH_OFFSET = 0;
    private static final long KEY_LOW_OFFSET = 8;
    private static final long LENGTH_OFFSET = 16;
    private static final long CRC_OFFSET = 24;
    /** Most keys of one prompt: the engine's session.max-keys default. */
    static final int MAX_KEYS = 16384;
    /** Passes over the workload; the median one's steady state is compared. */
    public static final int PASSES = 3;

    /**
     * What a baseline run did.
     *
     * @param clients        threads it ran, one per demo client
     * @param frames         page frames it had room for
     * @param warmup         its warm-up: the same share of the workload's requests as the demo's
     * @param steady         the rest, whose throughput is compared with the demo's
     * @param pagesNotCached pages it computed but had no frame for
     * @param clientCpuNanos CPU time of its threads over the whole run, warm-up included; -1 where the JVM cannot tell
     * @param passes         the steady-state throughput of each pass, MB/s of page data, in the order they ran; this
     *                       result is the median pass's
     */
    public record Result(int clients, int frames, RunPhase warmup, RunPhase steady, long pagesNotCached, long clientCpuNanos,
                         java.util.List<Double> passes)
    {
        /** @return the stretch the throughput figures come from: the steady state, or the whole run when the warm-up took all of it */
        public RunPhase measured()
        {
            return steady.isEmpty() ? new RunPhase(warmup.requests() + steady.requests(), warmup.pagesRead() + steady.pagesRead(),
                warmup.pagesWritten() + steady.pagesWritten(), warmup.pageSize(), warmup.elapsedNanos() + steady.elapsedNanos()) : steady;
        }

        /**
         * @param demo a demo run's report
         * @return the demo's steady-state page throughput over this baseline's, or NaN when the baseline moved no bytes
         */
        public double ratio(final WorkloadReport demo)
        {
            final double baseline = measured().pageMegabytesPerSecond();
            return baseline > 0 ? demo.measured().pageMegabytesPerSecond() / baseline : Double.NaN;
        }
    }

    private final ChatWorkload workload;
    private final WorkloadRunner.Options options;
    private final int pageSize;
    private final long frameSize;
    private final int frames;
    private final MemorySegment[] payloads;
    private final MemorySegment[] trailers;
    private final ByteBuffer[] payloadBuffers;
    private final FrameTable table;
    private final AtomicInteger nextFrame = new AtomicInteger();
    private final AtomicLong requests = new AtomicLong();
    private final AtomicLong pagesRead = new AtomicLong();
    private final AtomicLong pagesWritten = new AtomicLong();
    private final AtomicLong notCached = new AtomicLong();
    private final AtomicLong clientCpuNanos = new AtomicLong();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private RunClock clock;

    private ByteWorkBaseline(final ChatWorkload.Shape shape, final WorkloadRunner.Options options, final int pageSize, final int frames,
                             final MemorySegment region)
    {
        this.workload = new ChatWorkload(shape);
        this.options = options;
        this.pageSize = pageSize;
        this.frameSize = pageSize + TRAILER_BLOCK;
        this.frames = frames;
        this.payloads = new MemorySegment[frames];
        this.trailers = new MemorySegment[frames];
        this.payloadBuffers = new ByteBuffer[frames];
        for (int frame = 0; frame < frames; frame++)
        {
            payloads[frame] = region.asSlice(frame * frameSize, pageSize);
            trailers[frame] = region.asSlice(frame * frameSize + pageSize, TRAILER_BLOCK);
            // Made once, so a seal allocates nothing; a frame is written by one thread only, once.
            payloadBuffers[frame] = payloads[frame].asByteBuffer();
        }
        this.table = new FrameTable(frames);
    }

    /**
     * @param pagesWritten pages the engine's run wrote
     * @param poolPages    pages of the engine's pool
     * @return the frames the baseline takes: room for every page the engine's run wrote and a quarter more, at least the pool's
     */
    public static int framesFor(final long pagesWritten, final long poolPages)
    {
        return Math.toIntExact(Math.min(Integer.MAX_VALUE / 2, Math.max(poolPages, pagesWritten + pagesWritten / 4 + 64)));
    }

    /**
     * Runs the baseline to the end of its workload.
     *
     * @param shape     the workload's shape and seed, the demo's
     * @param options   the demo's clients (threads here), tokens per page, namespace and warm-up share
     * @param pageSize  payload bytes per page, the pool's
     * @param frames    page frames to hold, from {@link #framesFor}
     * @param directory where to make its file: the pool's directory
     * @return what it did
     * @throws IOException          if its file cannot be made or mapped, or the directory's filesystem lacks the room (the message says how much)
     * @throws InterruptedException if interrupted while waiting for its threads
     */
    public static Result run(final ChatWorkload.Shape shape, final WorkloadRunner.Options options, final int pageSize, final int frames,
                             final Path directory) throws IOException, InterruptedException
    {
        if (pageSize < 8 || pageSize % 8 != 0 || frames < 1)
        {
            throw new IllegalArgumentException("page size " + pageSize + " (a positive multiple of 8) or frames " + frames + " (at least 1)");
        }
        final long bytes = (long)frames * (pageSize + TRAILER_BLOCK);
        final long usable = Files.getFileStore(directory).getUsableSpace();
        if (bytes > usable)
        {
            throw new IOException("the no-engine baseline needs " + bytes + " bytes in " + directory + " for " + frames + " page frames; it has "
                + usable + " free");
        }
        final Path file = Files.createTempFile(directory, "kvtier-demo-baseline-", ".frames");
        try (Arena arena = Arena.ofShared())
        {
            final MemorySegment region;
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE))
            {
                channel.truncate(bytes);
                region = channel.map(FileChannel.MapMode.READ_WRITE, 0, bytes, arena);
            }
            finally
            {
                // The mapping keeps the memory; the name goes at once, so nothing is left in the directory whatever happens next.
                Files.deleteIfExists(file);
            }
            // Off the clock: every page of the file allocated and mapped, as the pool's are before the demo starts.
            for (long at = 0; at < bytes; at += 4096)
            {
                region.set(ValueLayout.JAVA_BYTE, at, (byte)0);
            }
            // Its steady state is the demo's last requests, a tenth of a second or so with no engine: one preemption on a busy
            // host moves it by half. Each pass runs the whole workload again on a fresh table (a frame is read only once
            // this pass's table holds it), and the median pass is the one compared.
            final List<Result> results = new ArrayList<>();
            for (int pass = 0; pass < PASSES; pass++)
            {
                results.add(new ByteWorkBaseline(shape, options, pageSize, frames, region).run());
            }
            final List<Double> throughputs = results.stream().map(r -> r.measured().pageMegabytesPerSecond()).toList();
            final List<Result> sorted = new ArrayList<>(results);
            sorted.sort(java.util.Comparator.comparingDouble(r -> r.measured().pageMegabytesPerSecond()));
            final Result median = sorted.get(sorted.size() / 2);
            return new Result(median.clients(), median.frames(), median.warmup(), median.steady(), median.pagesNotCached(), median.clientCpuNanos(),
                throughputs);
        }
        finally
        {
            Files.deleteIfExists(file);
        }
    }

    private Result run() throws InterruptedException
    {
        final List<Thread> threads = new ArrayList<>();
        clock = new RunClock(options, workload.shape().expectedRequests(), pageSize, pagesRead::get, pagesWritten::get);
        for (int c = 0; c < options.clients(); c++)
        {
            threads.add(Thread.ofPlatform().name("kvtier-baseline-" + c).start(this::runClient));
        }
        for (final Thread thread : threads)
        {
            thread.join();
        }
        final RunPhase whole = clock.whole(requests.get());
        final Throwable failed = failure.get();
        if (failed != null)
        {
            throw new IllegalStateException("the no-engine baseline failed: " + failed.getMessage(), failed);
        }
        final RunPhase warmup = clock.warmup(whole);
        return new Result(options.clients(), frames, warmup, warmup.until(whole), notCached.get(), clientCpuNanos.get(), List.of());
    }

    private void runClient()
    {
        final ChatWorkload.Request request = new ChatWorkload.Request();
        final PageKeyChain keys = new PageKeyChain(MAX_KEYS);
        final CRC32C crc = new CRC32C();
        final long rootHigh = options.namespace().rootHigh();
        final long rootLow = options.namespace().rootLow();
        try
        {
            while (failure.get() == null)
            {
                if (!workload.next(request))
                {
                    if (workload.finished())
                    {
                        return;
                    }
                    LockSupport.parkNanos(100_000);
                    continue;
                }
                serve(request, keys, crc, rootHigh, rootLow);
                clock.answered(requests.incrementAndGet());
                workload.answered(request);
            }
        }
        catch (final RuntimeException | Error ex)
        {
            failure.compareAndSet(null, ex);
        }
        finally
        {
            ThreadsCpu.addCurrentThread(clientCpuNanos);
        }
    }

    private void serve(final ChatWorkload.Request request, final PageKeyChain keys, final CRC32C crc, final long rootHigh, final long rootLow)
    {
        keys.compute(rootHigh, rootLow, request.tokens(), request.length(), options.pageTokens(), false);
        final int n = keys.size();
        int cached = 0;
        while (cached < n)
        {
            final int frame = table.find(keys.high(cached), keys.low(cached));
            if (frame < 0)
            {
                break;
            }
            if (trailers[frame].get(ValueLayout.JAVA_LONG_UNALIGNED, LENGTH_OFFSET) != pageSize
                || !PagePattern.matches(payloads[frame], keys.high(cached), keys.low(cached), pageSize))
            {
                // No other writer touches a frame once it is visible: a mismatch is this class's bug, and its figure would mean nothing.
                throw new IllegalStateException("the no-engine baseline read back a wrong page for key " + Long.toHexString(keys.high(cached))
                    + Long.toHexString(keys.low(cached)) + " in frame " + frame);
            }
            cached++;
        }
        pagesRead.addAndGet(cached);
        long written = 0;
        for (int i = cached; i < n; i++)
        {
            final long high = keys.high(i);
            final long low = keys.low(i);
            final int claimed = table.claim(high, low, nextFrame, frames);
            if (claimed == FrameTable.PRESENT)
            {
                continue;
            }
            if (claimed == FrameTable.FULL)
            {
                notCached.incrementAndGet();
                continue;
            }
            PagePattern.fill(payloads[claimed], high, low, pageSize);
            final ByteBuffer payload = payloadBuffers[claimed].clear();
            crc.reset();
            crc.update(payload);
            final MemorySegment trailer = trailers[claimed];
            trailer.set(ValueLayout.JAVA_LONG_UNALIGNED, KEY_HIGH_OFFSET, high);
            trailer.set(ValueLayout.JAVA_LONG_UNALIGNED, KEY_LOW_OFFSET, low);
            trailer.set(ValueLayout.JAVA_LONG_UNALIGNED, LENGTH_OFFSET, pageSize);
            trailer.set(ValueLayout.JAVA_INT_UNALIGNED, CRC_OFFSET, (int)crc.getValue());
            table.publish(high, low);
            written++;
        }
        pagesWritten.addAndGet(written);
    }

    /**
     * Key to frame, in 64 stripes of open-addressing arrays, each under its own lock: taken for a few
     * loads and stores per page, next to microseconds of byte work, so two or eight threads hardly
     * meet. A key is taken (its frame chosen) before its bytes are written and becomes visible to
     * {@link #find} only once published, so a reader never sees a page being written, and two threads
     * that miss the same key write it once.
     */
    static final class FrameTable
    {
        /** {@link #claim}: the key is taken already (visible or being written). */
        static final int PRESENT = -1;
        /** {@link #claim}: no frame is left. */
        static final int FULL = -2;

        private static final int STRIPES = 64;
        private final Stripe[] stripes = new Stripe[STRIPES];

        /** @param frames frames the table must hold */
        FrameTable(final int frames)
        {
            // Eight times a stripe's share of the keys, so that the hash's unevenness never fills one past half.
            final int perStripe = Integer.highestOneBit(Math.max(64, frames / STRIPES * 8)) << 1;
            for (int s = 0; s < STRIPES; s++)
            {
                stripes[s] = new Stripe(perStripe);
            }
        }

        private static long mix(final long high, final long low)
        {
            long z = high ^ Long.rotateLeft(low, 29);
            z = (z ^ (z >>> 33)) * 0xff51afd7ed558ccdL;
            return z ^ (z >>> 29);
        }

        /**
         * @param high a key's high half
         * @param low  its low half
         * @return its frame when published, else -1
         */
        int find(final long high, final long low)
        {
            final long hash = mix(high, low);
            final Stripe stripe = stripes[(int)(hash >>> 58)];
            synchronized (stripe)
            {
                final int slot = stripe.slotOf(high, low, hash);
                return slot >= 0 && stripe.published[slot] ? stripe.frame[slot] : -1;
            }
        }

        /**
         * Takes a key for writing and chooses its frame.
         *
         * @param high   a key's high half
         * @param low    its low half
         * @param next   the next unused frame, shared by all
         * @param frames frames there are
         * @return the frame to write, {@link #PRESENT} or {@link #FULL}
         */
        int claim(final long high, final long low, final AtomicInteger next, final int frames)
        {
            final long hash = mix(high, low);
            final Stripe stripe = stripes[(int)(hash >>> 58)];
            synchronized (stripe)
            {
                if (stripe.slotOf(high, low, hash) >= 0)
                {
                    return PRESENT;
                }
                final int frame = next.getAndIncrement();
                if (frame >= frames)
                {
                    return FULL;
                }
                stripe.insert(high, low, hash, frame);
                return frame;
            }
        }

        /**
         * Makes a taken key's page visible to {@link #find}; the lock orders its bytes before any reader's.
         *
         * @param high a key's high half
         * @param low  its low half
         */
        void publish(final long high, final long low)
        {
            final long hash = mix(high, low);
            final Stripe stripe = stripes[(int)(hash >>> 58)];
            synchronized (stripe)
            {
                stripe.published[stripe.slotOf(high, low, hash)] = true;
            }
        }

        /** One stripe: linear probing over plain arrays, a frame of -1 for an empty slot. */
        private static final class Stripe
        {
            final long[] high;
            final long[] low;
            final int[] frame;
            final boolean[] published;
            final int mask;
            int size;

            Stripe(final int capacity)
            {
                high = new long[capacity];
                low = new long[capacity];
                frame = new int[capacity];
                published = new boolean[capacity];
                java.util.Arrays.fill(frame, -1);
                mask = capacity - 1;
            }

            int slotOf(final long keyHigh, final long keyLow, final long hash)
            {
                for (int slot = (int)hash & mask; ; slot = (slot + 1) & mask)
                {
                    if (frame[slot] < 0)
                    {
                        return -1;
                    }
                    if (high[slot] == keyHigh && low[slot] == keyLow)
                    {
                        return slot;
                    }
                }
            }

            void insert(final long keyHigh, final long keyLow, final long hash, final int frameIndex)
            {
                if (size + 1 > mask / 2)
                {
                    throw new IllegalStateException("a stripe of the baseline's table is half full (" + size + " keys): its frames were miscounted");
                }
                int slot = (int)hash & mask;
                while (frame[slot] >= 0)
                {
                    slot = (slot + 1) & mask;
                }
                high[slot] = keyHigh;
                low[slot] = keyLow;
                frame[slot] = frameIndex;
                size++;
            }
        }
    }
}
