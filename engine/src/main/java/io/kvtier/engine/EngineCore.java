package io.kvtier.engine;

import com.lmax.disruptor.EventHandler;
import com.lmax.disruptor.RingBuffer;
import io.kvtier.collections.IntLruList;
import io.kvtier.collections.KeyTable;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.config.PrefetchMode;
import io.kvtier.engine.config.WritePolicy;
import io.kvtier.engine.index.PageIndex;
import io.kvtier.engine.key.KeyChain;
import io.kvtier.engine.pool.ClientSlotReaper;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.engine.pool.PageStateWord;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;
import io.kvtier.engine.tier.TierHandle;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.TierStatus;

import java.util.ArrayDeque;
import java.util.List;

import static io.kvtier.engine.pool.PageStateWord.FREE;
import static io.kvtier.engine.pool.PageStateWord.SERVING;
import static io.kvtier.engine.pool.PageStateWord.WRITING;

/**
 * The pipeline's single handler: owns the index, the free list, the LRU, the waiters and every
 * policy, and is the only thread that changes them, so nothing here takes a lock. Steady-state
 * requests allocate nothing: every structure is sized at start.
 *
 * <p>Paths through it (see {@code docs/architecture.md}):
 * <ul>
 *   <li><b>Acquire</b>: pin pool pages of the prefix; for L3 pages, take a free page (evicting if
 *       needed), mark it WRITING for the engine, queue a read; the tier's completing thread verifies
 *       the frame; here the page becomes SERVING and is pinned for every waiting session. The
 *       answer is the leading run of pinned keys; pins past a gap are dropped.</li>
 *   <li><b>Backup</b>: pin the SERVING page for the engine, queue a write of its frame; on
 *       completion record the tier in the index and unpin; an eviction waiting on it proceeds.</li>
 * </ul>
 */
final class EngineCore implements EventHandler<EngineEvent>, TierIoBatch.Sink
{
    private static final System.Logger LOG = System.getLogger(EngineCore.class.getName());

    static final int ENGINE_OWNER = 0;

    private static final byte F_LOADING = 1;
    private static final byte F_BACKUP = 2;
    private static final byte F_EVICT_PENDING = 4;
    private static final byte F_LOAD_ABANDONED = 8;
    private static final byte F_PREFETCH = 16;
    /** Loaded from L3 and not yet pinned: its first pin counts as an L3 hit, whoever started the load. */
    private static final byte F_LOADED_UNUSED = 32;
    /** Its last backup failed: it is backed up again before eviction may drop it. */
    private static final byte F_BACKUP_FAILED = 64;
    /** Waiting in the backup backlog, unpinned, because l3.max-backup-pages backups were in flight. */
    private static final byte F_BACKUP_QUEUED = (byte)0x80;

    /** Backups of one page that may fail before eviction drops it without an L3 copy (counted, warned). */
    static final int MAX_BACKUP_ATTEMPTS = 3;

    private static final byte WAIT_PIN = 1;
    private static final byte WAIT_NOTIFY = 2;

    private static final int PHASE_NONE = 0;
    private static final int PHASE_PROBING = 1;
    private static final int PHASE_PREFETCH_WAIT = 2;
    private static final int PHASE_SPACE_WAIT = 3;
    private static final int PHASE_ACQUIRE_PROBING = 4;

    private static final int NONE = -1;
    private static final long HEARTBEAT_PERIOD_NS = 100_000_000L;

    private final EngineConfig config;
    private final EngineClock clock;
    private final PagePool pool;
    private final PageIndex index;
    private final EngineCounters counters;
    private final List<TierHandle> tiers;
    private final StorageTier[] tierArray;
    private final int tierCount;
    private final int pageCount;
    private final long highWater;
    private final long lowWater;
    private final WritePolicy writePolicy;
    private final PrefetchMode prefetchMode;

    private final IntLruList lru;
    private final int[] freeStack;
    private int freeCount;
    private final byte[] pageFlags;
    private final byte[] backupAttempts;
    private final NegativeProbeCache negativeProbes;
    private final int[] loadTier;

    private final int[] waiterHead;
    private final int[] waiterSession;
    private final int[] waiterKey;
    private final int[] waiterSeq;
    private final byte[] waiterKind;
    private final int[] waiterNext;
    private int waiterFree;

    private final Session[] sessions;
    private final int[] freeSessionIds;
    private int freeSessionCount;

    private final LongRing reservations;
    private final LongRing quarantine;
    private final LongRing lookupDeadlines;
    private final ArrayDeque<Session> spaceWaiters;
    private final ArrayDeque<Session> flushWaiters;

    private final TierIoBatch[][] openBatch;
    private final ArrayDeque<TierIoBatch>[][] freeBatches;
    private final TierIoBatch[] inflight;
    private int inflightCount;
    private final int[] ioNext;
    private final int[][] ioHead;
    private final int[][] ioTail;
    private final ArrayDeque<TierIoBatch> doneOnEngineThread;
    private final int backupTier;

    private int backupsInFlight;
    private final int maxBackupsInFlight;
    private final LongRing backupBacklog;
    private int backlogLive;
    private long lastSkipWarningNanos;
    private static final long SKIP_WARNING_PERIOD_NS = 10_000_000_000L;
    private int scanRun;
    private int scanTotal;
    private long lastHeartbeatNanos;
    private final ClientSlotReaper clientReaper;
    private final long[] clientReclaims = new long[2];
    private volatile Thread engineThread;
    private RingBuffer<EngineEvent> ring;
    private volatile boolean closing;
    private volatile boolean stopped;
    private int evictPending;
    /** Set by {@link #startLoad} when it found no page: the acquire may wait for write-back evictions. */
    private boolean loadStarvedForSpace;

    @SuppressWarnings("unchecked")
    EngineCore(final EngineConfig config, final EngineClock clock, final PagePool pool, final EngineCounters counters, final List<TierHandle> tiers,
               final int maxSessions)
    {
        this.config = config;
        this.clock = clock;
        this.pool = pool;
        this.counters = counters;
        this.tiers = tiers;
        this.tierCount = tiers.size();
        this.tierArray = new StorageTier[tierCount];
        for (int t = 0; t < tierCount; t++)
        {
            tierArray[t] = tiers.get(t).tier();
        }
        this.pageCount = pool.pageCount();
        this.index = new PageIndex(pool.index(), pageCount);
        this.highWater = Math.max(1, Math.min(pageCount, (long)Math.ceil(pageCount * config.evictHigh())));
        this.lowWater = Math.min(highWater - 1, (long)Math.floor(pageCount * config.evictLow()));
        this.writePolicy = tierCount == 0 ? WritePolicy.NONE : config.writePolicy();
        this.prefetchMode = tierCount == 0 ? PrefetchMode.OFF : config.prefetchMode();
        this.backupTier = 0;

        lru = new IntLruList(pageCount);
        freeStack = new int[pageCount];
        for (int p = 0; p < pageCount; p++)
        {
            freeStack[p] = pageCount - 1 - p;
        }
        freeCount = pageCount;
        pageFlags = new byte[pageCount];
        backupAttempts = new byte[pageCount];
        negativeProbes = new NegativeProbeCache(Math.max(4096, 4 * config.probePages() * Math.max(1, Math.min(maxSessions, 256))),
            config.negativeProbeTtl().toNanos());
        loadTier = new int[pageCount];

        final int waiterCapacity = Math.max(4096, 2 * pageCount);
        waiterHead = new int[pageCount];
        java.util.Arrays.fill(waiterHead, NONE);
        waiterSession = new int[waiterCapacity];
        waiterKey = new int[waiterCapacity];
        waiterSeq = new int[waiterCapacity];
        waiterKind = new byte[waiterCapacity];
        waiterNext = new int[waiterCapacity];
        for (int i = 0; i < waiterCapacity; i++)
        {
            waiterNext[i] = i + 1 < waiterCapacity ? i + 1 : NONE;
        }
        waiterFree = 0;

        sessions = new Session[maxSessions + 1];
        freeSessionIds = new int[maxSessions];
        for (int i = 0; i < maxSessions; i++)
        {
            freeSessionIds[i] = maxSessions - i;
        }
        freeSessionCount = maxSessions;

        reservations = new LongRing(2 * pageCount + 1, 3);
        quarantine = new LongRing(pageCount, 2);
        lookupDeadlines = new LongRing(2 * (maxSessions + 1), 3);
        spaceWaiters = new ArrayDeque<>(maxSessions + 1);
        flushWaiters = new ArrayDeque<>(maxSessions + 1);
        maxBackupsInFlight = config.maxBackupPages(pageCount);
        backupBacklog = new LongRing(pageCount + 1, 2);

        openBatch = new TierIoBatch[tierCount][TierIoBatch.OPS];
        freeBatches = new ArrayDeque[tierCount][TierIoBatch.OPS];
        inflight = new TierIoBatch[tierCount * TierIoBatch.OPS * config.l3MaxInflight()];
        for (int t = 0; t < tierCount; t++)
        {
            for (int op = 0; op < TierIoBatch.OPS; op++)
            {
                freeBatches[t][op] = new ArrayDeque<>(config.l3MaxInflight());
                for (int b = 0; b < config.l3MaxInflight(); b++)
                {
                    freeBatches[t][op].add(new TierIoBatch(t, op, config.l3MaxBatch(), pool, this));
                }
            }
        }
        ioNext = new int[pageCount];
        ioHead = new int[tierCount][2];
        ioTail = new int[tierCount][2];
        for (int t = 0; t < tierCount; t++)
        {
            java.util.Arrays.fill(ioHead[t], NONE);
            java.util.Arrays.fill(ioTail[t], NONE);
        }
        doneOnEngineThread = new ArrayDeque<>(Math.max(16, tierCount * TierIoBatch.OPS * config.l3MaxInflight()));
        clientReaper = new ClientSlotReaper(pool, config.sessionTimeout().toMillis());
        counters.set(EngineCounter.PAGES_IN_USE, 0);
    }

    void ring(final RingBuffer<EngineEvent> ring)
    {
        this.ring = ring;
    }

    boolean isEngineThread()
    {
        return Thread.currentThread() == engineThread;
    }

    @Override
    public void onStart()
    {
        engineThread = Thread.currentThread();
        lastHeartbeatNanos = System.nanoTime(); // the heartbeat is for other processes: real time
    }

    // ------------------------------------------------------------------------------------------------
    // Event dispatch
    // ------------------------------------------------------------------------------------------------

    @Override
    public void onEvent(final EngineEvent event, final long sequence, final boolean endOfBatch)
    {
        try
        {
            switch (event.type)
            {
                case EngineEvent.SESSION_REQUEST -> onRequest(event.session, event.op, event.from, event.count);
                case EngineEvent.TIER_BATCH_DONE -> onBatchDone(event.batch);
                case EngineEvent.TIER_OBJECT_REMOVED -> onObjectRemoved(event.tier, event.keyHigh, event.keyLow);
                case EngineEvent.TICK -> onTick(clock.nanoTime());
                default -> LOG.log(System.Logger.Level.WARNING, "ignoring ring event of unknown type {0}", event.type);
            }
        }
        catch (final RuntimeException | Error ex)
        {
            LOG.log(System.Logger.Level.ERROR, "engine failed handling a ring event; it keeps running", ex);
            final Session session = event.session;
            if (event.type == EngineEvent.SESSION_REQUEST && session != null && session.inFlight)
            {
                session.complete(RequestStatus.INTERNAL_ERROR);
            }
        }
        finally
        {
            event.clear();
        }
        if (endOfBatch)
        {
            flushIo();
        }
    }

    /** Submits every open batch, then handles completions that tiers delivered on this thread. */
    private void flushIo()
    {
        do
        {
            for (int t = 0; t < tierCount; t++)
            {
                for (int op = 0; op < TierIoBatch.OPS; op++)
                {
                    if (openBatch[t][op] != null)
                    {
                        submit(openBatch[t][op]);
                    }
                }
            }
            while (!doneOnEngineThread.isEmpty())
            {
                onBatchDone(doneOnEngineThread.poll());
            }
        }
        while (hasOpenBatches());
    }

    private boolean hasOpenBatches()
    {
        for (int t = 0; t < tierCount; t++)
        {
            for (int op = 0; op < TierIoBatch.OPS; op++)
            {
                if (openBatch[t][op] != null)
                {
                    return true;
                }
            }
        }
        return !doneOnEngineThread.isEmpty();
    }

    // ------------------------------------------------------------------------------------------------
    // Session requests
    // ------------------------------------------------------------------------------------------------

    private void onRequest(final Session s, final int op, final int from, final int count)
    {
        counters.increment(EngineCounter.REQUESTS);
        final long now = clock.nanoTime();
        if (op == SessionOp.OPEN)
        {
            open(s, now);
            return;
        }
        if (!s.registered)
        {
            s.complete(s.expired ? RequestStatus.LEASE_EXPIRED : RequestStatus.CLOSED);
            return;
        }
        if (closing && op != SessionOp.CLOSE && op != SessionOp.RELEASE && op != SessionOp.ABORT && op != SessionOp.FLUSH)
        {
            s.complete(RequestStatus.CLOSED);
            return;
        }
        s.opSeq++;
        s.op = op;
        s.from = from;
        s.count = count;
        s.inFlight = true;
        s.pending = 0;
        s.probePending = 0;
        s.probedUntil = from;
        s.phase = PHASE_NONE;
        s.resultCount = 0;
        s.lastActivityNanos = now;
        final int keyCount = s.keys().size();
        final boolean keyed = op == SessionOp.LOOKUP || op == SessionOp.ACQUIRE || op == SessionOp.RESERVE || op == SessionOp.COMMIT
            || op == SessionOp.PREFETCH || op == SessionOp.BACKUP || op == SessionOp.EVICT;
        if (from < 0 || count < 0 || (keyed && from + count > keyCount) || from + count > s.status.length)
        {
            counters.increment(EngineCounter.REQUESTS_INVALID);
            s.complete(RequestStatus.INVALID);
            return;
        }
        switch (op)
        {
            case SessionOp.LOOKUP -> lookup(s);
            case SessionOp.ACQUIRE -> acquire(s);
            case SessionOp.RELEASE -> finish(s, release(s, from, Math.min(from + count, s.holdLimit)));
            case SessionOp.RESERVE -> reserve(s);
            case SessionOp.COMMIT -> commit(s);
            case SessionOp.ABORT -> finish(s, abort(s, from, Math.min(from + count, s.holdLimit), false));
            case SessionOp.PREFETCH -> prefetch(s);
            case SessionOp.BACKUP -> backupKeys(s);
            case SessionOp.FLUSH -> flush(s);
            case SessionOp.EVICT -> evictKeys(s);
            case SessionOp.KEEP_ALIVE -> finish(s, 0);
            case SessionOp.CLOSE -> close(s);
            default ->
            {
                counters.increment(EngineCounter.REQUESTS_INVALID);
                s.complete(RequestStatus.INVALID);
            }
        }
    }

    private void finish(final Session s, final int result)
    {
        s.resultCount = result;
        s.phase = PHASE_NONE;
        s.complete(RequestStatus.OK);
    }

    private void open(final Session s, final long now)
    {
        if (freeSessionCount == 0)
        {
            LOG.log(System.Logger.Level.WARNING, "no session slot left: all {0} are open", sessions.length - 1);
            s.complete(RequestStatus.INVALID);
            return;
        }
        if (closing)
        {
            s.complete(RequestStatus.CLOSED);
            return;
        }
        final int id = freeSessionIds[--freeSessionCount];
        s.id = id;
        s.registered = true;
        s.expired = false;
        s.lastActivityNanos = now;
        s.holdLimit = 0;
        sessions[id] = s;
        s.complete(RequestStatus.OK);
    }

    private void close(final Session s)
    {
        releaseEverything(s, false);
        unregister(s);
        s.complete(RequestStatus.OK);
    }

    private void unregister(final Session s)
    {
        if (s.registered)
        {
            s.registered = false;
            sessions[s.id] = null;
            freeSessionIds[freeSessionCount++] = s.id;
            spaceWaiters.remove(s);
        }
    }

    private void releaseEverything(final Session s, final boolean expired)
    {
        release(s, 0, s.holdLimit);
        abort(s, 0, s.holdLimit, expired);
        s.holdLimit = 0;
    }

    private void hold(final Session s, final int key)
    {
        if (key + 1 > s.holdLimit)
        {
            s.holdLimit = key + 1;
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Lookup and prefetch
    // ------------------------------------------------------------------------------------------------

    /** @return the pool page holding the key if it is SERVING, else NONE */
    private int servingPage(final int slot, final long high, final long low)
    {
        if (slot == KeyTable.NONE)
        {
            return NONE;
        }
        final int page = index.page(slot);
        if (page == PageIndex.NO_PAGE)
        {
            return NONE;
        }
        final long word = pool.stateWordAcquire(page);
        if (PageStateWord.state(word) == SERVING && pool.keyHigh(page) == high && pool.keyLow(page) == low)
        {
            return page;
        }
        return NONE;
    }

    /** @return the page being loaded for the key (not abandoned), else NONE */
    private int loadingPage(final int slot)
    {
        if (slot == KeyTable.NONE)
        {
            return NONE;
        }
        final int page = index.page(slot);
        if (page != PageIndex.NO_PAGE && (pageFlags[page] & F_LOADING) != 0 && (pageFlags[page] & F_LOAD_ABANDONED) == 0)
        {
            return page;
        }
        return NONE;
    }

    /**
     * One pass over {@code [start, end)}: sets {@link #scanRun} to the end of the leading run of pool
     * pages and {@link #scanTotal} to the first key that is neither in the pool, nor loading, nor in L3.
     */
    private void scanPrefix(final KeyChain keys, final int start, final int end)
    {
        int run = start;
        int i = start;
        for (; i < end; i++)
        {
            final long high = keys.high(i);
            final long low = keys.low(i);
            final int slot = index.find(high, low);
            if (slot == KeyTable.NONE)
            {
                break;
            }
            if (servingPage(slot, high, low) != NONE)
            {
                if (run == i)
                {
                    run = i + 1;
                }
                continue;
            }
            if (loadingPage(slot) == NONE && index.tiers(slot) == 0)
            {
                break;
            }
            if (index.page(slot) == PageIndex.NO_PAGE)
            {
                index.touch(slot);
            }
        }
        scanRun = run;
        scanTotal = i;
    }

    private void lookup(final Session s)
    {
        counters.increment(EngineCounter.LOOKUPS);
        resetStatuses(s);
        final int end = s.from + s.count;
        scanPrefix(s.keys(), s.from, end);
        s.lookupRun = scanRun;
        s.lookupTotal = scanTotal;
        if (probeRound(s, scanTotal, end))
        {
            s.phase = PHASE_PROBING;
            return;
        }
        lookupDecide(s);
    }

    /**
     * Asks every tier about the next {@code l3.probe-pages} keys from {@code start} that the index does
     * not know, stopping before a key L3 recently said it lacks (the prefix ends there anyway). A probe
     * round whose keys are all found is followed by another, so a long chain in a shared or restarted L3
     * is found in one request.
     *
     * @return whether probes were queued; the session then waits for {@code probePending} answers
     */
    private boolean probeRound(final Session s, final int start, final int end)
    {
        if (start >= end || start < s.probedUntil || config.probePages() == 0 || tierCount == 0)
        {
            return false;
        }
        final KeyChain keys = s.keys();
        final long now = clock.nanoTime();
        int stop = Math.min(end, start + config.probePages());
        for (int i = start; i < stop; i++)
        {
            if (negativeProbes.isMissing(keys.high(i), keys.low(i), now))
            {
                stop = i;
                counters.increment(EngineCounter.PROBES_SKIPPED);
                break;
            }
        }
        s.probedUntil = Math.max(stop, start + 1);
        int queued = 0;
        for (int t = 0; t < tierCount; t++)
        {
            for (int i = start; i < stop; i++)
            {
                if (!queueKeyIo(t, TierIoBatch.EXISTS, keys.high(i), keys.low(i), s.id, i, s.opSeq))
                {
                    break;
                }
                queued++;
            }
        }
        counters.add(EngineCounter.PROBE_KEYS, queued);
        s.probePending = queued;
        return queued > 0;
    }

    private void lookupAfterProbe(final Session s)
    {
        // Probes only add L3 knowledge past the old total; the pool run found before them still holds.
        scanPrefix(s.keys(), s.lookupTotal, s.from + s.count);
        s.lookupTotal = scanTotal;
        if (probeRound(s, scanTotal, s.from + s.count))
        {
            return;
        }
        lookupDecide(s);
    }

    /** With the prefix counted, prefetches its L3 part if it is long enough, then answers or waits. */
    private void lookupDecide(final Session s)
    {
        final int run = s.lookupRun;
        final int total = s.lookupTotal;
        if (prefetchMode != PrefetchMode.OFF && total - run >= config.prefetchThresholdPages())
        {
            final boolean wait = prefetchMode == PrefetchMode.WAIT_COMPLETE || prefetchMode == PrefetchMode.TIMEOUT;
            final int waiting = startLoads(s, run, total, wait ? WAIT_NOTIFY : 0);
            if (wait && waiting > 0)
            {
                s.pending = waiting;
                s.phase = PHASE_PREFETCH_WAIT;
                if (prefetchMode == PrefetchMode.TIMEOUT)
                {
                    addLookupDeadline(s, clock.nanoTime() + config.prefetchTimeout().toNanos());
                }
                return;
            }
        }
        answerLookup(s, run, total);
    }

    /** Answers a lookup that waited: loads landed or failed meanwhile, so count again. */
    private void finishLookup(final Session s)
    {
        scanPrefix(s.keys(), s.from, s.lookupTotal);
        answerLookup(s, scanRun, scanTotal);
    }

    private void answerLookup(final Session s, final int run, final int total)
    {
        s.l2Pages = run - s.from;
        s.l3Pages = total - run;
        finish(s, total - s.from);
    }

    /**
     * Starts loads for the keys of {@code [start, end)} that are in L3 but not in the pool.
     *
     * @return keys the session now waits for (when waitKind is not 0)
     */
    private int startLoads(final Session s, final int start, final int end, final byte waitKind)
    {
        final KeyChain keys = s.keys();
        int waiting = 0;
        for (int i = start; i < end; i++)
        {
            final long high = keys.high(i);
            final long low = keys.low(i);
            final int slot = index.find(high, low);
            if (servingPage(slot, high, low) != NONE)
            {
                continue;
            }
            final int page = loadFor(slot, high, low, true);
            if (page == NONE)
            {
                break;
            }
            if (waitKind != 0)
            {
                if (!addWaiter(page, s, i, waitKind))
                {
                    break;
                }
                s.status[i] = (byte)PageStatus.WAITING.ordinal();
                waiting++;
            }
        }
        return waiting;
    }

    private void prefetch(final Session s)
    {
        scanPrefix(s.keys(), s.from, s.from + s.count);
        final long before = counters.getOpaque(EngineCounter.L3_READS);
        startLoads(s, scanRun, scanTotal, (byte)0);
        finish(s, (int)(counters.getOpaque(EngineCounter.L3_READS) - before));
    }

    // ------------------------------------------------------------------------------------------------
    // Acquire and release
    // ------------------------------------------------------------------------------------------------

    private void resetStatuses(final Session s)
    {
        for (int i = s.from; i < s.from + s.count; i++)
        {
            final PageStatus status = PageStatus.of(s.status[i]);
            if (!status.isPinned() && status != PageStatus.RESERVED)
            {
                s.status[i] = (byte)PageStatus.NONE.ordinal();
            }
        }
    }

    private void acquire(final Session s)
    {
        resetStatuses(s);
        counters.add(EngineCounter.ACQUIRE_PAGES_REQUESTED, s.count);
        s.cursor = s.from;
        continueAcquire(s);
    }

    /**
     * Walks the keys from the session's cursor: pins pool pages, starts or joins loads of L3 pages, and
     * probes the tiers about keys the index does not know (a restarted engine, another node's writes),
     * then carries on from the same key once they answered. Ends at the first key that is nowhere.
     */
    private void continueAcquire(final Session s)
    {
        final KeyChain keys = s.keys();
        final int end = s.from + s.count;
        for (; s.cursor < end; s.cursor++)
        {
            final int i = s.cursor;
            if (PageStatus.of(s.status[i]).isPinned())
            {
                continue;
            }
            final long high = keys.high(i);
            final long low = keys.low(i);
            final int slot = index.find(high, low);
            final int serving = servingPage(slot, high, low);
            if (serving != NONE)
            {
                if (!pinFor(s, i, serving, PageStatus.PINNED))
                {
                    break;
                }
                continue;
            }
            loadStarvedForSpace = false;
            final int page = loadFor(slot, high, low, false);
            if (page != NONE)
            {
                if (!addWaiter(page, s, i, WAIT_PIN))
                {
                    break;
                }
                s.status[i] = (byte)PageStatus.WAITING.ordinal();
                s.pending++;
                continue;
            }
            if (loadStarvedForSpace && waitForSpace(s))
            {
                return;
            }
            final boolean unknown = slot == KeyTable.NONE || (index.page(slot) == PageIndex.NO_PAGE && index.tiers(slot) == 0);
            if (unknown && probeRound(s, i, end))
            {
                s.phase = PHASE_ACQUIRE_PROBING;
                return;
            }
            break;
        }
        s.cursor = end;
        s.phase = PHASE_NONE;
        if (s.pending == 0)
        {
            finishAcquire(s);
        }
    }

    /**
     * Parks a reserve or an acquire that found no page while write-back evictions are in flight: pages
     * free up as their backups land. Past {@code l3.io-timeout} it goes on without.
     *
     * @return whether the request now waits in the space waiters
     */
    private boolean waitForSpace(final Session s)
    {
        final long now = clock.nanoTime();
        if (evictPending == 0 || (s.phase == PHASE_SPACE_WAIT && now >= s.spaceDeadlineNanos))
        {
            return false;
        }
        if (s.phase != PHASE_SPACE_WAIT)
        {
            s.phase = PHASE_SPACE_WAIT;
            s.spaceDeadlineNanos = now + config.l3IoTimeout().toNanos();
        }
        spaceWaiters.add(s);
        return true;
    }

    private boolean pinFor(final Session s, final int key, final int page, final PageStatus as)
    {
        final long word = pool.stateWordAcquire(page);
        if (!pool.tryPin(page, PageStateWord.generation(word)))
        {
            return false;
        }
        s.pageIds[key] = page;
        s.generations[key] = PageStateWord.generation(word);
        if ((pageFlags[page] & F_LOADED_UNUSED) != 0)
        {
            pageFlags[page] &= ~F_LOADED_UNUSED;
            s.status[key] = (byte)PageStatus.PINNED_FROM_L3.ordinal();
        }
        else
        {
            s.status[key] = (byte)as.ordinal();
        }
        hold(s, key);
        lru.touch(page);
        pool.lastAccess(page, clock.nanoTime());
        final int hits = pool.hitCount(page) + 1;
        pool.hitCount(page, hits);
        if (writePolicy == WritePolicy.WRITE_THROUGH_SELECTIVE && hits >= config.writeHitThreshold())
        {
            backupIfMissing(page);
        }
        return true;
    }

    private void finishAcquire(final Session s)
    {
        final int end = s.from + s.count;
        int run = s.from;
        int fromPool = 0;
        int fromL3 = 0;
        while (run < end && PageStatus.of(s.status[run]).isPinned())
        {
            if (s.status[run] == PageStatus.PINNED_FROM_L3.ordinal())
            {
                fromL3++;
            }
            else
            {
                fromPool++;
            }
            run++;
        }
        // Pins past the first gap are not part of the prefix: give them back, keep the pages cached.
        for (int i = run; i < end; i++)
        {
            final PageStatus status = PageStatus.of(s.status[i]);
            if (status.isPinned())
            {
                pool.unpin(s.pageIds[i]);
                s.pageIds[i] = NONE;
            }
            if (status.isPinned() || status == PageStatus.WAITING)
            {
                s.status[i] = (byte)PageStatus.MISS.ordinal();
            }
        }
        s.acquiredFromPool = fromPool;
        s.acquiredFromL3 = fromL3;
        counters.add(EngineCounter.L2_HIT_PAGES, fromPool);
        counters.add(EngineCounter.L3_HIT_PAGES, fromL3);
        finish(s, run - s.from);
    }

    private int release(final Session s, final int from, final int end)
    {
        int released = 0;
        for (int i = from; i < end; i++)
        {
            final PageStatus status = PageStatus.of(s.status[i]);
            if (status.isPinned())
            {
                pool.unpin(s.pageIds[i]);
                released++;
            }
            if (status != PageStatus.RESERVED)
            {
                s.status[i] = (byte)PageStatus.NONE.ordinal();
                s.pageIds[i] = NONE;
            }
        }
        if (released > 0)
        {
            resumeSpaceWaiters();
        }
        return released;
    }

    // ------------------------------------------------------------------------------------------------
    // Reserve, commit, abort
    // ------------------------------------------------------------------------------------------------

    private void reserve(final Session s)
    {
        resetStatuses(s);
        s.cursor = s.from;
        continueReserve(s);
    }

    private void continueReserve(final Session s)
    {
        final KeyChain keys = s.keys();
        final int end = s.from + s.count;
        final long now = clock.nanoTime();
        final long deadline = now + config.reservationTimeout().toNanos();
        for (; s.cursor < end; s.cursor++)
        {
            final int i = s.cursor;
            final long high = keys.high(i);
            final long low = keys.low(i);
            final int slot = index.find(high, low);
            if (slot != KeyTable.NONE && index.page(slot) != PageIndex.NO_PAGE)
            {
                final int page = index.page(slot);
                if (page == s.pageIds[i] && s.status[i] == PageStatus.RESERVED.ordinal())
                {
                    continue;
                }
                s.status[i] = (byte)(servingPage(slot, high, low) != NONE ? PageStatus.EXISTS : PageStatus.BUSY).ordinal();
                continue;
            }
            final int page = allocatePage();
            if (page == NONE)
            {
                if (waitForSpace(s))
                {
                    return;
                }
                counters.increment(EngineCounter.RESERVE_POOL_FULL);
                for (int k = i; k < end; k++)
                {
                    s.status[k] = (byte)PageStatus.POOL_FULL.ordinal();
                }
                break;
            }
            final long word = pool.stateWordAcquire(page);
            final int generation = PageStateWord.generation(word);
            pool.key(page, high, low);
            pool.reservation(page, s.id, deadline);
            pool.hitCount(page, 0);
            pool.compareAndSetStateWord(page, word, PageStateWord.word(generation, 0, WRITING));
            index.bindPage(high, low, page);
            addReservation(page, generation, deadline);
            s.pageIds[i] = page;
            s.generations[i] = generation;
            s.status[i] = (byte)PageStatus.RESERVED.ordinal();
            s.lengths[i] = 0;
            hold(s, i);
            s.resultCount++;
            counters.increment(EngineCounter.PAGES_RESERVED);
        }
        s.phase = PHASE_NONE;
        finish(s, s.resultCount);
    }

    private void addReservation(final int page, final int generation, final long deadline)
    {
        if (reservations.isFull())
        {
            // Most entries are stale (committed or aborted in time); keep the live ones, in order.
            for (int n = reservations.size(); n > 0; n--)
            {
                final int p = (int)reservations.peek(0);
                final int g = (int)reservations.peek(1);
                final long d = reservations.peek(2);
                reservations.poll();
                final long word = pool.stateWordAcquire(p);
                if (PageStateWord.state(word) == WRITING && PageStateWord.generation(word) == g)
                {
                    reservations.add(p, g, d);
                }
            }
        }
        reservations.add(page, generation, deadline);
    }

    private void addLookupDeadline(final Session s, final long deadline)
    {
        if (lookupDeadlines.isFull())
        {
            for (int n = lookupDeadlines.size(); n > 0; n--)
            {
                final int id = (int)lookupDeadlines.peek(0);
                final int seq = (int)lookupDeadlines.peek(1);
                final long d = lookupDeadlines.peek(2);
                lookupDeadlines.poll();
                final Session waiting = sessions[id];
                if (waiting != null && waiting.inFlight && waiting.opSeq == seq)
                {
                    lookupDeadlines.add(id, seq, d);
                }
            }
        }
        lookupDeadlines.add(s.id, s.opSeq, deadline);
    }

    private void resumeSpaceWaiters()
    {
        int budget = spaceWaiters.size();
        while (budget-- > 0 && (freeCount > 0 || evictPending == 0 || closing))
        {
            final Session s = spaceWaiters.poll();
            if (s.inFlight && s.phase == PHASE_SPACE_WAIT)
            {
                if (closing)
                {
                    s.spaceDeadlineNanos = 0;
                }
                continueAfterSpaceWait(s);
            }
        }
    }

    private void expireSpaceWaiters(final long now)
    {
        for (int n = spaceWaiters.size(); n > 0; n--)
        {
            final Session s = spaceWaiters.poll();
            if (!s.inFlight || s.phase != PHASE_SPACE_WAIT)
            {
                continue;
            }
            if (now >= s.spaceDeadlineNanos)
            {
                continueAfterSpaceWait(s); // past its deadline it goes on without: POOL_FULL, or a shorter prefix
            }
            else
            {
                spaceWaiters.add(s);
            }
        }
    }

    private void continueAfterSpaceWait(final Session s)
    {
        if (s.op == SessionOp.RESERVE)
        {
            continueReserve(s);
        }
        else if (s.op == SessionOp.ACQUIRE)
        {
            continueAcquire(s);
        }
    }

    private void commit(final Session s)
    {
        final int end = s.from + s.count;
        int committed = 0;
        for (int i = s.from; i < end; i++)
        {
            if (s.status[i] != PageStatus.RESERVED.ordinal())
            {
                continue;
            }
            final int page = s.pageIds[i];
            final long word = pool.stateWordAcquire(page);
            if (PageStateWord.state(word) != WRITING || PageStateWord.generation(word) != s.generations[i] || pool.owner(page) != s.id)
            {
                s.status[i] = (byte)PageStatus.EXPIRED.ordinal();
                s.pageIds[i] = NONE;
                continue;
            }
            final int length = s.lengths[i];
            // The committing client sealed the frame on its own thread (CRC32C, trailer): the engine
            // thread does no per-byte work, it only checks that a seal of this length for this key is there.
            if (length < 1 || length > pool.pageSize() || !pool.isSealed(page, pool.keyHigh(page), pool.keyLow(page), length))
            {
                s.status[i] = (byte)PageStatus.INVALID.ordinal();
                freeWritingPage(page, word);
                s.pageIds[i] = NONE;
                continue;
            }
            pool.reservation(page, ENGINE_OWNER, 0);
            if (!pool.compareAndSetStateWord(page, word, PageStateWord.word(PageStateWord.generation(word), 0, SERVING)))
            {
                throw new IllegalStateException("page " + page + " changed while its writer held it");
            }
            lru.touch(page);
            pool.lastAccess(page, clock.nanoTime());
            s.status[i] = (byte)PageStatus.COMMITTED.ordinal();
            s.pageIds[i] = NONE;
            committed++;
            if (writePolicy == WritePolicy.WRITE_THROUGH)
            {
                backupIfMissing(page);
            }
        }
        counters.add(EngineCounter.PAGES_COMMITTED, committed);
        evictIfAboveHighWater();
        finish(s, committed);
    }

    /**
     * Gives back the session's reservations in {@code [from, end)}. An abort by the client frees them at
     * once: it says it stopped writing. A session that expired said nothing, and may still be writing
     * through the slices it holds, so its pages rest in quarantine before anyone else gets them.
     */
    private int abort(final Session s, final int from, final int end, final boolean expired)
    {
        int aborted = 0;
        final long now = clock.nanoTime();
        for (int i = from; i < end; i++)
        {
            if (s.status[i] != PageStatus.RESERVED.ordinal())
            {
                continue;
            }
            final int page = s.pageIds[i];
            final long word = pool.stateWordAcquire(page);
            if (PageStateWord.state(word) == WRITING && PageStateWord.generation(word) == s.generations[i] && pool.owner(page) == s.id)
            {
                if (expired)
                {
                    reclaimWritingPage(page, word, now);
                }
                else
                {
                    freeWritingPage(page, word);
                    aborted++;
                }
            }
            s.status[i] = (byte)PageStatus.NONE.ordinal();
            s.pageIds[i] = NONE;
        }
        counters.add(EngineCounter.PAGES_ABORTED, aborted);
        return aborted;
    }

    /** Takes a WRITING page back from a writer that may still be writing: invisible, then quarantined. */
    private void reclaimWritingPage(final int page, final long word, final long now)
    {
        if (!pool.compareAndSetStateWord(page, word, PageStateWord.word(PageStateWord.generation(word) + 1, 0, FREE)))
        {
            throw new IllegalStateException("page " + page + " changed while the engine reclaimed it");
        }
        index.unbindPage(pool.keyHigh(page), pool.keyLow(page), page);
        pageFlags[page] = 0;
        counters.increment(EngineCounter.RESERVATIONS_EXPIRED);
        quarantine(page, now);
    }

    /** Returns a WRITING page to the free list at once: only for pages no one else can still be writing. */
    private void freeWritingPage(final int page, final long word)
    {
        if (!pool.compareAndSetStateWord(page, word, PageStateWord.word(PageStateWord.generation(word) + 1, 0, FREE)))
        {
            throw new IllegalStateException("page " + page + " changed while the engine freed it");
        }
        index.unbindPage(pool.keyHigh(page), pool.keyLow(page), page);
        pageFlags[page] = 0;
        pushFree(page);
    }

    // ------------------------------------------------------------------------------------------------
    // Pages: allocation, eviction
    // ------------------------------------------------------------------------------------------------

    private long used()
    {
        return pageCount - freeCount;
    }

    private void pushFree(final int page)
    {
        backupAttempts[page] = 0;
        freeStack[freeCount++] = page;
        counters.set(EngineCounter.PAGES_IN_USE, used());
    }

    private int allocatePage()
    {
        if (used() >= highWater || freeCount == 0)
        {
            evictDownTo(Math.min(lowWater, pageCount - 1L));
        }
        if (freeCount == 0)
        {
            return NONE;
        }
        final int page = freeStack[--freeCount];
        counters.set(EngineCounter.PAGES_IN_USE, used());
        return page;
    }

    private void evictIfAboveHighWater()
    {
        if (used() > highWater)
        {
            evictDownTo(lowWater);
        }
    }

    private int evictDownTo(final long target)
    {
        int evicted = 0;
        int scanned = 0;
        final long budget = Math.max(64, 4 * (used() - target));
        int page = lru.first();
        while (page != IntLruList.NONE && used() - evictPending > target && scanned < budget)
        {
            final int next = lru.next(page);
            scanned++;
            if (tryEvict(page))
            {
                evicted++;
            }
            page = next;
        }
        return evicted;
    }

    private boolean tryEvict(final int page)
    {
        if ((pageFlags[page] & (F_BACKUP | F_LOADING)) != 0)
        {
            return false;
        }
        final long word = pool.stateWordAcquire(page);
        if (PageStateWord.state(word) != SERVING || PageStateWord.pins(word) != 0)
        {
            return false;
        }
        final boolean needsCopy = writePolicy == WritePolicy.WRITE_BACK || (pageFlags[page] & F_BACKUP_FAILED) != 0;
        if (writePolicy != WritePolicy.NONE && needsCopy && !inL3(page))
        {
            if (backupAttempts[page] >= MAX_BACKUP_ATTEMPTS)
            {
                return dropUnbacked(page, word);
            }
            if (startBackup(page))
            {
                pageFlags[page] |= F_EVICT_PENDING;
                evictPending++;
                lru.remove(page);
            }
            return false;
        }
        return evictUnpinned(page, word);
    }

    /** Evicts a page whose backups kept failing: its only copy is lost, which is counted and said. */
    private boolean dropUnbacked(final int page, final long word)
    {
        final long high = pool.keyHigh(page);
        final long low = pool.keyLow(page);
        if (!evictUnpinned(page, word))
        {
            return false;
        }
        counters.increment(EngineCounter.BACKUPS_LOST);
        LOG.log(System.Logger.Level.WARNING, "page {0} left the pool without an L3 copy: its backup failed {1} times; counted in backups_lost",
            new io.kvtier.spi.PageKey(high, low), MAX_BACKUP_ATTEMPTS);
        return true;
    }

    /**
     * Evicts a SERVING page seen unpinned in {@code word}: SERVING(0 pins) → EVICTING → FREE with a new
     * generation, so stale handles fail. Nothing changes if a client process holds a pin on it in the
     * pin table (see {@link PagePool#evictIfUnpinned}).
     */
    private boolean evictUnpinned(final int page, final long word)
    {
        if (!pool.evictIfUnpinned(page, word))
        {
            return false;
        }
        if ((pageFlags[page] & F_BACKUP_QUEUED) != 0)
        {
            // Its write-through copy never started: L3 is slower than the commits. Counted, and said once
            // in a while, since under a slow L3 it happens to every page that waits too long.
            backlogLive--;
            counters.set(EngineCounter.BACKUPS_QUEUED, backlogLive);
            counters.increment(EngineCounter.BACKUPS_SKIPPED);
            final long now = clock.nanoTime();
            if (now - lastSkipWarningNanos > SKIP_WARNING_PERIOD_NS)
            {
                lastSkipWarningNanos = now;
                LOG.log(System.Logger.Level.WARNING, "L3 takes backups more slowly than pages are committed: {0} pages left the pool"
                    + " before their backup could start (backups_skipped); {1} backups in flight, at most {2} (l3.max-backup-pages)",
                    counters.getOpaque(EngineCounter.BACKUPS_SKIPPED), backupsInFlight, maxBackupsInFlight);
            }
            if (backlogLive == 0 && backupsInFlight == 0)
            {
                answerFlushWaiters();
            }
        }
        index.unbindPage(pool.keyHigh(page), pool.keyLow(page), page);
        lru.remove(page);
        pageFlags[page] = 0;
        pushFree(page);
        counters.increment(EngineCounter.PAGES_EVICTED);
        return true;
    }

    private boolean inL3(final int page)
    {
        final int slot = index.find(pool.keyHigh(page), pool.keyLow(page));
        return slot != KeyTable.NONE && index.tiers(slot) != 0;
    }

    private void evictKeys(final Session s)
    {
        final KeyChain keys = s.keys();
        int evicted = 0;
        for (int i = s.from; i < s.from + s.count; i++)
        {
            final int page = servingPage(index.find(keys.high(i), keys.low(i)), keys.high(i), keys.low(i));
            if (page != NONE && (pageFlags[page] & F_BACKUP) == 0 && evictUnpinned(page, pool.stateWordAcquire(page)))
            {
                evicted++;
            }
        }
        resumeSpaceWaiters();
        finish(s, evicted);
    }

    // ------------------------------------------------------------------------------------------------
    // Loads (L3 → pool)
    // ------------------------------------------------------------------------------------------------

    /**
     * @return the page a key not in the pool is loading into: a load already under way, or one started
     *         now from the first L3 tier that holds it; NONE when L3 lacks it, a client is writing it, or
     *         no page can be had
     */
    private int loadFor(final int slot, final long high, final long low, final boolean prefetch)
    {
        final int loading = loadingPage(slot);
        if (loading != NONE)
        {
            return loading;
        }
        if (slot == KeyTable.NONE || index.tiers(slot) == 0 || index.page(slot) != PageIndex.NO_PAGE)
        {
            return NONE;
        }
        return startLoad(high, low, index.tiers(slot), prefetch);
    }

    /** @return the page the key is being loaded into, or NONE when no page could be had ({@link #loadStarvedForSpace}) */
    private int startLoad(final long high, final long low, final int tierBits, final boolean prefetch)
    {
        final int page = allocatePage();
        if (page == NONE)
        {
            loadStarvedForSpace = true;
            return NONE;
        }
        final long word = pool.stateWordAcquire(page);
        pool.key(page, high, low);
        pool.reservation(page, ENGINE_OWNER, 0);
        pool.hitCount(page, 0);
        pool.compareAndSetStateWord(page, word, PageStateWord.word(PageStateWord.generation(word), 0, WRITING));
        index.bindPage(high, low, page);
        pageFlags[page] = (byte)(F_LOADING | (prefetch ? F_PREFETCH : 0));
        final int tier = Integer.numberOfTrailingZeros(tierBits);
        loadTier[page] = tier;
        queuePageIo(tier, TierIoBatch.READ, page);
        counters.increment(EngineCounter.L3_READS);
        return page;
    }

    private void onReadDone(final TierIoBatch batch, final int i)
    {
        final int page = batch.page[i];
        final TierStatus status = batch.status[i];
        final int tier = batch.tier;
        final long high = batch.keyHigh[i];
        final long low = batch.keyLow[i];
        final boolean verified = status == TierStatus.OK && batch.check[i] == PagePool.FrameCheck.VALID;
        if (verified)
        {
            final long word = pool.stateWordAcquire(page);
            pool.compareAndSetStateWord(page, word, PageStateWord.word(PageStateWord.generation(word), 0, SERVING));
            if ((pageFlags[page] & F_PREFETCH) != 0)
            {
                counters.increment(EngineCounter.PREFETCH_PAGES);
            }
            pageFlags[page] = F_LOADED_UNUSED;
            lru.touch(page);
            pool.lastAccess(page, clock.nanoTime());
            counters.increment(EngineCounter.L3_PAGES_LOADED);
            counters.add(EngineCounter.L3_BYTES_READ, pool.frameLength());
            wakeWaiters(page, true);
            return;
        }
        // Not a usable frame: count why, forget that this tier has it, try another tier or give the page back.
        switch (status)
        {
            case OK, CORRUPT ->
            {
                counters.increment(EngineCounter.L3_CORRUPT);
                LOG.log(System.Logger.Level.WARNING, "tier {0}: page {1} failed verification ({2}); treated as a miss and removed",
                    tiers.get(tier).name(), new io.kvtier.spi.PageKey(high, low), status == TierStatus.OK ? batch.check[i] : "tier reported corrupt");
                queueKeyIo(tier, TierIoBatch.REMOVE, high, low, ENGINE_OWNER, 0, 0);
            }
            case NOT_FOUND -> counters.increment(EngineCounter.L3_READ_MISSES);
            default -> counters.increment(EngineCounter.L3_ERRORS);
        }
        index.removeTier(high, low, tier);
        final int slot = index.find(high, low);
        final int otherTiers = slot == KeyTable.NONE ? 0 : index.tiers(slot);
        final boolean uncertain = status != TierStatus.OK && status != TierStatus.CORRUPT && status != TierStatus.NOT_FOUND;
        if (otherTiers != 0 && !uncertain && (pageFlags[page] & F_LOAD_ABANDONED) == 0)
        {
            final int next = Integer.numberOfTrailingZeros(otherTiers);
            loadTier[page] = next;
            queuePageIo(next, TierIoBatch.READ, page);
            counters.increment(EngineCounter.L3_READS);
            return;
        }
        wakeWaiters(page, false);
        final long word = pool.stateWordAcquire(page);
        if (!pool.compareAndSetStateWord(page, word, PageStateWord.word(PageStateWord.generation(word) + 1, 0, FREE)))
        {
            throw new IllegalStateException("loading page " + page + " changed under the engine");
        }
        index.unbindPage(high, low, page);
        pageFlags[page] = 0;
        if (uncertain)
        {
            // The tier did not say it is done with the segment (error, timeout, plugin failure): rest before reuse.
            quarantine(page, clock.nanoTime());
        }
        else
        {
            pushFree(page);
            resumeSpaceWaiters();
        }
    }

    private void quarantine(final int page, final long now)
    {
        if (quarantine.isFull())
        {
            pushFree(page);
            return;
        }
        quarantine.add(page, now + config.quarantine().toNanos(), 0);
        counters.set(EngineCounter.PAGES_QUARANTINED, quarantine.size());
    }

    // ------------------------------------------------------------------------------------------------
    // Waiters: sessions waiting for loads
    // ------------------------------------------------------------------------------------------------

    private boolean addWaiter(final int page, final Session s, final int key, final byte kind)
    {
        if (waiterFree == NONE)
        {
            return false;
        }
        final int node = waiterFree;
        waiterFree = waiterNext[node];
        waiterSession[node] = s.id;
        waiterKey[node] = key;
        waiterSeq[node] = s.opSeq;
        waiterKind[node] = kind;
        waiterNext[node] = waiterHead[page];
        waiterHead[page] = node;
        return true;
    }

    private void wakeWaiters(final int page, final boolean loaded)
    {
        int node = waiterHead[page];
        waiterHead[page] = NONE;
        while (node != NONE)
        {
            final int next = waiterNext[node];
            final Session s = sessions[waiterSession[node]];
            final int key = waiterKey[node];
            if (s != null && s.inFlight && s.opSeq == waiterSeq[node] && s.status[key] == PageStatus.WAITING.ordinal())
            {
                if (!loaded)
                {
                    s.status[key] = (byte)PageStatus.MISS.ordinal();
                }
                else if (waiterKind[node] == WAIT_PIN)
                {
                    if (!pinFor(s, key, page, PageStatus.PINNED_FROM_L3))
                    {
                        s.status[key] = (byte)PageStatus.MISS.ordinal();
                    }
                }
                else
                {
                    s.status[key] = (byte)PageStatus.LOADED.ordinal();
                }
                if (--s.pending == 0)
                {
                    waitOver(s);
                }
            }
            waiterNext[node] = waiterFree;
            waiterFree = node;
            node = next;
        }
    }

    private void waitOver(final Session s)
    {
        switch (s.phase)
        {
            case PHASE_PROBING -> lookupAfterProbe(s);
            case PHASE_PREFETCH_WAIT -> finishLookup(s);
            case PHASE_NONE ->
            {
                if (s.op == SessionOp.ACQUIRE)
                {
                    finishAcquire(s);
                }
            }
            default ->
            {
                // The acquire's walk still waits (for probes, or for space): the walk finishes it.
            }
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Backups (pool → L3)
    // ------------------------------------------------------------------------------------------------

    private void backupIfMissing(final int page)
    {
        if ((pageFlags[page] & (F_BACKUP | F_BACKUP_QUEUED)) == 0 && !inL3(page) && !startBackup(page))
        {
            queueBackup(page);
        }
    }

    /**
     * Starts a backup unless {@code l3.max-backup-pages} are already pinned by backups: a slow L3 must
     * not pin the whole pool (it did, on ext4, until every reserve found the pool full).
     */
    private boolean startBackup(final int page)
    {
        if (tierCount == 0 || backupsInFlight >= maxBackupsInFlight || !pool.tryPin(page))
        {
            return false;
        }
        pageFlags[page] |= F_BACKUP;
        backupsInFlight++;
        counters.set(EngineCounter.BACKUPS_IN_FLIGHT, backupsInFlight);
        counters.increment(EngineCounter.BACKUPS_STARTED);
        queuePageIo(backupTier, TierIoBatch.WRITE, page);
        return true;
    }

    /**
     * Puts a page that needs a backup in the backlog, unpinned: it starts when a backup in flight ends,
     * if the page is still there; if eviction takes it first, its copy is counted as skipped.
     */
    private void queueBackup(final int page)
    {
        if (tierCount == 0 || (pageFlags[page] & F_BACKUP_QUEUED) != 0)
        {
            return;
        }
        if (backupBacklog.isFull())
        {
            // Stale entries (pages evicted or backed up since) make room; live ones keep their order.
            for (int n = backupBacklog.size(); n > 0; n--)
            {
                final int p = (int)backupBacklog.peek(0);
                final int g = (int)backupBacklog.peek(1);
                backupBacklog.poll();
                if ((pageFlags[p] & F_BACKUP_QUEUED) != 0 && PageStateWord.generation(pool.stateWordAcquire(p)) == g)
                {
                    backupBacklog.add(p, g, 0);
                }
            }
        }
        pageFlags[page] |= F_BACKUP_QUEUED;
        backupBacklog.add(page, PageStateWord.generation(pool.stateWordAcquire(page)), 0);
        backlogLive++;
        counters.set(EngineCounter.BACKUPS_QUEUED, backlogLive);
    }

    /** Starts backlogged backups while there is room in flight. */
    private void drainBacklog()
    {
        while (backupsInFlight < maxBackupsInFlight && !backupBacklog.isEmpty())
        {
            final int page = (int)backupBacklog.peek(0);
            final int generation = (int)backupBacklog.peek(1);
            backupBacklog.poll();
            final long word = pool.stateWordAcquire(page);
            if ((pageFlags[page] & F_BACKUP_QUEUED) == 0 || PageStateWord.state(word) != SERVING || PageStateWord.generation(word) != generation)
            {
                continue; // stale: the page was evicted, and maybe reused, since
            }
            pageFlags[page] &= ~F_BACKUP_QUEUED;
            backlogLive--;
            if ((pageFlags[page] & F_BACKUP) == 0 && !inL3(page))
            {
                startBackup(page);
            }
        }
        counters.set(EngineCounter.BACKUPS_QUEUED, backlogLive);
    }

    private void backupKeys(final Session s)
    {
        final KeyChain keys = s.keys();
        int started = 0;
        for (int i = s.from; i < s.from + s.count; i++)
        {
            final int page = servingPage(index.find(keys.high(i), keys.low(i)), keys.high(i), keys.low(i));
            if (page != NONE && (pageFlags[page] & (F_BACKUP | F_BACKUP_QUEUED)) == 0 && !inL3(page))
            {
                if (!startBackup(page))
                {
                    queueBackup(page);
                }
                started++;
            }
        }
        finish(s, started);
    }

    private void onWriteDone(final TierIoBatch batch, final int i)
    {
        final int page = batch.page[i];
        final TierStatus status = batch.status[i];
        final boolean copied = status == TierStatus.OK;
        if (copied)
        {
            counters.increment(EngineCounter.BACKUPS_COMPLETED);
            counters.add(EngineCounter.L3_BYTES_WRITTEN, pool.frameLength());
            negativeProbes.present(pool.keyHigh(page), pool.keyLow(page));
            backupAttempts[page] = 0;
            pageFlags[page] &= ~F_BACKUP_FAILED;
            if (!index.addTier(pool.keyHigh(page), pool.keyLow(page), batch.tier))
            {
                counters.increment(EngineCounter.INDEX_FULL);
            }
        }
        else
        {
            counters.increment(EngineCounter.BACKUPS_FAILED);
            if (backupAttempts[page] < Byte.MAX_VALUE)
            {
                backupAttempts[page]++;
            }
            pageFlags[page] |= F_BACKUP_FAILED;
            LOG.log(System.Logger.Level.WARNING, "backup of page {0} to tier {1} failed ({2}), attempt {3} of {4}; the page stays in the pool",
                new io.kvtier.spi.PageKey(pool.keyHigh(page), pool.keyLow(page)), tiers.get(batch.tier).name(), status,
                backupAttempts[page], MAX_BACKUP_ATTEMPTS);
        }
        pageFlags[page] &= ~F_BACKUP;
        pool.unpin(page);
        backupsInFlight--;
        counters.set(EngineCounter.BACKUPS_IN_FLIGHT, backupsInFlight);
        drainBacklog();
        if ((pageFlags[page] & F_EVICT_PENDING) != 0)
        {
            pageFlags[page] &= ~F_EVICT_PENDING;
            evictPending--;
            final long word = pool.stateWordAcquire(page);
            if (copied ? !evictUnpinned(page, word) : backupAttempts[page] < MAX_BACKUP_ATTEMPTS || !dropUnbacked(page, word))
            {
                // Pinned meanwhile, or not copied yet: it stays cached, and the next eviction that reaches
                // it tries its backup again, which spaces the attempts out by the pool's own churn.
                lru.touch(page);
            }
            resumeSpaceWaiters();
        }
        if (backupsInFlight == 0 && backlogLive == 0)
        {
            answerFlushWaiters();
        }
    }

    private void answerFlushWaiters()
    {
        while (!flushWaiters.isEmpty())
        {
            final Session waiting = flushWaiters.poll();
            if (waiting.inFlight && waiting.op == SessionOp.FLUSH)
            {
                finish(waiting, 0);
            }
        }
    }

    private void flush(final Session s)
    {
        if (backupsInFlight == 0 && backlogLive == 0)
        {
            finish(s, 0);
            return;
        }
        flushWaiters.add(s);
    }

    // ------------------------------------------------------------------------------------------------
    // Probes, removals
    // ------------------------------------------------------------------------------------------------

    private void onExistsDone(final TierIoBatch batch, final int i)
    {
        final TierStatus status = batch.status[i];
        if (status == TierStatus.OK)
        {
            counters.increment(EngineCounter.PROBE_HITS);
            negativeProbes.present(batch.keyHigh[i], batch.keyLow[i]);
            if (!index.addTier(batch.keyHigh[i], batch.keyLow[i], batch.tier))
            {
                counters.increment(EngineCounter.INDEX_FULL);
            }
            else
            {
                // Found because a request is about to use it: spare it from the sweep that makes room for the next hit.
                index.touch(index.find(batch.keyHigh[i], batch.keyLow[i]));
            }
        }
        else if (status == TierStatus.NOT_FOUND)
        {
            final int slot = index.find(batch.keyHigh[i], batch.keyLow[i]);
            if (slot == KeyTable.NONE || index.tiers(slot) == 0)
            {
                negativeProbes.missing(batch.keyHigh[i], batch.keyLow[i], clock.nanoTime());
            }
        }
        else
        {
            counters.increment(EngineCounter.L3_ERRORS);
        }
        if (batch.timedOut)
        {
            return; // its sessions were answered when it timed out
        }
        answerProbe(batch, i);
    }

    private void answerProbe(final TierIoBatch batch, final int i)
    {
        final Session s = sessions[batch.session[i]];
        if (s == null || !s.inFlight || s.opSeq != batch.opSeq[i] || (s.phase != PHASE_PROBING && s.phase != PHASE_ACQUIRE_PROBING))
        {
            return;
        }
        if (--s.probePending == 0)
        {
            if (s.phase == PHASE_PROBING)
            {
                lookupAfterProbe(s);
            }
            else
            {
                s.phase = PHASE_NONE;
                continueAcquire(s);
            }
        }
    }

    private void onObjectRemoved(final int tier, final long high, final long low)
    {
        counters.increment(EngineCounter.L3_REMOVED_BY_TIER);
        index.removeTier(high, low, tier);
    }

    /** Called from any thread when a tier reports an object it dropped by itself. */
    void objectRemoved(final int tier, final long high, final long low)
    {
        if (isEngineThread())
        {
            onObjectRemoved(tier, high, low);
            return;
        }
        if (stopped)
        {
            return;
        }
        final long sequence = ring.next();
        try
        {
            final EngineEvent event = ring.get(sequence);
            event.type = EngineEvent.TIER_OBJECT_REMOVED;
            event.tier = tier;
            event.keyHigh = high;
            event.keyLow = low;
        }
        finally
        {
            ring.publish(sequence);
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Tier batches
    // ------------------------------------------------------------------------------------------------

    private TierIoBatch batchFor(final int tier, final int op)
    {
        TierIoBatch batch = openBatch[tier][op];
        if (batch == null)
        {
            batch = freeBatches[tier][op].poll();
            openBatch[tier][op] = batch;
        }
        return batch;
    }

    /** Queues a page read or write; waits in the page list when every batch of the tier is in flight. */
    private void queuePageIo(final int tier, final int op, final int page)
    {
        final TierIoBatch batch = batchFor(tier, op);
        if (batch == null)
        {
            ioNext[page] = NONE;
            if (ioTail[tier][op] == NONE)
            {
                ioHead[tier][op] = page;
            }
            else
            {
                ioNext[ioTail[tier][op]] = page;
            }
            ioTail[tier][op] = page;
            return;
        }
        batch.add(pool.keyHigh(page), pool.keyLow(page), page, ENGINE_OWNER, 0, 0);
        if (batch.isFull())
        {
            submit(batch);
        }
    }

    /** Queues an exists or remove; these are skipped, not queued, when no batch is free. */
    private boolean queueKeyIo(final int tier, final int op, final long high, final long low, final int session, final int key, final int seq)
    {
        final TierIoBatch batch = batchFor(tier, op);
        if (batch == null)
        {
            return false;
        }
        batch.add(high, low, NONE, session, key, seq);
        if (batch.isFull())
        {
            submit(batch);
        }
        return true;
    }

    private void submit(final TierIoBatch batch)
    {
        openBatch[batch.tier][batch.op] = null;
        if (batch.size == 0)
        {
            freeBatches[batch.tier][batch.op].add(batch);
            return;
        }
        inflight[inflightCount++] = batch;
        batch.arm(clock.nanoTime());
        final StorageTier tier = tierArray[batch.tier];
        try
        {
            switch (batch.op)
            {
                case TierIoBatch.READ -> tier.read(batch);
                case TierIoBatch.WRITE -> tier.write(batch);
                case TierIoBatch.EXISTS -> tier.exists(batch);
                case TierIoBatch.REMOVE -> tier.remove(batch);
                default -> throw new IllegalStateException("unknown batch op " + batch.op);
            }
        }
        catch (final RuntimeException | Error ex)
        {
            counters.increment(EngineCounter.PLUGIN_ERRORS);
            LOG.log(System.Logger.Level.ERROR, "tier " + tiers.get(batch.tier).name() + " threw from " + TierIoBatch.opName(batch.op)
                + " of " + batch.size + " keys; they count as I/O errors and the engine keeps running", ex);
            batch.completeRemaining(TierStatus.IO_ERROR);
        }
    }

    @Override
    public void batchDone(final TierIoBatch batch)
    {
        if (isEngineThread())
        {
            doneOnEngineThread.add(batch);
            return;
        }
        if (stopped)
        {
            return; // nobody reads the ring any more; a tier finishing at close must not wait on it
        }
        final long sequence = ring.next();
        try
        {
            final EngineEvent event = ring.get(sequence);
            event.type = EngineEvent.TIER_BATCH_DONE;
            event.batch = batch;
        }
        finally
        {
            ring.publish(sequence);
        }
    }

    private void onBatchDone(final TierIoBatch batch)
    {
        for (int i = 0; i < inflightCount; i++)
        {
            if (inflight[i] == batch)
            {
                inflight[i] = inflight[--inflightCount];
                inflight[inflightCount] = null;
                break;
            }
        }
        for (int i = 0; i < batch.size; i++)
        {
            switch (batch.op)
            {
                case TierIoBatch.READ -> onReadDone(batch, i);
                case TierIoBatch.WRITE -> onWriteDone(batch, i);
                case TierIoBatch.EXISTS -> onExistsDone(batch, i);
                case TierIoBatch.REMOVE ->
                {
                    if (batch.status[i] != TierStatus.OK && batch.status[i] != TierStatus.NOT_FOUND)
                    {
                        counters.increment(EngineCounter.L3_ERRORS);
                    }
                }
                default -> throw new IllegalStateException("unknown batch op " + batch.op);
            }
        }
        final int tier = batch.tier;
        final int op = batch.op;
        batch.reset();
        freeBatches[tier][op].add(batch);
        drainWaitingPages(tier, op);
    }

    private void drainWaitingPages(final int tier, final int op)
    {
        if (op != TierIoBatch.READ && op != TierIoBatch.WRITE)
        {
            return;
        }
        while (ioHead[tier][op] != NONE)
        {
            final TierIoBatch batch = batchFor(tier, op);
            if (batch == null)
            {
                return;
            }
            final int page = ioHead[tier][op];
            ioHead[tier][op] = ioNext[page];
            if (ioHead[tier][op] == NONE)
            {
                ioTail[tier][op] = NONE;
            }
            batch.add(pool.keyHigh(page), pool.keyLow(page), page, ENGINE_OWNER, 0, 0);
            if (batch.isFull())
            {
                submit(batch);
            }
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Housekeeping
    // ------------------------------------------------------------------------------------------------

    private void onTick(final long now)
    {
        final long realNow = System.nanoTime();
        if (realNow - lastHeartbeatNanos >= HEARTBEAT_PERIOD_NS)
        {
            final long nowMillis = System.currentTimeMillis();
            pool.heartbeat(nowMillis);
            lastHeartbeatNanos = realNow;
            reapClients(nowMillis);
            counters.set(EngineCounter.INDEX_FORGOTTEN, index.forgotten());
        }
        expireReservations(now);
        releaseQuarantine(now);
        expireSessions(now);
        expireLookups(now);
        expireBatches(now);
        evictIfAboveHighWater();
        expireSpaceWaiters(now);
    }

    private void reapClients(final long nowMillis)
    {
        clientReclaims[0] = 0;
        clientReclaims[1] = 0;
        clientReaper.reap(nowMillis, clientReclaims);
        counters.set(EngineCounter.CLIENTS_ATTACHED, clientReaper.active());
        if (clientReclaims[0] > 0)
        {
            counters.add(EngineCounter.CLIENTS_RECLAIMED, clientReclaims[0]);
            counters.add(EngineCounter.CLIENT_PINS_RECLAIMED, clientReclaims[1]);
            resumeSpaceWaiters();
        }
    }

    private void expireReservations(final long now)
    {
        while (!reservations.isEmpty() && reservations.peek(2) <= now)
        {
            final int page = (int)reservations.peek(0);
            final int generation = (int)reservations.peek(1);
            reservations.poll();
            final long word = pool.stateWordAcquire(page);
            if (PageStateWord.state(word) != WRITING || PageStateWord.generation(word) != generation || pool.owner(page) == ENGINE_OWNER)
            {
                continue; // committed or aborted in time
            }
            LOG.log(System.Logger.Level.INFO, "reservation of page {0} by session {1} lapsed uncommitted; reclaimed, never visible",
                page, pool.owner(page));
            reclaimWritingPage(page, word, now);
        }
    }

    private void releaseQuarantine(final long now)
    {
        boolean released = false;
        while (!quarantine.isEmpty() && quarantine.peek(1) <= now)
        {
            final int page = (int)quarantine.peek(0);
            quarantine.poll();
            pushFree(page);
            released = true;
        }
        if (released)
        {
            counters.set(EngineCounter.PAGES_QUARANTINED, quarantine.size());
        }
    }

    private void expireSessions(final long now)
    {
        final long timeout = config.sessionTimeout().toNanos();
        for (int id = 1; id < sessions.length; id++)
        {
            final Session s = sessions[id];
            if (s != null && !s.inFlight && now - s.lastActivityNanos > timeout)
            {
                LOG.log(System.Logger.Level.INFO, "session {0} silent for {1} ms: lease expired, its pins and reservations reclaimed",
                    id, (now - s.lastActivityNanos) / 1_000_000);
                releaseEverything(s, true);
                unregister(s);
                s.expired = true;
                counters.increment(EngineCounter.SESSIONS_EXPIRED);
            }
        }
    }

    private void expireLookups(final long now)
    {
        while (!lookupDeadlines.isEmpty() && lookupDeadlines.peek(2) <= now)
        {
            final Session s = sessions[(int)lookupDeadlines.peek(0)];
            final int seq = (int)lookupDeadlines.peek(1);
            lookupDeadlines.poll();
            if (s != null && s.inFlight && s.opSeq == seq && s.phase == PHASE_PREFETCH_WAIT)
            {
                finishLookup(s);
            }
        }
    }

    private void expireBatches(final long now)
    {
        final long timeout = config.l3IoTimeout().toNanos();
        for (int b = 0; b < inflightCount; b++)
        {
            final TierIoBatch batch = inflight[b];
            if (batch.timedOut || now - batch.submittedNanos < timeout)
            {
                continue;
            }
            batch.timedOut = true;
            counters.increment(EngineCounter.L3_TIMEOUTS);
            LOG.log(System.Logger.Level.WARNING, "tier {0} has not finished a {1} of {2} keys after {3} ms; waiters get a miss, pages stay held until it answers",
                tiers.get(batch.tier).name(), TierIoBatch.opName(batch.op), batch.size, (now - batch.submittedNanos) / 1_000_000);
            for (int i = 0; i < batch.size; i++)
            {
                if (batch.status[i] != null)
                {
                    continue;
                }
                if (batch.op == TierIoBatch.READ)
                {
                    pageFlags[batch.page[i]] |= F_LOAD_ABANDONED;
                    wakeWaiters(batch.page[i], false);
                }
                else if (batch.op == TierIoBatch.EXISTS)
                {
                    answerProbe(batch, i);
                }
            }
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Shutdown
    // ------------------------------------------------------------------------------------------------

    void beginClosing()
    {
        closing = true;
    }

    int backupsInFlight()
    {
        return backupsInFlight;
    }

    @Override
    public void onShutdown()
    {
        stopped = true;
        for (int id = 1; id < sessions.length; id++)
        {
            final Session s = sessions[id];
            if (s != null && s.inFlight)
            {
                s.complete(RequestStatus.CLOSED);
            }
        }
    }
}
