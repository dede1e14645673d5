package io.kvtier.engine.core;

import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.eviction.EvictionPolicies;

import io.kvtier.engine.ManualClock;
import io.kvtier.engine.config.PrefetchMode;
import io.kvtier.engine.config.WritePolicy;
import io.kvtier.engine.index.PageIndex;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.client.pool.PageStateWord;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;
import io.kvtier.spi.PageKey;

import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The engine thread's parts wired to one another as the conductor wires them, over a small pool in a
 * test's directory, a {@link ManualClock} and {@link RecordingTier}s, with this class standing in for
 * the conductor at the narrow interfaces (the eviction gate, the space-waiter resumer, the end of a
 * load wait, the tier batch sink, the tiers' answers, the steps taken in another part). It forwards
 * each call as the conductor does and records it, and
 * the test, not a ring, decides when a batch's completion is handled ({@link #deliver}).
 */
final class CoreParts implements PoolSpace.EvictionGate, PoolSpace.SpaceWaiterResumer, Loads.WaitOver, TierIoBatch.Sink, TierIo.Completions,
    EngineSteps, AutoCloseable
{
    static final int PAGE_SIZE = 4096;

    /** What the parts are built with; the defaults suit most tests. */
    static final class Settings
    {
        int pages = 16;
        int tiers = 1;
        WritePolicy writePolicy = WritePolicy.NONE;
        int writeHitThreshold = 2;
        /** LRU: the tests that name a victim name LRU's. */
        String evictionPolicy = "lru";
        double evictHigh = 1.0;
        double evictLow = 0.75;
        Duration quarantine = Duration.ofSeconds(3);
        Duration ioTimeout = Duration.ofSeconds(5);
        Duration reservationTimeout = Duration.ofSeconds(10);
        Duration sessionTimeout = Duration.ofSeconds(30);
        int probePages = 4;
        PrefetchMode prefetch = PrefetchMode.OFF;
        int prefetchThreshold = 1;
        Duration prefetchTimeout = Duration.ofSeconds(1);
        Duration negativeProbeTtl = Duration.ofSeconds(10);
        int maxBatch = 8;
        int maxInflight = 2;
        int maxBackupPages = 4;
        int maxClients = 4;
        /** Tiers whose reads land in staging frames, by index. */
        boolean[] untrusted = new boolean[0];
        int stagingFrames = 4;
        double reverifyRate;
        Duration reverifyWindow = Duration.ofSeconds(1);
        int lateWriteLimit = 3;
    }

    final Settings settings;
    final PagePool pool;
    final PageIndex index;
    final EngineCounters counters;
    final ManualClock clock = new ManualClock();
    final Residency residency;
    final RecordingTier[] tiers;
    final SessionTable sessions;
    final PoolSpace space;
    final Reservations reservations;
    final Acquires acquires;
    final Lookups lookups;
    final Loads loads;
    final Backups backups;
    final TierIo io;
    final Reverifications reverifications;
    final DirectTierCaller[] callers;
    final StagingFrames staging;
    /** Re-verifications handed over and not yet answered: the test answers them with {@link #reverify}. */
    final ArrayDeque<ReverifyJob> reverifyJobs = new ArrayDeque<>();

    /** Batches whose last key completed, not yet handed to {@link TierIo#onBatchDone}. */
    final ArrayDeque<TierIoBatch> done = new ArrayDeque<>();
    /** Requests the parts asked to resume after a wait for space. */
    final List<ClientRecord> resumed = new ArrayList<>();
    /** Requests whose awaited loads all ended. */
    final List<ClientRecord> waitsOver = new ArrayList<>();
    /** Keys evicted without an L3 copy. */
    int lost;
    /** When set, what the pool's space hears instead of the parts' eviction gate. */
    PoolSpace.EvictionGate gateOverride;

    CoreParts(final Path dir, final Consumer<Settings> configure) throws IOException
    {
        settings = new Settings();
        configure.accept(settings);
        final Settings s = settings;
        pool = PagePool.create(dir.resolve("pool"), PAGE_SIZE, s.pages, 4L * s.pages + 64, 2, s.sessionTimeout);
        index = new PageIndex(pool.index(), pool.pageCount());
        counters = new EngineCounters(pool.counters());
        residency = new Residency(pool, index);
        tiers = new RecordingTier[s.tiers];
        final List<String> names = new ArrayList<>();
        for (int t = 0; t < s.tiers; t++)
        {
            tiers[t] = new RecordingTier("t" + t);
            names.add(tiers[t].name);
        }
        final WritePolicy writePolicy = s.tiers == 0 ? WritePolicy.NONE : s.writePolicy;
        space = new PoolSpace(pool, index, counters, clock, EvictionPolicies.forName(s.evictionPolicy, pool.pageCount()), s.evictHigh, s.evictLow, s.quarantine.toNanos(), s.ioTimeout.toNanos(), s.maxClients,
            this, this);
        callers = new DirectTierCaller[s.tiers];
        final boolean[] staged = new boolean[s.tiers];
        boolean anyStaged = false;
        for (int t = 0; t < s.tiers; t++)
        {
            callers[t] = new DirectTierCaller(tiers[t], names.get(t));
            staged[t] = t < s.untrusted.length && s.untrusted[t];
            anyStaged |= staged[t];
        }
        staging = anyStaged ? new StagingFrames(s.stagingFrames, pool.frameLength()) : null;
        io = new TierIo(pool, counters, clock, callers, names, staging, staged, s.maxBatch, s.maxInflight, s.ioTimeout.toNanos(), this, this, "", 4096);
        sessions = new SessionTable(counters, s.sessionTimeout.toNanos(), s.maxClients, space, this);
        loads = new Loads(residency, counters, clock, space, names, io, sessions, this, this);
        lookups = new Lookups(residency, counters, clock, s.tiers, s.probePages, s.prefetch, s.prefetchThreshold, s.prefetchTimeout.toNanos(),
            s.negativeProbeTtl.toNanos(), s.maxClients, loads, io, sessions, this);
        backups = new Backups(residency, counters, clock, space, names, writePolicy, s.maxBackupPages, s.ioTimeout.toNanos(), s.maxClients, io, lookups);
        reservations = new Reservations(residency, counters, clock, space, backups, s.reservationTimeout.toNanos(), writePolicy);
        reverifications = new Reverifications(pool, counters, clock, names, s.reverifyRate, s.reverifyWindow.toNanos(), s.lateWriteLimit, 8,
            reverifyJobs::add, sessions, loads, space, io, this);
        acquires = new Acquires(residency, counters, clock, space, loads, lookups, backups, reverifications, writePolicy, s.writeHitThreshold, this);
    }

    @Override
    public void close()
    {
        pool.close();
        if (staging != null)
        {
            staging.close();
        }
    }

    /** Answers the oldest re-verification handed over, checking the page as the re-verification thread does. */
    void reverify()
    {
        final ReverifyJob job = reverifyJobs.poll();
        job.intact = pool.frames().payloadIntact(job.page);
        reverifications.onResult(job);
    }

    RecordingTier tier(final int t)
    {
        return tiers[t];
    }

    long now()
    {
        return clock.nanoTime();
    }

    void advance(final Duration by)
    {
        clock.advance(by);
    }

    long counter(final EngineCounter counter)
    {
        return counters.getOpaque(counter);
    }

    // Clients and requests.

    /** Opens a client whose chain holds keys {@code (salt, 1..keys)}. */
    TestPort open(final long salt, final int keys)
    {
        final TestPort port = new TestPort(Math.max(keys, 1)).keys(salt, keys);
        sessions.open(port, now());
        if (port.status != ErrorCode.OK)
        {
            throw new IllegalStateException("no client slot left");
        }
        port.completions = 0;
        return port;
    }

    ClientRecord record(final TestPort port)
    {
        return sessions.recordOf(port);
    }

    /** Starts a request as the conductor does, short of dispatching it. */
    ClientRecord begin(final TestPort port, final int op, final int from, final int count)
    {
        final ClientRecord r = sessions.recordOf(port);
        r.begin(op, from, count, now(), System.nanoTime());
        if (op == MessageType.RESERVE)
        {
            r.resetStatuses();
        }
        return r;
    }

    /** Reserves {@code [from, from + count)}, writes and seals each reserved page, commits them. */
    int write(final TestPort port, final int from, final int count)
    {
        reservations.reserve(begin(port, MessageType.RESERVE, from, count));
        for (int i = from; i < from + count; i++)
        {
            if (port.status(i) == PageEntryStatus.RESERVED)
            {
                seal(port, i);
            }
        }
        reservations.commit(begin(port, MessageType.COMMIT, from, count));
        return port.resultCount;
    }

    /** Fills a reserved page with its key's bytes and seals it, as the committing client does. */
    void seal(final TestPort port, final int key)
    {
        final int page = port.page(key);
        final int length = lengthOf(port.keys().low(key));
        final long high = port.keys().high(key);
        final long low = port.keys().low(key);
        for (int b = 0; b < length; b++)
        {
            pool.frames().payload(page).set(ValueLayout.JAVA_BYTE, b, (byte)(high * 31 + low + b));
        }
        port.lengths()[key] = length;
        pool.frames().seal(page, high, low, length);
    }

    static int lengthOf(final long keyLow)
    {
        return 100 + (int)(keyLow % 1000);
    }

    /**
     * Makes a page SERVING for a key without any client: allocated, written, sealed, bound, resident.
     *
     * @return the page
     */
    int serve(final long high, final long low)
    {
        final int page = space.allocate();
        if (page < 0)
        {
            throw new IllegalStateException("no page for " + high + "/" + low);
        }
        final long word = pool.metadata().stateWordAcquire(page);
        final int generation = PageStateWord.generation(word);
        pool.metadata().keyPlain(page, high, low);
        pool.metadata().reservationPlain(page, EngineConductor.ENGINE_OWNER, 0);
        pool.metadata().hitCountPlain(page, 0);
        pool.metadata().compareAndSetStateWord(page, word, PageStateWord.word(generation, 0, PageStateWord.WRITING));
        pool.frames().seal(page, high, low, lengthOf(low));
        pool.metadata().compareAndSetStateWord(page, PageStateWord.word(generation, 0, PageStateWord.WRITING),
            PageStateWord.word(generation, 0, PageStateWord.SERVING));
        index.bindPage(high, low, page);
        space.touch(page, PoolSpace.NONE);
        return page;
    }

    /**
     * Puts a key's sealed frame in tiers' stores and their bits in the index, as if this engine had
     * written it there once and evicted it since; the pool does not have it.
     */
    void inL3(final long high, final long low, final int... tierIds)
    {
        final int page = serve(high, low);
        final byte[] frame = pool.frames().frame(page).toArray(ValueLayout.JAVA_BYTE);
        if (!space.evict(page, pool.metadata().stateWordAcquire(page)))
        {
            throw new IllegalStateException("page " + page + " did not leave");
        }
        for (final int t : tierIds)
        {
            tiers[t].objects.put(new PageKey(high, low), frame.clone());
            index.addTier(high, low, t);
        }
    }

    int state(final int page)
    {
        return PageStateWord.state(pool.metadata().stateWordAcquire(page));
    }

    int pins(final int page)
    {
        return PageStateWord.pins(pool.metadata().stateWordAcquire(page));
    }

    int generation(final int page)
    {
        return PageStateWord.generation(pool.metadata().stateWordAcquire(page));
    }

    /** @return the pool page the index binds to the key, or {@link PageIndex#NO_PAGE} */
    int boundPage(final long high, final long low)
    {
        final int slot = index.find(high, low);
        return slot < 0 ? PageIndex.NO_PAGE : index.page(slot);
    }

    /** @return the L3 tier bits the index records for the key */
    int tierBits(final long high, final long low)
    {
        final int slot = index.find(high, low);
        return slot < 0 ? 0 : index.tiers(slot);
    }

    // Tier batches: submitted at the test's say, completions handled at its say.

    /** Submits the open batches, as the conductor does at the end of each ring batch. */
    void flush()
    {
        io.flush();
    }

    /** Hands every batch whose keys all completed to the tier I/O part, as the ring would. */
    void deliver()
    {
        while (!done.isEmpty())
        {
            io.onBatchDone(done.poll());
        }
    }

    // The conductor's side of the narrow interfaces, forwarded as the conductor forwards them.

    @Override
    public void batchDone(final TierIoBatch batch)
    {
        done.add(batch);
    }

    @Override
    public int beforeEvict(final int page)
    {
        if (gateOverride != null)
        {
            return gateOverride.beforeEvict(page);
        }
        return loads.isLoading(page) ? SKIP : backups.beforeEvict(page);
    }

    @Override
    public void lost(final long keyHigh, final long keyLow)
    {
        lost++;
        if (gateOverride != null)
        {
            gateOverride.lost(keyHigh, keyLow);
            return;
        }
        backups.lost(keyHigh, keyLow);
    }

    @Override
    public void evicted(final int page)
    {
        if (gateOverride != null)
        {
            gateOverride.evicted(page);
            return;
        }
        loads.forget(page);
        backups.evicted(page);
    }

    @Override
    public int evictionsPending()
    {
        return gateOverride != null ? gateOverride.evictionsPending() : backups.evictionsPending();
    }

    @Override
    public boolean cleansAhead()
    {
        return gateOverride != null ? gateOverride.cleansAhead() : backups.cleansAhead();
    }

    @Override
    public int cleanAhead(final int page)
    {
        return gateOverride != null ? gateOverride.cleanAhead(page) : loads.isLoading(page) ? CLEAN_NOT_NEEDED : backups.cleanAhead(page);
    }

    @Override
    public boolean pin(final ClientRecord r, final int key, final int page, final int as)
    {
        return acquires.pin(r, key, page, as);
    }

    @Override
    public void walk(final ClientRecord r)
    {
        acquires.walk(r);
    }

    @Override
    public int release(final ClientRecord r, final int from, final int end)
    {
        return acquires.release(r, from, end);
    }

    @Override
    public int abort(final ClientRecord r, final int from, final int end, final boolean expired)
    {
        return reservations.abort(r, from, end, expired);
    }

    @Override
    public void reserveAfterPrefix(final ClientRecord r)
    {
        reservations.reserveAfterPrefix(r);
    }

    @Override
    public void indexMayMiss(final int tier, final String why)
    {
        lookups.indexMayMiss(tier, why);
    }

    @Override
    public void readDone(final TierIoBatch batch, final int i)
    {
        loads.onReadDone(batch, i);
    }

    @Override
    public void writeDone(final TierIoBatch batch, final int i)
    {
        backups.onWriteDone(batch, i);
    }

    @Override
    public void existsDone(final TierIoBatch batch, final int i)
    {
        lookups.onExistsDone(batch, i);
    }

    @Override
    public void readAbandoned(final int page)
    {
        loads.abandon(page);
    }

    @Override
    public void writeAbandoned(final TierIoBatch batch, final int i)
    {
        backups.abandon(batch, i);
    }

    @Override
    public void existsAbandoned(final TierIoBatch batch, final int i)
    {
        lookups.answerProbe(batch, i);
    }

    @Override
    public void resume(final ClientRecord r)
    {
        resumed.add(r);
        if (r.op == MessageType.RESERVE)
        {
            reservations.reserve(r);
        }
        else if (r.op == MessageType.ACQUIRE)
        {
            acquires.walk(r);
        }
    }

    @Override
    public void waitOver(final ClientRecord r)
    {
        waitsOver.add(r);
        switch (r.phase)
        {
            case ClientRecord.PHASE_PROBING -> lookups.afterProbe(r);
            case ClientRecord.PHASE_PREFETCH_WAIT -> lookups.finishWaiting(r);
            case ClientRecord.PHASE_NONE ->
            {
                if (r.op == MessageType.ACQUIRE)
                {
                    acquires.finish(r);
                }
            }
            default ->
            {
            }
        }
    }
}
