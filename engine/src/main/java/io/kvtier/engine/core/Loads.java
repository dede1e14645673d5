package io.kvtier.engine.core;

import io.kvtier.client.pool.PageStateWord;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.collections.KeyTable;
import io.kvtier.client.pool.CountersDescriptor;
import io.kvtier.engine.EngineClock;
import io.kvtier.engine.events.PageEvents;
import io.kvtier.engine.index.PageIndex;
import io.kvtier.engine.pool.PageFrames;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;
import io.kvtier.spi.PageKey;
import io.kvtier.spi.TierStatus;

import java.util.Arrays;
import java.util.List;

/**
 * Loads from L3 into the pool, and the requests waiting for them. A load takes a free page (WRITING,
 * owned by the engine, bound to its key so that a second request for the key waits for the same load),
 * reads the key's frame into it through the first tier that holds it, and, once the tier's thread has
 * verified the frame, makes the page SERVING and wakes every request waiting on it. A frame that does
 * not verify is a miss: counted, removed from that tier, and tried in the next tier that holds it.
 *
 * <p>A load whose batch times out ({@link #abandon}) gives its waiters a miss and its key to a new
 * load; its page stays held, unseen, until the tier answers, and whatever the tier answers then is
 * never served: the page goes through quarantine, since a tier that was late may be later still.
 *
 * <p>Owns each page's load state and the waiter lists; a page's first pin after a load counts as an L3
 * hit, whoever started the load. Remembers, for the re-verification of recently loaded pages, which
 * tier each page came from and when it landed.
 */
final class Loads implements LoadTracker
{
    private static final System.Logger LOG = System.getLogger(Loads.class.getName());
    static final int NONE = -1;

    /** A waiter pins the page when it lands (acquire). */
    static final byte WAIT_PIN = 1;
    /** A waiter only wants to know it landed (prefetch that waits). */
    static final byte WAIT_NOTIFY = 2;

    private static final byte LOADING = 1;
    private static final byte ABANDONED = 2;
    private static final byte PREFETCH = 4;
    private static final byte LOADED_UNUSED = 8;
    /** The page's bytes came from L3: {@link #loadedAtNanos} says when. */
    private static final byte FROM_L3 = 16;

    /** Continues a request whose last awaited load ended. */
    interface WaitOver
    {
        /**
         * @param r a request whose {@code pending} reached zero
         */
        void waitOver(ClientRecord r);
    }

    private final PagePool pool;
    private final PageIndex index;
    private final EngineCounters counters;
    private final EngineClock clock;
    private final PageSpace space;
    private final List<String> tierNames;
    private final byte[] flags;
    private final int[] loadTier;
    /** The tiers each load has read from so far, bit t for tier t: a load tries each tier at most once. */
    private final int[] triedTiers;
    private final long[] loadedAtNanos;
    private final int[] waiterHead;
    private final int[] waiterClient;
    private final int[] waiterKey;
    private final int[] waiterSeq;
    private final byte[] waiterKind;
    private final int[] waiterNext;
    private int waiterFree;
    /** Set by {@link #loadFor} when it found no page: the acquire may wait for write-back evictions. */
    private boolean starvedForSpace;
    private final TierQueue io;
    private final SessionRecords sessions;
    private final EngineSteps steps;
    private final WaitOver continuation;

    Loads(final Residency residency, final EngineCounters counters, final EngineClock clock, final PageSpace space, final List<String> tierNames,
          final TierQueue io, final SessionRecords sessions, final EngineSteps steps, final WaitOver continuation)
    {
        this.io = io;
        this.sessions = sessions;
        this.steps = steps;
        this.continuation = continuation;
        this.pool = residency.pool();
        this.index = residency.index();
        this.counters = counters;
        this.clock = clock;
        this.space = space;
        this.tierNames = tierNames;
        final int pageCount = pool.pageCount();
        this.flags = new byte[pageCount];
        this.loadTier = new int[pageCount];
        this.triedTiers = new int[pageCount];
        this.loadedAtNanos = new long[pageCount];
        final int waiterCapacity = Math.max(4096, 2 * pageCount);
        this.waiterHead = new int[pageCount];
        Arrays.fill(waiterHead, NONE);
        this.waiterClient = new int[waiterCapacity];
        this.waiterKey = new int[waiterCapacity];
        this.waiterSeq = new int[waiterCapacity];
        this.waiterKind = new byte[waiterCapacity];
        this.waiterNext = new int[waiterCapacity];
        for (int i = 0; i < waiterCapacity; i++)
        {
            waiterNext[i] = i + 1 < waiterCapacity ? i + 1 : NONE;
        }
    }

    /** @return whether a load into the page is under way */
    boolean isLoading(final int page)
    {
        return (flags[page] & LOADING) != 0;
    }

    /**
     * A page's first pin after its load: counts as an L3 hit, whoever started the load.
     *
     * @return whether this is that first pin
     */
    @Override
    public boolean takeFirstUse(final int page)
    {
        if ((flags[page] & LOADED_UNUSED) != 0)
        {
            flags[page] &= ~LOADED_UNUSED;
            return true;
        }
        return false;
    }

    /**
     * @param page    a resident page
     * @param nowNanos the engine's time
     * @param window  how recent counts
     * @return whether its bytes came from L3 no longer than {@code window} ago
     */
    @Override
    public boolean loadedWithin(final int page, final long nowNanos, final long window)
    {
        return (flags[page] & FROM_L3) != 0 && nowNanos - loadedAtNanos[page] < window;
    }

    /** @return the tier a page was (last) read from */
    @Override
    public int tierOf(final int page)
    {
        return loadTier[page];
    }

    /** The page left the pool: whatever this part knew of it is stale. */
    void forget(final int page)
    {
        flags[page] = 0;
    }

    /** @return the page being loaded for the key of the index slot (not abandoned), else {@link #NONE} */
    @Override
    public int loadingPage(final int slot)
    {
        if (slot == KeyTable.NONE)
        {
            return NONE;
        }
        final int page = index.page(slot);
        if (page != PageIndex.NO_PAGE && (flags[page] & LOADING) != 0 && (flags[page] & ABANDONED) == 0)
        {
            return page;
        }
        return NONE;
    }

    /** @return whether the last {@link #loadFor} that returned {@link #NONE} found no free page */
    @Override
    public boolean starvedForSpace()
    {
        return starvedForSpace;
    }

    /**
     * @return the page a key not in the pool is loading into: a load already under way, or one started
     *         now from the first L3 tier that holds it; {@link #NONE} when L3 lacks it, a client is
     *         writing it, or no page can be had ({@link #starvedForSpace()})
     */
    @Override
    public int loadFor(final int slot, final long high, final long low, final boolean prefetch)
    {
        starvedForSpace = false;
        final int loading = loadingPage(slot);
        if (loading != NONE)
        {
            return loading;
        }
        if (slot == KeyTable.NONE || index.tiers(slot) == 0 || index.page(slot) != PageIndex.NO_PAGE)
        {
            return NONE;
        }
        final int tierBits = index.tiers(slot) & io.inServiceMask();
        if (tierBits == 0)
        {
            counters.increment(EngineCounter.L3_REFUSED); // every tier that holds it is out of service: a miss
            return NONE;
        }
        final int page = space.allocate();
        if (page == NONE)
        {
            starvedForSpace = true;
            return NONE;
        }
        final long word = pool.metadata().stateWordAcquire(page);
        pool.metadata().keyPlain(page, high, low);
        // The tag its L3 copies are stored under: the read asks for the object of that name, and the frame must carry it.
        pool.metadata().namespaceTagPlain(page, index.tierTag(slot));
        pool.metadata().reservationPlain(page, EngineConductor.ENGINE_OWNER, 0);
        pool.metadata().hitCountPlain(page, 0);
        pool.metadata().compareAndSetStateWord(page, word, PageStateWord.word(PageStateWord.generation(word), 0, PageStateWord.WRITING));
        index.bindPage(high, low, page);
        flags[page] = (byte)(LOADING | (prefetch ? PREFETCH : 0));
        final int tier = Integer.numberOfTrailingZeros(tierBits);
        loadTier[page] = tier;
        triedTiers[page] = 1 << tier;
        io.queuePageIo(tier, TierIoBatch.READ, page);
        counters.increment(EngineCounter.L3_READS);
        return page;
    }

    /** A tier answered the read of key {@code i} of a batch. */
    void onReadDone(final TierIoBatch batch, final int i)
    {
        final int page = batch.page[i];
        final TierStatus status = batch.status[i];
        final int tier = batch.tier;
        final long high = batch.keyHigh[i];
        final long low = batch.keyLow[i];
        if (batch.refused)
        {
            // Never handed to the tier (out of service): it may well hold the page, so its bit stays.
            retryOrGiveUp(page, high, low, tier);
            return;
        }
        final boolean abandoned = (flags[page] & ABANDONED) != 0;
        final boolean verified = status == TierStatus.OK && batch.check[i] == PageFrames.FrameCheck.VALID;
        if (verified && !abandoned)
        {
            final long word = pool.metadata().stateWordAcquire(page);
            pool.metadata().compareAndSetStateWord(page, word, PageStateWord.word(PageStateWord.generation(word), 0, PageStateWord.SERVING));
            index.events().stored(high, low, pool.metadata().namespaceTagPlain(page), PageEvents.POOL);
            if ((flags[page] & PREFETCH) != 0)
            {
                counters.increment(EngineCounter.PREFETCH_PAGES);
            }
            flags[page] = LOADED_UNUSED | FROM_L3;
            final long now = clock.nanoTime();
            loadedAtNanos[page] = now;
            space.touch(page, PoolSpace.NONE); // its chain is heard when the waiting acquire pins it
            pool.metadata().lastAccessPlain(page, now);
            counters.increment(EngineCounter.L3_PAGES_LOADED);
            counters.addTier(tier, CountersDescriptor.TIER_HITS, 1);
            counters.add(EngineCounter.L3_BYTES_READ, pool.frameLength());
            if (batch.isStaged())
            {
                counters.increment(EngineCounter.L3_STAGED_READS);
            }
            wake(page, true);
            return;
        }
        if (verified)
        {
            // The late answer to a read its batch's timeout gave up on: whatever the page holds now, it is
            // never served. The object is fine, so the tier keeps its bit.
            release(page, high, low, true);
            return;
        }
        // Not a usable frame: count why, forget that this tier has it, try another tier or give the page back.
        switch (status)
        {
            case OK, CORRUPT ->
            {
                counters.increment(EngineCounter.L3_CORRUPT);
                LOG.log(System.Logger.Level.WARNING, "tier {0}: page {1} failed verification ({2}); treated as a miss and removed",
                    tierNames.get(tier), new PageKey(high, low), status == TierStatus.OK ? batch.check[i] : "tier reported corrupt");
                io.queueKeyIo(tier, TierIoBatch.REMOVE, high, low, batch.tag[i], EngineConductor.ENGINE_OWNER, 0, 0);
            }
            case NOT_FOUND ->
            {
                counters.increment(EngineCounter.L3_READ_MISSES);
                counters.addTier(tier, CountersDescriptor.TIER_MISSES, 1);
            }
            default -> counters.increment(EngineCounter.L3_ERRORS);
        }
        index.removeTier(high, low, tier);
        final boolean uncertain = status != TierStatus.OK && status != TierStatus.CORRUPT && status != TierStatus.NOT_FOUND;
        if (uncertain)
        {
            // The tier may still hold the object the index just let go of: it is found again by probing.
            steps.indexMayMiss(tier, "a read ended with its outcome unknown (an error or a timeout), and the index let go of its copy");
        }
        if (abandoned || uncertain)
        {
            // The tier did not say it is done with the segment (error, timeout, plugin failure), or was
            // late: no other tier is tried for this load, and the page rests before reuse.
            release(page, high, low, true);
            return;
        }
        retryOrGiveUp(page, high, low, tier);
    }

    /**
     * Reads the page from the next tier in service that holds its key and this load has not tried; or,
     * when none does, answers the waiters with a miss and gives the page back.
     */
    private void retryOrGiveUp(final int page, final long high, final long low, final int tier)
    {
        final int slot = index.find(high, low);
        triedTiers[page] |= 1 << tier;
        // Any tier not tried yet, not only those after this one: a migration may have moved the page to
        // a tier before it (and removed it from this one) while the read was on its way. A tier out of
        // service keeps its bit, and must not be tried again by this load.
        final int untried = slot == KeyTable.NONE ? 0 : index.tiers(slot) & io.inServiceMask() & ~triedTiers[page];
        if (untried != 0 && (flags[page] & ABANDONED) == 0)
        {
            final int next = Integer.numberOfTrailingZeros(untried);
            triedTiers[page] |= 1 << next;
            loadTier[page] = next;
            io.queuePageIo(next, TierIoBatch.READ, page);
            counters.increment(EngineCounter.L3_READS);
            return;
        }
        release(page, high, low, false);
    }

    /** Ends a load without a page: its waiters get a miss, the page is free again (after quarantine, when told). */
    private void release(final int page, final long high, final long low, final boolean quarantine)
    {
        wake(page, false);
        final long word = pool.metadata().stateWordAcquire(page);
        if (!pool.metadata().compareAndSetStateWord(page, word, PageStateWord.word(PageStateWord.generation(word) + 1, 0, PageStateWord.FREE)))
        {
            throw new IllegalStateException("loading page " + page + " changed under the engine");
        }
        index.unbindPage(high, low, page);
        flags[page] = 0;
        if (quarantine)
        {
            space.quarantine(page);
        }
        else
        {
            space.free(page);
            space.resumeSpaceWaiters();
        }
    }

    /**
     * The tier is late with the page's read: its waiters get a miss now, the key is free for a new load
     * (from another tier, or this one once it serves again), and the page waits, unseen, for the answer.
     */
    void abandon(final int page)
    {
        if ((flags[page] & ABANDONED) != 0)
        {
            return;
        }
        flags[page] |= ABANDONED;
        index.unbindPage(pool.metadata().keyHighPlain(page), pool.metadata().keyLowPlain(page), page);
        wake(page, false);
    }

    /**
     * Makes a request wait for a load.
     *
     * @return false when the waiter table is full
     */
    @Override
    public boolean addWaiter(final int page, final ClientRecord r, final int key, final byte kind)
    {
        if (waiterFree == NONE)
        {
            return false;
        }
        final int node = waiterFree;
        waiterFree = waiterNext[node];
        waiterClient[node] = r.id;
        waiterKey[node] = key;
        waiterSeq[node] = r.opSeq;
        waiterKind[node] = kind;
        waiterNext[node] = waiterHead[page];
        waiterHead[page] = node;
        return true;
    }

    private void wake(final int page, final boolean loaded)
    {
        int node = waiterHead[page];
        waiterHead[page] = NONE;
        while (node != NONE)
        {
            final int next = waiterNext[node];
            final ClientRecord r = sessions.record(waiterClient[node]);
            final int key = waiterKey[node];
            if (r.awaits(waiterSeq[node]) && r.status[key] == PageEntryStatus.WAITING)
            {
                if (!loaded)
                {
                    r.status[key] = (byte)PageEntryStatus.MISS;
                }
                else if (waiterKind[node] == WAIT_PIN)
                {
                    if (!steps.pin(r, key, page, PageEntryStatus.PINNED_FROM_L3))
                    {
                        r.status[key] = (byte)PageEntryStatus.MISS;
                    }
                }
                else
                {
                    r.status[key] = (byte)PageEntryStatus.LOADED;
                }
                if (--r.pending == 0)
                {
                    continuation.waitOver(r);
                }
            }
            waiterNext[node] = waiterFree;
            waiterFree = node;
            node = next;
        }
    }
}
